"""A renamed or moved inbox: where it seems to be now, and the one setting to change.

The inbox's path is in the shared config (``[inbox] path`` in .vaultops/config.toml).  When the note it
names is gone, the person has most likely renamed or moved it in Obsidian; `vaultops init` would then make
a second, empty inbox beside it, so it is never advised here.  Instead the pass looks for where the inbox
went and names the exact line to put in the config, once in the log, in this machine's problems (its note,
the dashboard, the channels).

vaultops does not follow the note by itself, on purpose: every machine and the phone read the shared
config, and a machine that ran requests from a note the config does not name would disagree with a machine
that has not pulled the rename yet, or take a note that only looks like an inbox (an archive of finished
requests) for it.  The config heals (``daemon.reload``): the line changed and pushed from anywhere, every
machine follows it with no restart.

Where the inbox went, most certain first:
  1. git saw it renamed (``git log -M`` over HEAD's last ``RENAMES_LOOKED_AT`` commits, renames followed
     one after another), and the note it became is there;
  2. else exactly one note outside the queue folder and vaultops's own notes holds request blocks with
     vaultops's own lines under them (a lock or a status line): an inbox vaultops has worked in.  A note
     that merely mentions ``REQ-``, or holds request headings vaultops never wrote under, is not one; two
     such notes name neither.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import PurePosixPath

from vaultops.base.copies import copies_in
from vaultops.base.errors import VaultopsError
from vaultops.base.layout import CONFIG_FILE
from vaultops.engine.ports import Repo
from vaultops.scan.note import ParsedNote
from vaultops.store.notes import NoteWriter
from vaultops.sync.git import Git
from vaultops.vault import Vault, is_ignored

RENAMES_LOOKED_AT = 50  # commits
NOTES_LOOKED_AT = 5000  # notes read at most when git knows of no rename: a pass stays bounded
HEADING = b"## REQ-"  # a note without it holds no request block, and is not parsed

Reader = Callable[[str], ParsedNote | None]


@dataclass(frozen=True, slots=True)
class Gone:
    """The configured inbox is not there; ``found``: where it seems to be now, and ``how`` that was seen."""

    inbox: str
    found: str | None = None
    how: str = ""

    def sentence(self) -> str:
        setting = f'`[inbox] path = "{self.found or "<its new path>"}"` in {CONFIG_FILE}'
        if self.found is not None:
            return (
                f"{self.inbox}: the inbox is not there; {self.how} {self.found}. vaultops does not follow it "
                f"by itself: to make it the inbox, set {setting} and push it (no restart needed)"
            )
        return (
            f"{self.inbox}: the inbox is not there. If you renamed or moved it, set {setting}; "
            "otherwise create the note"
        )


def inbox_gone(vault: Vault, repo: Repo, read: Reader) -> Gone | None:
    """The configured inbox's absence, with where it went when that can be told; None while it is there."""
    inbox = vault.inbox_rel
    try:
        if vault.resolve(inbox).exists():
            return None
    except VaultopsError:  # a path outside the vault: reading it said so already
        return None
    renamed = followed(inbox, repo.renames(RENAMES_LOOKED_AT) if repo.is_repo() else [])
    if renamed != inbox and _exists(vault, renamed):
        return Gone(inbox, renamed, "git saw it renamed to")
    found = list(islice(_worked_in(vault, read), 2))
    if len(found) == 1:
        return Gone(inbox, found[0], "vaultops's request lines are now in")
    return Gone(inbox)


def gone_here(vault: Vault) -> Gone | None:
    """``inbox_gone`` for a command outside a pass (``status``, ``doctor``): this clone's git and notes."""
    return inbox_gone(vault, Git(vault.root), NoteWriter(vault).read)


def followed(path: str, renames: list[tuple[str, str]]) -> str:
    """Where ``path`` is after ``renames`` (oldest first), each one after another: A→B then B→C is C."""
    for old, new in renames:
        if old == path:
            path = new
    return path


def earlier(path: str, renames: list[tuple[str, str]]) -> tuple[str, ...]:
    """The names ``path`` had before ``renames`` (oldest first) made it ``path``, the latest first: C after
    A→B, B→C is (B, A).  vaultops's records of its lines in a note are kept by the note's path
    (``engine.provenance``): a moved inbox's are found under these."""
    found: list[str] = []
    for old, new in reversed(renames):
        if new == path and old not in found:
            found.append(old)
            path = old
    return tuple(found)


def _exists(vault: Vault, rel: str) -> bool:
    try:
        return vault.resolve(rel).is_file()
    except VaultopsError:  # outside the vault (through a symlink): never an inbox
        return False


def _worked_in(vault: Vault, read: Reader) -> Iterator[str]:
    """The notes, outside the queue folder and vaultops's own, whose request blocks vaultops wrote under."""
    theirs = (f"{vault.config.queue.folder.rstrip('/')}/", *vault.rendered_paths)
    for rel in _notes(vault):
        if rel.startswith(theirs) or not _has_heading(vault, rel):
            continue
        try:
            note = read(rel)
        except VaultopsError:  # too big, unreadable: not the inbox this pass can tell of
            continue
        if note is not None and any(r.locks or r.statuses for r in note.requests):
            yield rel


def _notes(vault: Vault) -> Iterator[str]:
    """The vault's notes (``*.md``), in name order, sync tools' conflict copies and ignored folders left out;
    at most ``NOTES_LOOKED_AT``."""
    seen = 0
    for folder, dirs, files in os.walk(vault.root):
        here = PurePosixPath(os.path.relpath(folder, vault.root))
        dirs[:] = sorted(d for d in dirs if not is_ignored((here / d / "x.md").as_posix()))
        names = [f for f in files if f.endswith(".md")]
        copies = copies_in(names)
        for name in sorted(n for n in names if n not in copies):
            rel = (here / name).as_posix() if here.parts else name
            if is_ignored(rel):
                continue
            seen += 1
            if seen > NOTES_LOOKED_AT:
                return
            yield rel


def _has_heading(vault: Vault, rel: str) -> bool:
    try:
        with open(vault.resolve(rel), "rb") as note:
            return HEADING in note.read(int(vault.config.inbox.max_mb * 1_000_000))
    except (OSError, VaultopsError):
        return False
