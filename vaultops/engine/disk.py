"""The real ``Notes`` port (``engine.ports``): the note writer for the disk, git for HEAD's version, the vault
for the plan notes.  What the engine does with a note is spread over those three today; this gathers it
in one place so that the contract suite (``tests/contract``) can hold it against the in-memory twin."""

from __future__ import annotations

from vaultops.store.notes import NoteWriter, read_raw
from vaultops.sync.git import Git
from vaultops.vault import Vault


class DiskNotes:
    def __init__(self, vault: Vault, writer: NoteWriter, git: Git) -> None:
        self.vault = vault
        self.writer = writer
        self.git = git

    def read(self, rel: str) -> bytes | None:
        path = self.vault.resolve(rel)
        try:
            return read_raw(path, max_bytes=self.writer.max_bytes, rel=rel)
        except FileNotFoundError:
            return None

    def head_version(self, rel: str) -> tuple[str | None, bytes | None]:
        # as Publisher.head_version reads it: the commit first, then the note in that very commit
        head = self.git.rev("HEAD")
        return head, self.git.blob(head, rel)

    def replace(self, rel: str, expected: bytes | None, new: bytes) -> bool:
        return self.writer.replace(rel, expected, new)

    def plan_notes(self) -> list[str]:
        return self.vault.plan_notes()
