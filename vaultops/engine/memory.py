"""In-memory twins of the engine's ports (``engine.ports``), for tests that run a request's whole life in
one process without git, a disk, a chat service or an agent, as huey's ``MemoryStorage`` stands in for
Redis.

A twin kinder than the real thing hides bugs, so each refuses what its real adapter refuses, and in the
same words (``tests/contract`` holds every twin against its real adapter, case by case):

- ``MemoryOrigin`` is the bare repository (commits with parent links, a branch tip), and each
  ``MemoryClone`` one machine's clone of it: HEAD, what it fetched, and its working tree apart from HEAD.
  ``MemoryRemote.swap`` pushes as git pushes: only a fast-forward of the tip goes through, anything else is
  "behind", and a commit never lands anywhere until its push did.  ``pull`` follows the tip as
  ``sync.remote.Remote.pull`` does: fast-forward, or this clone's own commits rebuilt on the tip (with
  ``sync.replay``, the same function), or refused when the person's uncommitted lines are in the way.
- ``MemoryGit`` is ``sync.git.Git`` as the publisher and the vetter ask it (``engine.ports.Repo``): a
  commit of exactly the paths named, a commit's file, and ``blame`` attributing each line to the commit
  that brought it in, by its author as git names one, which forged-answer detection stands on.
- ``MemoryNotes`` keeps the person's disk and HEAD apart, and refuses a write over a note that changed
  since it was read.
- ``MemoryLedger`` is ``store.state.StateDB`` itself on an in-memory SQLite database: the same SQL gives
  the same answers, which a second implementation in dicts could only promise.
- ``MemoryOutbox``, ``MemoryChat`` and ``MemoryRunner`` keep what they were given in lists and dicts that
  a test reads (``sent``, ``runs``), so that it can assert nothing was told or run twice.
"""

from __future__ import annotations

import difflib
import hashlib
import posixpath
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from vaultops.base import faults
from vaultops.base.copies import copies_in
from vaultops.base.errors import UnsafePath
from vaultops.base.redact import redact
from vaultops.base.visible import visible
from vaultops.model import State
from vaultops.notify.message import Notice
from vaultops.notify.outbox import ERROR_LIMIT, Entry, retry_delay
from vaultops.notify.replies import ChatAnswer, Press
from vaultops.notify.telegram import Batch, TelegramError
from vaultops.render.results import RunResult
from vaultops.run.dispatch import Dispatched
from vaultops.run.jobs import Job
from vaultops.store.notes import NoteTooLarge
from vaultops.store.state import StateDB
from vaultops.sync.git import AUTHOR_PREFIX, Blamed, CommitResult, GitError, identity
from vaultops.sync.remote import Pulled, Pushed, request_headings
from vaultops.sync.replay import is_insertion, replay
from vaultops.vault import is_ignored

DEFAULT_MAX_BYTES = 20_000_000  # ``[inbox] max_mb``'s default, as the note writer counts it
PERSON = "Person <person@example.invalid>"  # the person's commits' author (obsidian-git's), as git names one

# --- the remote -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Commit:
    parents: tuple[str, ...]
    tree: Mapping[str, bytes]  # every file of the commit, by path
    message: str
    author: str  # ``Name <email>``; vaultops's start with ``sync.git.AUTHOR_PREFIX`` (``identity``)


