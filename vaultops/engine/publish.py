"""Getting a pass's writes into git: commits on this clone, and, with a remote, through it.

With a remote, the remote decides between machines: claims (and the errors and escalations written with
them) are a compare-and-swap push made before any job starts.  Results go the same way: pushed first,
then written to the note, so that another tool resetting this clone's working tree (obsidian-git's
`rebase --abort`) cannot lose them; when that push cannot be made, they are written, committed and
pushed, and a push that finds the remote moved pulls and replays them.  Without a remote,
or with ``[git] push = false``, everything is committed on this clone only.

A remote that cannot be reached, or that refuses what vaultops pushes (a hook, a protected branch), is an
incident: said once in one sentence when it begins and once when it ends, and kept in state.db for
``status`` and ``tick`` (``remote_problem``).  Losing a push race to another machine is not one.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vaultops.base.errors import VaultopsError
from vaultops.engine import ports
from vaultops.model import PassOutcome
from vaultops.render import results
from vaultops.scan.note import ParsedNote
from vaultops.store import kept
from vaultops.store.inserts import Applied, Insert, edits_for
from vaultops.store.notes import splice
from vaultops.store.state import StateDB, StateError
from vaultops.sync.git import Git, GitError
from vaultops.sync.remote import Pulled, Pushed, Remote
from vaultops.vault import Vault

PUSH_ATTEMPTS = 5
PROBLEM_KEY = "remote-problem"  # state.db: the remote problem under way, as JSON
# A remote that cannot be reached is asked again after these many seconds, doubled each time (a hanging
# one costs a whole NETWORK_TIMEOUT per fetch): a save meanwhile is handled without waiting for it.
RETRY_FIRST = 15.0
RETRY_MAX = 120.0


@dataclass(frozen=True)
class RemoteProblem:
    """The remote cannot be reached, or refuses this machine's pushes."""

    kind: str  # "unreachable" | "refused"
    sentence: str  # what the person is told
    since: float  # when it began (time.time())
    seen: float  # when a pass last found it (each process, once)


def remote_problem(state: StateDB) -> RemoteProblem | None:
    """The remote problem the last pass on this machine found, or None."""
    try:
        doc = json.loads(state.get(PROBLEM_KEY) or "null")
        return RemoteProblem(str(doc["kind"]), str(doc["sentence"]), float(doc["since"]), float(doc["seen"]))
    except (TypeError, KeyError, ValueError):
        return None


def with_inserts(note: ParsedNote, inserts: Sequence[Insert]) -> tuple[bytes, Applied]:
    """The note's bytes with ``inserts`` placed, as the note writer would place them.  Pure."""
    applied = Applied()
    edits = edits_for(note, inserts, applied)
    return splice(note.raw, note.text.newline, edits), applied


