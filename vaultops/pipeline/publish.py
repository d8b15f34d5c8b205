"""Getting a pass's writes into git: commits on this clone, and, with a remote, through it.

With a remote, the remote decides between machines: claims (and the errors and escalations written with
them) are a compare-and-swap push made before any job starts.  Results go the same way: pushed first,
then written to the note, so that another tool resetting this clone's working tree (obsidian-git's
`rebase --abort`) cannot lose them; when that push cannot be made, they are written, committed and
pushed, and a push that finds the remote moved pulls and replays them.  Without a remote,
or with ``[git] push = false``, everything is committed on this clone only.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from vaultops.model import PassOutcome
from vaultops.record import render
from vaultops.scan.note import ParsedNote
from vaultops.store.inserts import Applied, Insert, edits_for
from vaultops.store.notes import splice
from vaultops.sync.git import Git, GitError
from vaultops.sync.remote import Pulled, Pushed, Remote
from vaultops.vault import Vault

PUSH_ATTEMPTS = 5


def with_inserts(note: ParsedNote, inserts: Sequence[Insert]) -> tuple[bytes, Applied]:
    """The note's bytes with ``inserts`` placed, as the note writer would place them.  Pure."""
    applied = Applied()
    edits = edits_for(note, inserts, applied)
    return splice(note.raw, note.text.newline, edits), applied


class Publisher:
    """Lives as long as the daemon (or one tick): it remembers what could not be committed or pushed
    yet, and whether the remote answered."""

    def __init__(self, vault: Vault, git: Git, remote: Remote | None) -> None:
        self.vault = vault
        self.git = git
        self.remote = remote
        self.online = True
        self.blocked = ""
        self.ahead = False  # commits of this clone that the remote does not have yet
        self.fetched_at = float("-inf")
        self.uncommitted: set[str] = set()  # paths an earlier pass wrote and could not commit
        self._said: set[str] = set()

    @classmethod
    def open(cls, vault: Vault) -> Publisher:
        git = Git(vault.root)
        remote = None
        if vault.config.git.push and git.is_repo():
            remote = Remote.of(git, vault.config.git.remote, vault.rendered_paths)
        return cls(vault, git, remote)

    @property
    def shared(self) -> bool:
        return self.remote is not None

    @property
    def through_remote(self) -> bool:
        """Claims go through the remote now (it answered, and this clone is at its tip)."""
        return self.remote is not None and self.online and not self.blocked

    def may_claim(self) -> bool:
        return self.remote is None or self.through_remote or self.vault.config.git.claim_offline

    # --- pull -----------------------------------------------------------------------------------

    def pull(self, warnings: list[str], *, max_age: float = 0.0) -> Pulled | None:
        """Fetch and follow the remote (at most every ``max_age`` seconds); say once when it cannot be
        reached or followed, and once when it can again."""
        if self.remote is None or time.monotonic() - self.fetched_at < max_age:
            return None
        pulled = self.remote.pull()
        self.fetched_at = time.monotonic()
        self.online, self.blocked, self.ahead = pulled.online, pulled.blocked, pulled.ahead
        if not pulled.online:
            claims = "claims go on" if self.vault.config.git.claim_offline else "nothing is claimed"
            self._say(warnings, f"{pulled.reason}: {claims} until it answers ([git] claim_offline)")
        elif pulled.blocked:
            self._say(warnings, f"cannot follow {self.remote.name}: {pulled.blocked}; nothing is claimed")
        elif self._said:
            self._said.clear()
            warnings.append(f"{self.remote.name} answers again; claims go through it")
        _tell_replayed(pulled, warnings)
        if self.ahead and self.through_remote:
            self.push(warnings)
        return pulled

    def _say(self, warnings: list[str], line: str) -> None:
        if line not in self._said:
            self._said = {line}
            warnings.append(line)

    # --- claims: compare-and-swap -----------------------------------------------------------------

    def head_version(self, rel: str) -> tuple[str | None, bytes | None]:
        """This clone's HEAD, and the note's bytes in it (None when it is not there)."""
        head = self.git.rev("HEAD")
        return head, self.git.blob(head, rel)

    def swap(self, rel: str, raw: bytes, message: str, head: str | None, stage: str = "claim") -> Pushed:
        assert self.remote is not None
        return self.remote.swap({rel: raw}, message, self.vault.agent, head, stage)

    def adopt(self, pushed: Pushed, old_head: str | None, paths: list[str]) -> None:
        assert self.remote is not None
        self.remote.adopt(pushed.sha, old_head, paths)

    def merge_through(self) -> None:
        assert self.remote is not None
        self.remote.merge_through()

    # --- results: commit, then push ---------------------------------------------------------------

    def commit(
        self, written: Sequence[str], outcomes: Sequence[PassOutcome], warnings: list[str]
    ) -> str | None:
        """Commit what a pass wrote and what earlier ones could not (a git that crashed on a note being
        rewritten, say), then push it; what still fails waits for the next pass."""
        paths = sorted({*written, *self.uncommitted})
        sha = None
        busy = self.git.busy() if paths and self.git.is_repo() else ""
        if busy:
            # committing into someone else's rebase or merge would tangle their history with ours
            self._say(
                warnings, f"not committing yet: {busy}; the lines are in the notes and are committed later"
            )
            self.uncommitted.update(paths)
            return None
        if paths:
            try:
                message = render.commit_message(outcomes or [PassOutcome("vaultops", "recorded", "")])
                sha = self.git.commit_paths(paths, message, self.vault.agent).sha
            except GitError as exc:
                warnings.append(f"could not commit: {exc}; it is tried again on the next pass")
                self.uncommitted.update(paths)
                return None
            self.uncommitted.clear()
            self.ahead = self.ahead or sha is not None
        if self.ahead and self.through_remote:
            self.push(warnings)
        return sha

    def push(self, warnings: list[str]) -> None:
        assert self.remote is not None
        for _ in range(PUSH_ATTEMPTS):
            pushed = self.remote.push()
            if pushed.kind == "pushed":
                self.ahead = False
                return
            if pushed.kind == "failed":
                self._say(warnings, f"could not push: {pushed.detail}; it is pushed on a later pass")
                return
            pulled = self.remote.pull()  # someone pushed first: follow, replaying these commits on top
            self.online, self.blocked = pulled.online, pulled.blocked
            _tell_replayed(pulled, warnings)
            if not self.through_remote:
                return
        warnings.append(f"the remote kept moving; pushing again on the next pass ({PUSH_ATTEMPTS} tries)")


def _tell_replayed(pulled: Pulled, warnings: list[str]) -> None:
    for rid in pulled.late:
        warnings.append(
            f"{rid}: its claim was taken over on another machine before its result arrived; "
            "the result is kept as a late result"
        )
    warnings.extend(pulled.dropped)