class MemoryOrigin:
    """The bare repository every clone pushes to: all commits (their ids are unique, so one store serves
    the remote and every clone; each clone still knows only the commits it made or fetched), and the
    branch's tip."""

    def __init__(self, tree: Mapping[str, bytes] | None = None, branch: str = "main") -> None:
        self.branch = branch
        self.commits: dict[str, Commit] = {}
        self.tip: str | None = None
        self.reachable = True  # False: every fetch and push fails as an unreachable remote's does
        self.refusal = ""  # a hook's reason: every push is refused with it
        self._made = 0
        if tree is not None:
            self.tip = self.commit(None, dict(tree), "start", PERSON)

    def commit(self, parent: str | None, tree: Mapping[str, bytes], message: str, author: str) -> str:
        return self._store(((parent,) if parent else ()), tree, message, author)

    def merge(self, ours: str, theirs: str, tree: Mapping[str, bytes], message: str, author: str) -> str:
        return self._store((ours, theirs), tree, message, author)

    def _store(self, parents: tuple[str, ...], tree: Mapping[str, bytes], message: str, author: str) -> str:
        self._made += 1
        sha = hashlib.sha1(f"{self._made}\0{parents}\0{message}".encode()).hexdigest()
        self.commits[sha] = Commit(parents, dict(tree), message, author)
        return sha

    def tree(self, sha: str | None) -> Mapping[str, bytes]:
        return {} if sha is None else self.commits[sha].tree

    def history(self, sha: str | None) -> set[str]:
        """``sha`` and every commit before it."""
        seen: set[str] = set()
        todo = [sha] if sha else []
        while todo:
            one = todo.pop()
            if one not in seen:
                seen.add(one)
                todo += self.commits[one].parents
        return seen

    def is_ancestor(self, older: str, newer: str) -> bool:
        return older in self.history(newer)

    # --- what the person (or another tool) does to the remote, for tests ---------------------------

    def person_push(self, files: Mapping[str, bytes], message: str = "person", author: str = PERSON) -> str:
        """The person's commit of ``files`` on the tip, pushed (from a clone the test does not model);
        ``author``: whoever else commits to the vault (an agent), as git would name them."""
        self.tip = self.commit(self.tip, {**self.tree(self.tip), **files}, message, author)
        return self.tip

    def rewrite(self, sha: str | None) -> None:
        """A force-push: the branch is ``sha`` now, whatever it held before."""
        self.tip = sha


@dataclass
class MemoryClone:
    """One machine's clone: HEAD, the remote's tip as it last fetched it, and the working tree (the
    person's uncommitted lines live here and in no commit)."""

    origin: MemoryOrigin
    head: str | None = None
    tracking: str | None = None
    seen: str | None = None  # the tip as this clone last followed it (``Remote.seen_ref``)
    disk: MutableMapping[str, bytes] = field(default_factory=dict)
    known: set[str] = field(default_factory=set)  # the commits this clone has

    @classmethod
    def of(cls, origin: MemoryOrigin, disk: MutableMapping[str, bytes] | None = None) -> MemoryClone:
        """``git clone``: HEAD, the tracking ref and the working tree at the tip (in ``disk`` when given: a
        folder the stages read too, say)."""
        tree = {} if disk is None else disk
        tree.update(origin.tree(origin.tip))
        clone = cls(origin, origin.tip, origin.tip, origin.tip, tree)
        clone.known = origin.history(origin.tip)
        return clone

    def person_commit(self, paths: Iterable[str], message: str = "person", author: str = PERSON) -> str:
        """The person's commit (obsidian-git's) of ``paths`` as the working tree holds them."""
        tree = dict(self.origin.tree(self.head))
        for path in paths:
            if path in self.disk:
                tree[path] = self.disk[path]
            else:
                tree.pop(path, None)
        self.head = self.origin.commit(self.head, tree, message, author)
        self.known.add(self.head)
        return self.head