class Publisher:
    """Lives as long as the daemon (or one tick): it remembers what could not be committed or pushed
    yet, and whether the remote answered."""

    def __init__(self, vault: Vault, git: ports.Repo, remote: ports.Remote | None) -> None:
        self.vault = vault
        self.git = git
        self.remote = remote
        self.online = True
        self.blocked = ""
        self.ahead = False  # commits of this clone that the remote does not have yet
        self.fetched_at = float("-inf")
        # paths an earlier pass (of this process, or of one that stopped since) wrote and could not commit
        # (one that is gone since would fail every commit: it is left out)
        kept_paths = self._kept_uncommitted().get("paths", [])
        self.uncommitted: set[str] = {
            p for p in kept_paths if isinstance(p, str) and (vault.root / p).exists()
        }
        self._said: set[str] = set()
        self.problem: RemoteProblem | None = None  # the remote problem under way, said once
        self._stored: RemoteProblem | None = None  # as state.db has it (read when first needed)
        self._stored_read = False
        self._pending: list[str] = []  # said by a claim's push, for the pass's next warnings
        self._retry = 0.0  # seconds before an unreachable remote is fetched from again
        self.batch = 0.0  # seconds drawn notes may wait for a commit (a daemon's ``[git] batch``)
        self.held_since: float | None = None  # when drawn notes began to wait (monotonic)
        self.held: set[str] = set()  # the drawn notes waiting

    def hold(self, paths: Sequence[str]) -> bool:
        """Keep ``paths`` (notes vaultops draws: the daily note, the dashboard) for a later commit, unless
        they have waited ``batch`` seconds already.  True when held."""
        now = time.monotonic()
        if not self.batch or (self.held_since is not None and now - self.held_since >= self.batch):
            return False
        if self.held_since is None:
            self.held_since = now
        self.held |= set(paths)
        self._keep_uncommitted({*self.uncommitted, *paths})
        return True

    def _kept_path(self) -> Path:
        return kept.path_for(self.vault.state_dir, "uncommitted", "publisher")

    def _kept_uncommitted(self) -> dict[str, Any]:
        return kept.load(self._kept_path())

    def _keep_uncommitted(self, paths: set[str]) -> None:
        """What could not be committed, kept on disk: the next ``tick`` commits it, not only this process."""
        self.uncommitted = paths
        if paths:
            kept.save(self._kept_path(), {"paths": sorted(paths)})
        else:
            self._kept_path().unlink(missing_ok=True)

    @classmethod
    def open(cls, vault: Vault) -> Publisher:
        git = Git(vault.root)
        remote: Remote | None = None
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
        if self.remote is None or time.monotonic() - self.fetched_at < max(max_age, self._retry):
            return None
        pulled = self._follow(warnings)
        if self.ahead and self.through_remote:
            self.push(warnings)
        return pulled

    def _follow(self, warnings: list[str]) -> Pulled:
        assert self.remote is not None
        warnings += self._pending
        self._pending.clear()
        pulled = self.remote.pull()
        self.fetched_at = time.monotonic()
        self.online, self.blocked, self.ahead = pulled.online, pulled.blocked, pulled.ahead
        name = self.remote.name
        if pulled.stopped:
            pass  # given up on to stop: the remote is not at fault
        elif not pulled.online:
            self._trouble("unreachable", self._unreachable(pulled.reason), warnings)
            self._retry = min(max(2 * self._retry, RETRY_FIRST), RETRY_MAX)
        else:
            self._retry = 0.0
            self._fine(("unreachable",), warnings)
            if pulled.blocked:
                self._say(warnings, f"cannot follow {name}: {pulled.blocked}; nothing is claimed")
            elif self._said:
                self._said.clear()
                warnings.append(f"vaultops follows {name} again; claims go through it")
        _tell_replayed(pulled, warnings)
        return pulled

    # --- remote problems: one incident, said once ------------------------------------------------

    def _unreachable(self, reason: str) -> str:
        assert self.remote is not None
        held = (
            "claims go on ([git] claim_offline) but nothing is pushed"
            if self.vault.config.git.claim_offline
            else "nothing is claimed or pushed"
        )
        fetch = f"git fetch {self.remote.name}"
        return f"{reason}: {held} until it answers; check that `{fetch}` works in this clone"

    def _refused(self, detail: str) -> str:
        assert self.remote is not None
        return (
            f"{detail}; nothing this machine writes reaches {self.remote.name} until it takes the push: "
            f"do what its message asks, or ask whoever runs {self.remote.name}"
        )

    def _pushed(self, pushed: Pushed, warnings: list[str]) -> None:
        """What a push says about the remote: it works, or a problem (a race is neither)."""
        if pushed.kind == "pushed":
            self._fine(("unreachable", "refused"), warnings)
        elif pushed.problem == "refused":
            self._trouble("refused", self._refused(pushed.detail), warnings)
        elif pushed.problem == "unreachable":
            self._trouble("unreachable", self._unreachable(pushed.detail), warnings)

    def _trouble(self, kind: str, sentence: str, warnings: list[str]) -> None:
        """Say ``sentence`` when this problem begins (a different kind of problem is a new one), and keep
        it in state.db for ``status``; while it lasts, only its wording is kept up to date."""
        now = time.time()
        old = self.problem
        if old is not None and old.kind == kind:
            if old.sentence != sentence:
                self.problem = replace(old, sentence=sentence)
                self._store(self.problem)
            return
        stored = self._stored_problem()
        since = stored.since if stored is not None and stored.kind == kind else now
        self.problem = RemoteProblem(kind, sentence, since, now)
        warnings.append(sentence)
        self._store(self.problem)

    def _fine(self, kinds: tuple[str, ...], warnings: list[str]) -> None:
        """The remote answered (or took a push): a problem of ``kinds`` under way has ended."""
        assert self.remote is not None
        old = self.problem
        if old is not None and old.kind in kinds:
            self.problem = None
            name = self.remote.name
            warnings.append(
                f"{name} answers again; claims and pushes go through it"
                if old.kind == "unreachable"
                else f"{name} takes this machine's pushes again"
            )
        stored = self._stored_problem()
        if self.problem is None and stored is not None and stored.kind in kinds:
            self._store(None)

    def _stored_problem(self) -> RemoteProblem | None:
        if not self._stored_read:
            self._stored_read = True
            with contextlib.suppress(StateError, OSError, VaultopsError):
                state = StateDB(self.vault.state_dir / "state.db")
                try:
                    self._stored = remote_problem(state)
                finally:
                    state.close()
        return self._stored

    def _store(self, problem: RemoteProblem | None) -> None:
        """Keep it for ``status`` (its own connection: it changes once per incident).  A state.db that
        cannot be written loses only this: the log has said it."""
        self._stored, self._stored_read = problem, True
        doc = "" if problem is None else json.dumps(problem.__dict__)
        with contextlib.suppress(StateError, OSError, VaultopsError):
            state = StateDB(self.vault.state_dir / "state.db")
            try:
                state.set(PROBLEM_KEY, doc)
            finally:
                state.close()

    def _say(self, warnings: list[str], line: str) -> None:
        """Each line once while the clone cannot follow: a pass that cannot follow cannot commit either,
        and remembering only the last line said both again at every pass.  Forgotten once it follows."""
        if line not in self._said:
            self._said.add(line)
            warnings.append(line)

    # --- claims: compare-and-swap -----------------------------------------------------------------

    def head_version(self, rel: str) -> tuple[str | None, bytes | None]:
        """This clone's HEAD, and the note's bytes in it (None when it is not there)."""
        head = self.git.rev("HEAD")
        return head, self.git.blob(head, rel)

    def swap(self, rel: str, raw: bytes, message: str, head: str | None, stage: str = "claim") -> Pushed:
        assert self.remote is not None
        pushed = self.remote.swap({rel: raw}, message, self.vault.agent, head, stage)
        self._pushed(pushed, self._pending)
        return pushed

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
        warnings += self._pending
        self._pending.clear()
        paths = sorted({*written, *self.uncommitted})
        sha = None
        busy = self.git.busy() if paths and self.git.is_repo() else ""
        if busy:
            # committing into someone else's rebase or merge would tangle their history with ours
            self._say(
                warnings, f"not committing yet: {busy}; the lines are in the notes and are committed later"
            )
            self._keep_uncommitted({*self.uncommitted, *paths})
            return None
        if self.remote is None:  # with a remote, following it again says so and forgets (``_follow``)
            self._said.clear()
        if paths:
            try:
                message = results.commit_message(outcomes or [PassOutcome("vaultops", "recorded", "")])
                sha = self.git.commit_paths(paths, message, self.vault.agent).sha
            except (GitError, OSError, ValueError) as exc:  # OSError: git could not start; kept for later
                warnings.append(f"could not commit: {exc}; it is tried again on the next pass")
                self._keep_uncommitted({*self.uncommitted, *paths})
                return None
            if self.uncommitted:
                self._keep_uncommitted(set())
            self.held_since, self.held = None, set()
            self.ahead = self.ahead or sha is not None
        if self.ahead and self.through_remote:
            self.push(warnings)
        return sha

    def push(self, warnings: list[str]) -> None:
        assert self.remote is not None
        for _ in range(PUSH_ATTEMPTS):
            pushed = self.remote.push()
            self._pushed(pushed, warnings)
            if pushed.kind == "pushed":
                self.ahead = False
                return
            if pushed.kind == "failed":
                return
            self._follow(warnings)  # someone pushed first: follow, replaying these commits on top
            if not self.through_remote:
                return
        warnings.append(f"the remote kept moving; pushing again on the next pass ({PUSH_ATTEMPTS} tries)")


def _tell_replayed(pulled: Pulled, warnings: list[str]) -> None:
    if pulled.rewritten:
        warnings.append(pulled.rewritten)
    for rid in pulled.late:
        warnings.append(
            f"{rid}: its claim was taken over on another machine before its result arrived; "
            "the result is kept as a late result"
        )
    warnings.extend(pulled.dropped)
