"""The two sides of every contract case: the real adapters (a bare git repository on disk and clones made
with ``git``, the note writer on a vault copied from ``vault-template/``, state.db in a file, the strict
Telegram Bot API on 127.0.0.1, the dispatcher running ``fixtures/bin/fake-agent``) and their in-memory
twins (``vaultops.engine.memory``).  A case sees only the ports (``vaultops.engine.ports``) and the few
things a person or another machine does, which each side does its own way (``Machine.save``)."""

from __future__ import annotations

import subprocess
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.support.helpers import INBOX, git, make_vault
from tests.support.paths import REPO
from vaultops.engine.disk import DiskNotes
from vaultops.engine.memory import MemoryClone, MemoryNotes, MemoryOrigin, MemoryRemote
from vaultops.engine.ports import Notes, Remote
from vaultops.store.notes import NoteWriter
from vaultops.sync.git import Git
from vaultops.sync.remote import Remote as GitRemote
from vaultops.vault import Vault

# One request, with nothing said under it yet: what each machine claims.
INBOX_TEXT = (
    "# Inbox\n\n## REQ-a Is git here?\n- type: env-check\n- ready: yes\nIs git installed? `which git`\n"
)


@dataclass
class Machine:
    """One clone as the engine sees it (its remote and its notes), and what the person does there."""

    remote: Remote
    notes: Notes
    save: Callable[[str, bytes], None]  # the person saves a note (Obsidian): on disk, in no commit
    commit: Callable[[str], None]  # the person commits a note as it is on disk (obsidian-git)
    name: str = "agent0"
    host: str = "host0"


class Machines(ABC):
    """A remote and the clones of it a case makes."""

    made: list[Machine]

    @abstractmethod
    def clone(self) -> Machine: ...

    @abstractmethod
    def tip(self) -> str | None:
        """The remote's branch now."""

    @abstractmethod
    def at_tip(self, rel: str) -> bytes | None:
        """A file as the remote's tip holds it."""

    @abstractmethod
    def in_history(self, sha: str) -> bool:
        """The commit is in the tip's history."""

    @abstractmethod
    def rewrite(self, sha: str) -> None:
        """Someone force-pushes: the branch is ``sha`` now."""

    @abstractmethod
    def cut(self) -> None:
        """The remote can no longer be reached."""

    @abstractmethod
    def refuse(self, reason: str) -> None:
        """The remote refuses every push from now on, saying ``reason`` (a hook)."""


def template_files(inbox: str) -> dict[str, bytes]:
    """The files ``make_vault`` commits, for the twin's first commit."""
    root = REPO / "vault-template"
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    files[INBOX] = inbox.encode()
    files[".vaultops/local.toml"] = b""
    return files


class GitMachines(Machines):
    def __init__(self, root: Path, inbox: str = INBOX_TEXT) -> None:
        self.root = root
        seed = make_vault(root / "seed", inbox, fake_profiles=False)
        self.branch = git(seed, "symbolic-ref", "--short", "HEAD").strip()
        self.bare = root / "remote.git"
        git(root, "init", "-q", "--bare", str(self.bare))
        git(self.bare, "symbolic-ref", "HEAD", f"refs/heads/{self.branch}")
        git(seed, "push", "-q", str(self.bare), f"HEAD:refs/heads/{self.branch}")
        self.made = []

    def clone(self) -> Machine:
        i = len(self.made)
        path = self.root / f"machine{i}"
        git(self.root, "clone", "-q", str(self.bare), str(path))
        vault = Vault.open(path)
        repo = Git(path)
        remote = GitRemote(repo, "origin", self.branch)

        def save(rel: str, raw: bytes) -> None:
            (path / rel).parent.mkdir(parents=True, exist_ok=True)
            (path / rel).write_bytes(raw)

        def commit(rel: str) -> None:
            git(path, "add", "--", rel)
            git(path, "commit", "-qm", "person", "--", rel)

        notes = DiskNotes(vault, NoteWriter(vault), repo)
        machine = Machine(remote, notes, save, commit, f"agent{i}", f"host{i}")
        self.made.append(machine)
        return machine

    def tip(self) -> str | None:
        proc = subprocess.run(
            ["git", "rev-parse", "-q", "--verify", f"refs/heads/{self.branch}"],
            cwd=self.bare, capture_output=True, text=True, check=False,
        )  # fmt: skip
        return proc.stdout.strip() or None

    def at_tip(self, rel: str) -> bytes | None:
        proc = subprocess.run(
            ["git", "cat-file", "blob", f"refs/heads/{self.branch}:{rel}"],
            cwd=self.bare,
            capture_output=True,
            check=False,
        )
        return proc.stdout if proc.returncode == 0 else None

    def in_history(self, sha: str) -> bool:
        proc = subprocess.run(
            ["git", "merge-base", "--is-ancestor", sha, f"refs/heads/{self.branch}"], cwd=self.bare,
            capture_output=True, check=False,
        )  # fmt: skip
        return proc.returncode == 0

    def rewrite(self, sha: str) -> None:
        git(self.bare, "update-ref", f"refs/heads/{self.branch}", sha)

    def cut(self) -> None:
        self.bare.rename(self.bare.with_name("remote-gone.git"))

    def refuse(self, reason: str) -> None:
        hook = self.bare / "hooks" / "pre-receive"
        hook.write_text(f"#!/bin/sh\necho '{reason}' >&2\nexit 1\n")
        hook.chmod(0o755)


class MemoryMachines(Machines):
    def __init__(self, inbox: str = INBOX_TEXT) -> None:
        self.origin = MemoryOrigin(template_files(inbox))
        self.made = []

    def clone(self) -> Machine:
        i = len(self.made)
        clone = MemoryClone.of(self.origin)
        notes = MemoryNotes(clone)

        def commit(rel: str) -> None:
            clone.person_commit([rel])

        machine = Machine(MemoryRemote(clone), notes, notes.save, commit, f"agent{i}", f"host{i}")
        self.made.append(machine)
        return machine

    def tip(self) -> str | None:
        return self.origin.tip

    def at_tip(self, rel: str) -> bytes | None:
        return self.origin.tree(self.origin.tip).get(rel)

    def in_history(self, sha: str) -> bool:
        return sha in self.origin.history(self.origin.tip)

    def rewrite(self, sha: str) -> None:
        self.origin.rewrite(sha)

    def cut(self) -> None:
        self.origin.reachable = False

    def refuse(self, reason: str) -> None:
        self.origin.refusal = reason


def machines(side: str, root: Path, inbox: str = INBOX_TEXT) -> Machines:
    return GitMachines(root, inbox) if side == "real" else MemoryMachines(inbox)