class MemoryRemote:
    """``sync.remote.Remote`` over a ``MemoryOrigin``: the port ``engine.ports.Remote``."""

    def __init__(self, clone: MemoryClone, name: str = "origin") -> None:
        self.clone = clone
        self.origin = clone.origin
        self.name = name

    def head(self) -> str | None:
        return self.clone.head

    def tip(self) -> str | None:
        return self.clone.tracking

    def _ahead(self) -> bool:
        head = self.clone.head
        return head is not None and head != self.clone.tracking

    def _unreachable(self) -> str:
        return f"{self.name} cannot be reached (the remote did not answer)"

    def fetch(self) -> str:
        if not self.origin.reachable:
            return self._unreachable()
        self.clone.tracking = self.origin.tip
        self.clone.known |= self.origin.history(self.origin.tip)
        return ""

    # --- following it ---------------------------------------------------------------------------

    def pull(self) -> Pulled:
        clone = self.clone
        seen, tracked = clone.seen, clone.tracking
        why = self.fetch()
        if why:
            return Pulled(False, reason=why, ahead=self._ahead())
        remote, head = clone.tracking, clone.head
        if remote is not None:
            lost = self._lost([k for k in (seen, tracked) if k and k != remote], remote)
            if lost:
                return self._follow_rewritten(remote, head, lost)
            clone.seen = remote
        if remote is None or remote == head:
            return Pulled(True, ahead=remote is None and head is not None)
        if head is None or self.origin.is_ancestor(head, remote):
            blocked = self.keep_to(remote, head)
            return Pulled(True, blocked=blocked, moved=not blocked)
        if self.origin.is_ancestor(remote, head):
            return Pulled(True, ahead=True)
        pulled = Pulled(True, ahead=True)
        rebuilt = self.rebuild(remote, head, pulled)
        if rebuilt is None:
            return pulled
        pulled.blocked = self.keep_to(rebuilt, head)
        pulled.moved = not pulled.blocked
        return pulled

    def keep_to(self, sha: str, head: str | None) -> str:
        """Move HEAD and the working tree from ``head`` to ``sha`` as ``Remote.keep_to`` does: a file the
        move changes must hold HEAD's bytes on disk, or ``sha``'s already (the person's uncommitted lines
        are never overwritten), or nothing moves."""
        old, new = self.origin.tree(head), self.origin.tree(sha)
        changed = [p for p in {*old, *new} if old.get(p) != new.get(p)]
        disk = self.clone.disk
        # a file already at ``sha`` (a move cut short) is no change of the person's: git stages it first
        dirty = sorted(p for p in changed if disk.get(p) != old.get(p) and disk.get(p) != new.get(p))
        if dirty:
            return (
                f"this clone has uncommitted changes in files the remote changed too ({', '.join(dirty)}); "
                "commit them (obsidian-git does) and vaultops follows the remote again"
            )
        for path in changed:
            if path in new:
                self.clone.disk[path] = new[path]
            else:
                self.clone.disk.pop(path, None)
        self.clone.head = sha
        return ""

    def _lost(self, known: list[str], remote: str) -> dict[str, bool]:
        kept = self.origin.history(remote)
        if all(k in kept for k in known):
            return {}
        gone = set().union(*(self.origin.history(k) for k in known)) - kept
        return {sha: self.origin.commits[sha].author.startswith(AUTHOR_PREFIX) for sha in gone}

    def _follow_rewritten(self, remote: str, head: str | None, lost: dict[str, bool]) -> Pulled:
        pulled = Pulled(True, ahead=True)
        if head and not (self.origin.history(head) & self.origin.history(remote)):
            pulled.blocked = f"{self.name}/{self.origin.branch} shares no history with this clone"
            return pulled
        dropped = frozenset(sha for sha, ours in lost.items() if not ours)
        rebuilt = self.rebuild(remote, head, pulled, skip=dropped) if head else remote
        if rebuilt is None:
            return pulled
        pulled.blocked = self.keep_to(rebuilt, head)
        if pulled.blocked:
            return pulled
        self.clone.seen = remote
        pulled.moved, pulled.ahead = rebuilt != head, rebuilt != remote
        pulled.late = []  # kept as late results, said in ``rewritten`` as the real remote says them
        pulled.rewritten = (
            f"the remote's history was rewritten ({self.name}/{self.origin.branch} was force-pushed, and "
            f"{len(lost)} commit(s) this clone had seen there are gone): vaultops put back the claims and "
            f"results of the {sum(lost.values())} of them that were its own"
        )
        return pulled

    def rebuild(self, onto: str, head: str, pulled: Pulled, skip: frozenset[str] = frozenset()) -> str | None:
        """This clone's commits that ``onto`` lacks, rebuilt on it one by one, oldest first."""
        mine = self.origin.history(head) - self.origin.history(onto)
        base = onto
        for sha in self._oldest_first(mine):
            if sha in skip:
                continue
            commit = self.origin.commits[sha]
            if len(commit.parents) != 1:
                pulled.blocked = f"this clone has a merge commit ({sha[:8]}) that the remote lacks"
                return None
            rebuilt = self._rebuild_one(sha, commit, base, pulled)
            if rebuilt is None:
                return None
            base = rebuilt
        return base

    def _oldest_first(self, shas: set[str]) -> list[str]:
        order: list[str] = []
        placed: set[str] = set()

        def visit(sha: str) -> None:
            if sha in placed or sha not in shas:
                return
            placed.add(sha)
            for parent in self.origin.commits[sha].parents:
                visit(parent)
            order.append(sha)

        for sha in sorted(shas):
            visit(sha)
        return order

    def _rebuild_one(self, sha: str, commit: Commit, base: str, pulled: Pulled) -> str | None:
        ours = commit.author.startswith(AUTHOR_PREFIX)
        parent_tree, after_tree = self.origin.tree(commit.parents[0]), commit.tree
        base_tree = dict(self.origin.tree(base))
        files: dict[str, bytes | None] = {}
        for path in sorted(p for p in {*parent_tree, *after_tree} if parent_tree.get(p) != after_tree.get(p)):
            before, after, now = parent_tree.get(path), after_tree.get(path), base_tree.get(path)
            if now == before:
                files[path] = after
            elif after == before or (ours and after is None):
                continue
            elif ours and now is None:
                pulled.dropped.append(
                    f"{path}: deleted on the remote; this machine's lines in it are dropped"
                )
            elif ours and after is not None and now is not None:
                files[path] = _replayed(path, before, after, now, pulled)
            else:
                # the person's commit: git's three-way file merge first, then, for a note they only added
                # lines to, a replay of those lines (as ``Remote._rebuild_one`` does)
                merged = merge3(before, after, now) if before and after and now else None
                if (
                    merged is None
                    and after is not None
                    and now is not None
                    and _inserted_only(path, before, after, now)
                ):
                    merged = _replayed(path, before, after, now, pulled)
                if merged is None:
                    pulled.blocked = (
                        f"{path}: this clone's commit {sha[:8]} and the remote changed it in ways that do "
                        "not merge; resolve it with git (or obsidian-git), and vaultops follows the remote "
                        "again"
                    )
                    return None
                files[path] = merged
            if _doubled(path, files.get(path), now, after):
                pulled.blocked = (
                    f"{path}: merging this clone's version with the remote's would double a request"
                )
                return None
        changed = {p: d for p, d in files.items() if d != base_tree.get(p)}
        if not changed:
            return base
        for path, data in changed.items():
            if data is None:
                base_tree.pop(path, None)
            else:
                base_tree[path] = data
        rebuilt = self.origin.commit(base, base_tree, commit.message, commit.author)
        self.clone.known.add(rebuilt)
        return rebuilt

    # --- writing to it --------------------------------------------------------------------------

    def swap(
        self, files: dict[str, bytes], message: str, agent: str, head: str | None, stage: str = "claim"
    ) -> Pushed:
        if head is not None and head not in self.clone.known:
            raise GitError(f"git read-tree {head}: fatal: not a tree object")  # as commit_files fails
        commit = self.origin.commit(head, {**self.origin.tree(head), **files}, message, _vaultops(agent))
        self.clone.known.add(commit)
        faults.reach(f"{stage}.before_push")
        pushed = self.push(commit)
        if pushed.kind == "pushed":
            faults.reach(f"{stage}.after_push")
        return pushed

    def adopt(self, commit: str, old_head: str | None, paths: list[str]) -> bool:
        # ``git update-ref HEAD commit old_head``: checked against old_head only when there is one
        if commit not in self.clone.known or (old_head is not None and self.clone.head != old_head):
            return False
        self.clone.head = commit
        return True

    def push(self, commit: str | None = None) -> Pushed:
        sha = commit or self.clone.head
        if sha is None:
            return Pushed("pushed")
        faults.reach("push.before")
        if not self.origin.reachable:
            return Pushed("failed", self._unreachable(), sha, "unreachable")
        if self.origin.refusal:
            detail = f"{self.name} refused the push (pre-receive hook declined)"
            return Pushed("failed", f"{detail}: {self.origin.refusal}", sha, "refused")
        tip = self.origin.tip
        if tip is not None and not self.origin.is_ancestor(tip, sha):
            return Pushed("behind", "someone pushed first", sha)
        self.origin.tip = sha
        self.clone.tracking = sha
        return Pushed("pushed", sha=sha)

    def merge_through(self) -> Pushed:
        """The control run's wrong way: the remote merged into this clone, this clone's side winning."""
        self.fetch()
        head, tip = self.clone.head, self.clone.tracking
        if head is None or tip is None or self.origin.is_ancestor(tip, head):
            return self.push()
        common = self.origin.history(head) & self.origin.history(tip)
        fork = max(common, key=lambda c: len(self.origin.history(c))) if common else None
        ours, theirs, base = self.origin.tree(head), self.origin.tree(tip), self.origin.tree(fork)
        tree: dict[str, bytes] = {}
        for path in {*ours, *theirs, *base}:
            pick = ours.get(path) if ours.get(path) != base.get(path) else theirs.get(path)
            if pick is not None:
                tree[path] = pick
        merged = self.origin.merge(head, tip, tree, "merge", PERSON)
        self.clone.known.add(merged)
        if not self.keep_to(merged, head):
            return self.push()
        return Pushed("failed", "local changes in the way of the merge", merged, "")


