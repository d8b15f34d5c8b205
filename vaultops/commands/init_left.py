"""What ``vaultops init`` left out of its commit, said after it: the person's own files it did not commit (a
template's folders, their notes), and what git ignores on purpose (this machine's ``local.toml`` and state).

Init commits only its own files (``init_commit``); without these lines a new user cannot tell whether the
rest of the vault reached the other machines (it did not) or where the per-machine settings go.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from vaultops.base.layout import CONFIG_FILE, LOCAL_FILE, STATE_DIR
from vaultops.sync.git import Git, GitError

SHOWN = 8  # paths named; the rest counted


def _listed(paths: Sequence[str]) -> str:
    more = len(paths) - SHOWN
    return ", ".join(paths[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def status_paths(porcelain: str) -> tuple[list[str], list[str]]:
    """(untracked, changed) paths in ``git status --porcelain -z`` output (a rename's old name skipped)."""
    untracked: list[str] = []
    changed: list[str] = []
    entries = porcelain.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code[0] in "RC":
            i += 1  # -z gives a rename's source as the next entry
        if code == "??":
            untracked.append(path)
        elif code != "!!":
            changed.append(path)
    return untracked, changed


def left_lines(root: Path, own: Sequence[str]) -> list[str]:
    """A line per kind of thing init left out of git; none outside a git repository."""
    git = Git(root)
    try:
        if not git.is_repo():
            return []
        proc = git.run("status", "--porcelain", "-z", "--untracked-files=normal", check=False)
    except (GitError, OSError, subprocess.SubprocessError):
        return []
    untracked, changed = status_paths(proc.stdout)
    untracked = [p for p in untracked if p not in own]
    changed = [p for p in changed if p not in own]
    lines = []
    if untracked:
        lines.append(
            f"not committed, left as they were (yours: commit them for your other machines to get them): "
            f"{_listed(untracked)}"
        )
    if changed:
        lines.append(f"left your uncommitted changes as they were: {_listed(changed)}")
    local = "holds" if (root / LOCAL_FILE).is_file() else "is where to put"
    lines.append(
        f"not in git, on purpose: {LOCAL_FILE} {local} this machine's own settings (tokens, chat ids: "
        f"`vaultops link-chat telegram` writes them), and {STATE_DIR}/ its ledger and logs; shared settings "
        f"go in {CONFIG_FILE}"
    )
    return lines