def _replayed(path: str, before: bytes | None, after: bytes, now: bytes, pulled: Pulled) -> bytes:
    # a note made on both sides (today's daily note) has what both versions start with as its base
    shared = before if before is not None else _common_head(after, now)
    replayed = replay(path, shared, after, now)
    pulled.late += list(replayed.late)
    pulled.dropped += list(replayed.dropped)
    return replayed.raw


def _common_head(a: bytes, b: bytes) -> bytes:
    head = []
    for x, y in zip(a.splitlines(keepends=True), b.splitlines(keepends=True), strict=False):
        if x != y:
            break
        head.append(x)
    return b"".join(head)


Hunk = tuple[int, int, list[bytes]]  # base lines [start, end) replaced by these


def _hunks(base: list[bytes], other: list[bytes]) -> list[Hunk]:
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    return [(i1, i2, other[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def merge3(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """``git merge-file``'s clean merge: both sides' changes to ``base``, or None when a change of one
    overlaps or touches a change of the other (git would write conflict markers there)."""
    lines = base.splitlines(keepends=True)
    mine, other = (
        _hunks(lines, ours.splitlines(keepends=True)),
        _hunks(lines, theirs.splitlines(keepends=True)),
    )
    for a1, a2, a_new in mine:
        for b1, b2, b_new in other:
            if (a1, a2, a_new) == (b1, b2, b_new):
                continue  # the same change on both sides
            if a1 <= b2 and b1 <= a2:
                return None
    merged = sorted({(i1, i2, tuple(new)) for i1, i2, new in [*mine, *other]})
    out: list[bytes] = []
    at = 0
    for i1, i2, new in merged:
        out += lines[at:i1]
        out += new
        at = i2
    out += lines[at:]
    return b"".join(out)


def _inserted_only(path: str, before: bytes | None, after: bytes, now: bytes) -> bool:
    """A person's commit that only added lines to a note: replayed like vaultops's own commits."""
    shared = before if before is not None else _common_head(after, now)
    return path.endswith(".md") and is_insertion(shared, after)


def _doubled(path: str, merged: bytes | None, now: bytes | None, after: bytes | None) -> bool:
    if merged is None or not path.endswith(".md"):
        return False
    most = request_headings(now or b"") | request_headings(after or b"")
    return any(n > most[rid] for rid, n in request_headings(merged).items())


def _vaultops(agent: str) -> str:
    name, email = identity(agent)
    return f"{name} <{email}>"


# --- the repository ----------------------------------------------------------------------------------


class MemoryGit:
    """A clone's repository as ``sync.git.Git`` answers the publisher and the vetter (``engine.ports.Repo``).
    ``under_way``: a rebase or merge another git has under way (what ``in_progress`` says); ``detached``:
    HEAD on no branch.  ``git_dir`` names where the repository would be and is never created, so the
    context's wait for another git is not entered (``busy`` still stops a commit)."""

    def __init__(self, clone: MemoryClone, root: Path) -> None:
        self.clone = clone
        self.origin = clone.origin
        self.root = root
        self.under_way = ""
        self.detached = False

    @property
    def git_dir(self) -> Path:
        return self.root / ".git"

    def is_repo(self) -> bool:
        return True

    def in_progress(self) -> str:
        return self.under_way

    def busy(self) -> str:
        if self.under_way:
            return self.under_way
        return "HEAD is not on a branch (detached)" if self.detached else ""

    def rev(self, name: str) -> str | None:
        sha = self.clone.head if name == "HEAD" else name
        return sha if sha in self.clone.known else None

    def blob(self, commit: str | None, path: str) -> bytes | None:
        if commit is None or commit not in self.clone.known:
            return None
        return self.origin.commits[commit].tree.get(path)

    def commit_paths(self, paths: Sequence[str], message: str, agent: str) -> CommitResult:
        """``git add -- paths`` and ``git commit --only``: those paths as the working tree holds them."""
        if not paths:
            return CommitResult(None, message)
        message = visible(message)
        before = self.origin.tree(self.clone.head)
        tree = dict(before)
        for path in paths:
            now = self.clone.disk.get(path)
            if now is None and path not in before:
                raise GitError(f"git add failed: fatal: pathspec '{path}' did not match any files")
            if now is None:
                tree.pop(path)
            else:
                tree[path] = now
        if tree == before:
            return CommitResult(None, message)
        self.clone.head = self.origin.commit(self.clone.head, tree, message, _vaultops(agent))
        self.clone.known.add(self.clone.head)
        return CommitResult(self.clone.head, message)

    def blame(self, path: str, contents: bytes, lines: Sequence[int]) -> dict[int, Blamed]:
        """``git blame --contents``: each line followed back through the commits while it stays unchanged
        (through any parent of a merge that has it), and given to the commit that added it.  Lines that
        HEAD lacks are left out, and every line when HEAD has no ``path``."""
        head = self.clone.head
        if head is None or path not in self.origin.tree(head):
            return {}
        now = contents.splitlines(keepends=True)
        wanted = {n: n for n in lines if 0 <= n < len(now)}
        found: dict[int, Blamed] = {}
        todo = [(head, _carried(now, self._lines(head, path), wanted))]
        while todo:
            sha, held = todo.pop()  # final line -> its line in ``sha``'s version
            version = self._lines(sha, path)
            left = dict(held)
            for parent in self.origin.commits[sha].parents:
                passed = _carried(version, self._lines(parent, path), left)
                if passed:
                    todo.append((parent, passed))
                left = {n: at for n, at in left.items() if n not in passed}
            for n, at in left.items():
                found[n] = Blamed(self.origin.commits[sha].author, sha, at, path)
        return found

    def _lines(self, sha: str, path: str) -> list[bytes]:
        return self.origin.tree(sha).get(path, b"").splitlines(keepends=True)


def _carried(new: list[bytes], old: list[bytes], held: Mapping[int, int]) -> dict[int, int]:
    """Of ``held`` (a final line -> its line in ``new``), those ``new`` has unchanged from ``old``, with their
    line in ``old``."""
    at: dict[int, int] = {}
    for block in difflib.SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            at[block.b + k] = block.a + k
    return {n: at[line] for n, line in held.items() if line in at}


# --- the notes --------------------------------------------------------------------------------------


class MemoryNotes:
    """A clone's notes (``engine.ports.Notes``): its working tree and its HEAD, kept apart.  A path that
    leaves the vault is refused, and a note over ``max_bytes`` is not read, as the note writer refuses them
    (symlinks are not modelled)."""

    def __init__(
        self, clone: MemoryClone, queue: str = "executor-queue", max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        self.clone = clone
        self.queue = queue
        self.max_bytes = max_bytes

    def read(self, rel: str) -> bytes | None:
        raw = self.clone.disk.get(_inside(rel))
        if raw is not None and len(raw) > self.max_bytes:
            raise NoteTooLarge(
                f"{rel} is {len(raw) / 1e6:.1f} MB, over the {self.max_bytes / 1e6:.0f} MB limit; "
                "move old requests to an archive note (or raise [inbox] max_mb)"
            )
        return raw

    def head_version(self, rel: str) -> tuple[str | None, bytes | None]:
        head = self.clone.head
        return head, self.clone.origin.tree(head).get(rel)

    def replace(self, rel: str, expected: bytes | None, new: bytes) -> bool:
        rel = _inside(rel)
        if self.clone.disk.get(rel) != expected:
            return False  # the person saved it since it was read: read again
        self.clone.disk[rel] = new
        return True

    def plan_notes(self) -> list[str]:
        names = [
            PurePosixPath(rel).name
            for rel in self.clone.disk
            if PurePosixPath(rel).parent.as_posix() == self.queue
        ]
        copies = copies_in(names)
        return sorted(
            f"{self.queue}/{n}" for n in names if n.endswith(".md") and n not in copies and not is_ignored(n)
        )

    def save(self, rel: str, raw: bytes) -> None:
        """The person saves ``raw`` (in Obsidian): on disk, in no commit."""
        self.clone.disk[rel] = raw


def _inside(rel: str) -> str:
    """``rel`` as a path in the vault; UnsafePath, as ``Vault.resolve`` raises it, for one outside."""
    if PurePosixPath(rel).is_absolute():
        raise UnsafePath(f"{rel}: absolute paths are not vault notes; use a path inside the vault")
    normal = posixpath.normpath(rel)
    if normal == ".." or normal.startswith("../"):
        raise UnsafePath(f"{rel}: resolves outside the vault; refusing to touch it")
    return normal


# --- state.db -----------------------------------------------------------------------------------------


class MemoryLedger(StateDB):
    """state.db on an in-memory SQLite database: ``StateDB``'s own SQL, so the same answers."""

    def __init__(self) -> None:
        super().__init__(Path(":memory:"))


# --- the outbox -----------------------------------------------------------------------------------------


def _text(value: str) -> str:
    # as the real outbox stores it: a note's undecodable bytes become U+FFFD
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@dataclass
class _Queued:
    entry: Entry
    sender: str
    order: int


class MemoryOutbox:
    """``notify.outbox.Outbox`` in a dict: one key, one notice, ever (``rows`` may be shared between two of
    them, as two ``Outbox``es share one state.db, to reopen it)."""

    def __init__(self, sender: str = "", rows: dict[str, _Queued] | None = None) -> None:
        self.sender = sender
        self.rows: dict[str, _Queued] = {} if rows is None else rows

    def queue(self, notice: Notice, now: float | None = None) -> bool:
        key = _text(notice.key)
        if key in self.rows:
            return False
        shown = notice.redacted()
        kept = Notice(key, _text(shown.title), _text(shown.body), shown.ask, _text(shown.topic))
        at = time.time() if now is None else now
        self.rows[key] = _Queued(
            Entry(kept, at, None, 0, 0.0, None, frozenset()), self.sender, len(self.rows)
        )
        return True

    def pending(self, now: float | None = None) -> list[Entry]:
        due = [
            q
            for q in self.rows.values()
            if q.entry.sent is None and q.sender == self.sender and (now is None or q.entry.retry_at <= now)
        ]
        return [q.entry for q in sorted(due, key=lambda q: (q.entry.queued, q.order))]

    def entry(self, key: str) -> Entry | None:
        found = self.rows.get(_text(key))
        return None if found is None else found.entry

    def _update(self, key: str, entry: Entry) -> None:
        self.rows[_text(key)].entry = entry

    def reached(self, key: str, target: str) -> None:
        entry = self.entry(key)
        if entry is not None and target not in entry.reached:
            self._update(key, replace(entry, reached=entry.reached | {target}))

    def sent(self, key: str, now: float | None = None) -> None:
        entry = self.entry(key)
        if entry is not None and entry.sent is None:
            self._update(key, replace(entry, sent=time.time() if now is None else now, last_error=None))

    def failed(
        self, key: str, error: str, now: float | None = None, secrets: Iterable[str] = (), wait: float = 0.0
    ) -> None:
        entry = self.entry(key)
        if entry is None or entry.sent is not None:
            return
        at = time.time() if now is None else now
        attempts = entry.attempts + 1
        shown = _text(redact(error, secrets)[:ERROR_LIMIT])
        retry_at = at + max(retry_delay(attempts), wait)
        self._update(key, replace(entry, attempts=attempts, retry_at=retry_at, last_error=shown))


# --- the chat -------------------------------------------------------------------------------------------


class MemoryChat:
    """A chat (``engine.ports.Chat`` and ``Sender``): what was sent, and replies given as Telegram's
    ``getUpdates`` gives them: each again on every fetch until an ``ack`` past its update id."""

    def __init__(self, chat_id: int = 1) -> None:
        self.chat_id = chat_id
        self.sent: list[Notice] = []
        self.updates: list[tuple[int, ChatAnswer]] = []
        self.offset: int | None = None
        self.fail: list[TelegramError] = []  # what the next calls raise, in turn
        self.toasts: list[tuple[Press, str]] = []  # each press answered, with what it said
        self.settled: list[tuple[Press, str]] = []  # each message the decision was shown on
        self._next = 700_000_000

    @property
    def id(self) -> str:
        return f"telegram:{self.chat_id}"

    @property
    def label(self) -> str:
        return f"telegram chat {self.chat_id}"

    def send(self, notice: Notice) -> None:
        if self.fail:
            raise self.fail.pop(0)
        self.sent.append(notice)

    def say(self, answer: ChatAnswer) -> int:
        """The person answers in the chat; the update's id."""
        self._next += 1
        self.updates.append((self._next, answer))
        return self._next

    def fetch(self, timeout: float | None = None) -> Batch:
        if self.fail:
            raise self.fail.pop(0)
        if self.offset is not None:  # getUpdates with an offset confirms (and forgets) every update below it
            self.updates = [(uid, a) for uid, a in self.updates if uid >= self.offset]
        if not self.updates:
            return Batch([], None)
        return Batch([a for _, a in self.updates], max(uid for uid, _ in self.updates) + 1)

    def ack(self, next_offset: int | None) -> None:
        if next_offset is not None and (self.offset is None or next_offset > self.offset):
            self.offset = next_offset

    def answer_press(self, press: Press, toast: str) -> None:
        self.toasts.append((press, toast))

    def settle_message(self, press: Press, outcome: str) -> None:
        self.settled.append((press, outcome))


# --- the runner -----------------------------------------------------------------------------------------


class MemoryRunner:
    """``run.dispatch.Dispatcher`` with scripted results: each request id's ``RunResult`` (by default a
    done run of its handler), each run counted by claim, and recorded in ``ledger`` as the dispatcher
    records its attempts, so that what ``knows_claim`` and ``cost_since`` answer is the same."""

    def __init__(self, ledger: StateDB | None = None, host: str = "memory") -> None:
        self.ledger = ledger
        self.host = host
        self.script: dict[str, RunResult] = {}
        self.runs: Counter[str] = Counter()  # by claim
        self.jobs: list[Job] = []
        self.lock = threading.Lock()
        self.cancel: threading.Event | None = None

    def run(self, job: Job, started: datetime) -> Dispatched:
        with self.lock:
            self.runs[job.claim] += 1
            self.jobs.append(job)
            run_id = None
            if self.ledger is not None:
                run_id = self.ledger.run_started(
                    job.file, job.request_id, job.claim, 1, job.profile, self.host, None
                )
        scripted = self.script.get(job.request_id)
        result = scripted if scripted is not None else RunResult(State.DONE, job.profile, started, 0.0, "")
        with self.lock:
            if self.ledger is not None and run_id is not None:
                outcome = "done" if result.state is State.DONE else result.state.value
                self.ledger.run_ended(
                    run_id, outcome, result.exit_code, result.duration, None, result.cost_usd
                )
        return Dispatched(replace(result, started=started), ())

    def ran_twice(self) -> list[str]:
        """The claims run more than once: the engine's promise is that this stays empty."""
        return sorted(claim for claim, n in self.runs.items() if n > 1)


if TYPE_CHECKING:
    from vaultops.engine import ports

    def _fits(
        remote: MemoryRemote, notes: MemoryNotes, ledger: MemoryLedger, outbox: MemoryOutbox,
        chat: MemoryChat, runner: MemoryRunner, repo: MemoryGit,
    ) -> None:  # fmt: skip
        """mypy's proof that each twin fits its port (never defined at run time)."""
        twins: tuple[
            ports.Remote, ports.Notes, ports.Ledger, ports.Outbox, ports.Chat, ports.Sender, ports.Runner,
            ports.Repo, ports.Buttons,
        ]  # fmt: skip
        twins = (remote, notes, ledger, outbox, chat, chat, runner, repo, chat)
        del twins
