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
from vaultops.decide.halt import carry_halt
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
                # a rendering's halt typed on this clone rides on the remote's rendering, as ``sync.remote``
                files[path] = carry_halt(before, after, now) or _replayed(path, before, after, now, pulled)
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
        for what in ("a merge", "a cherry-pick"):  # git commits a rebase's step on its detached HEAD
            if self.under_way.startswith(what):
                raise GitError(f"git commit failed: fatal: cannot do a partial commit during {what}.")
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

    def renames(self, limit: int) -> list[tuple[str, str]]:
        """``git log -M``'s renames along HEAD's first parents, oldest first: a path a commit took away
        whose very bytes a path it added holds (git's R100; an edited move is not found here)."""
        found: list[tuple[str, str]] = []
        sha = self.clone.head
        while sha is not None and limit > 0:
            commit = self.origin.commits[sha]
            before = self.origin.tree(commit.parents[0]) if commit.parents else {}
            added = {data: path for path, data in commit.tree.items() if path not in before}
            found += [
                (old, added[data]) for old, data in before.items() if old not in commit.tree and data in added
            ]
            sha, limit = (commit.parents[0] if commit.parents else None), limit - 1
        return found[::-1]

    def blame(self, path: str, contents: bytes, lines: Sequence[int]) -> dict[int, Blamed]:
        """``git blame --contents``: each line followed back through the commits while it stays unchanged
        (through any parent of a merge that has it), and given to the commit that added it.  Lines that
        HEAD lacks are left out, and every line when HEAD has no ``path`` or one of ``lines`` is not in
        ``contents`` (git refuses such a ``-L``)."""
        head = self.clone.head
        now = _records(contents)
        if head is None or path not in self.origin.tree(head) or any(not 0 <= n < len(now) for n in lines):
            return {}
        wanted = {n: n for n in lines}
        found: dict[int, Blamed] = {}
        todo = [(head, path, _carried(now, self._lines(head, path), wanted))]
        while todo:
            sha, here, held = todo.pop()  # final line -> its line in ``sha``'s version of the file ``here``
            version = self._lines(sha, here)
            named = [(p, self._named_in(p, sha, here)) for p in self.origin.commits[sha].parents]
            mine = self.origin.tree(sha).get(here)
            same = [(p, name) for p, name in named if self.origin.tree(p).get(name) == mine]
            if same:  # a parent with the very same file takes every line, as git passes the whole blame
                todo.append((*same[0], held))
                continue
            left = dict(held)
            for parent, name in named:
                passed = _carried(version, self._lines(parent, name), left)
                if passed:
                    todo.append((parent, name, passed))
                left = {n: at for n, at in left.items() if n not in passed}
            for n, at in left.items():
                found[n] = Blamed(self.origin.commits[sha].author, sha, at, here)
        return found

    def _named_in(self, parent: str, sha: str, path: str) -> str:
        """What ``path`` of commit ``sha`` was called in ``parent``: itself, or the file ``sha`` renamed to it
        (as git blame follows a whole file's rename; here one with the very same bytes)."""
        before, after = self.origin.tree(parent), self.origin.tree(sha)
        if path in before or path not in after:
            return path
        return next((old for old, data in before.items() if old not in after and data == after[path]), path)

    def _lines(self, sha: str, path: str) -> list[bytes]:
        return _records(self.origin.tree(sha).get(path, b""))


def _carried(new: list[bytes], old: list[bytes], held: Mapping[int, int]) -> dict[int, int]:
    """Of ``held`` (a final line -> its line in ``new``), those that git's diff of ``old`` and ``new`` (as
    ``git blame`` runs it: ``_unchanged``) leaves unchanged, with their line in ``old``."""
    at = _unchanged(old, new)
    return {n: at[line] for n, line in held.items() if line in at}


# --- git's diff, as blame runs it ----------------------------------------------------------------------
# Which lines a commit passes on to its parent decides who a line is blamed on, and for repeated lines (a
# blank line, two "- decision: approve" under two requests) any longest common subsequence is not enough:
# git's own choice is needed.  What follows is git's xdiff (``xdiff-interface.c``'s trim_common_tail,
# ``xprepare.c``, ``xdiffi.c``: Myers' diff with its heuristics, then the groups slid as the indent
# heuristic slides them, which ``git blame`` turns on by default; no ``diff.algorithm`` set), line for line.

_BLOCK = 1024  # trim_common_tail's block
_MAX_EQLIMIT = 1024
_SIMSCAN_WINDOW = 100
_KPDIS_RUN = 4
_MAX_COST_MIN = 256
_HEUR_MIN_COST = 256
_SNAKE_CNT = 20
_K_HEUR = 4
_LINE_MAX = (1 << 63) - 1
_MAX_INDENT = 200
_MAX_BLANKS = 20
_INDENT_MAX_SLIDING = 100
_DISCARD, _KEEP, _INVESTIGATE = 0, 1, 2


def _records(raw: bytes) -> list[bytes]:
    """A file's lines as git splits them: after each ``\\n`` only (the last one may lack it)."""
    parts = raw.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def _unchanged(old: list[bytes], new: list[bytes]) -> dict[int, int]:
    """``new``'s lines that git's diff of ``old`` and ``new`` leaves unchanged -> their line in ``old``."""
    a, b = b"".join(old), b"".join(new)
    trimmed, smaller = 0, min(len(a), len(b))
    while _BLOCK + trimmed <= smaller and _ending(a, trimmed) == _ending(b, trimmed):
        trimmed += _BLOCK
    recovered = 0
    while recovered < trimmed:
        recovered += 1
        if a[len(a) - trimmed + recovered - 1] == 0x0A:
            break
    cut = trimmed - recovered  # whole lines at the end, the same in both: unchanged, never diffed
    one, two = _records(a[: len(a) - cut]), _records(b[: len(b) - cut])
    changed1, changed2 = _xdl_diff(one, two)
    kept1 = [i for i in range(len(one)) if not changed1[i + 1]]
    kept2 = [i for i in range(len(two)) if not changed2[i + 1]]
    at = dict(zip(kept2, kept1, strict=True))
    tail = len(_records(a[len(a) - cut :])) if cut else 0
    at.update({len(two) + k: len(one) + k for k in range(tail)})
    return at


def _ending(raw: bytes, trimmed: int) -> bytes:
    """The block before the last ``trimmed`` bytes."""
    return raw[len(raw) - trimmed - _BLOCK : len(raw) - trimmed]


@dataclass
class _File:
    """One side of a diff (xdiff's ``xdfile_t``): its lines' classes, ``changed`` with a False on each end
    (``changed[i + 1]`` is line i's), and the lines the Myers pass looks at (``ref``)."""

    recs: list[bytes]
    ids: list[int]
    changed: list[bool]
    ref: list[int] = field(default_factory=list)
    dstart: int = 0
    dend: int = -1


def _bogosqrt(n: int) -> int:
    i = 1
    while n > 0:
        n >>= 2
        i <<= 1
    return i


def _xdl_diff(one: list[bytes], two: list[bytes]) -> tuple[list[bool], list[bool]]:
    """``xdl_diff`` without its output: which lines of each side are changed."""
    classes: dict[bytes, int] = {}
    ids1 = [classes.setdefault(r, len(classes)) for r in one]
    ids2 = [classes.setdefault(r, len(classes)) for r in two]
    x1 = _File(one, ids1, [False] * (len(one) + 2))
    x2 = _File(two, ids2, [False] * (len(two) + 2))
    _prepare(x1, x2)
    h1 = [x1.ids[r] for r in x1.ref]
    h2 = [x2.ids[r] for r in x2.ref]
    ndiags = len(x1.ref) + len(x2.ref) + 3
    mxcost = max(_bogosqrt(ndiags), _MAX_COST_MIN)
    kvdf: dict[int, int] = {}
    kvdb: dict[int, int] = {}
    todo = [(0, len(h1), 0, len(h2), False)]
    while todo:  # xdl_recs_cmp, its recursion as a stack (the lower box first, as it recurses)
        off1, lim1, off2, lim2, need_min = todo.pop()
        while off1 < lim1 and off2 < lim2 and h1[off1] == h2[off2]:
            off1, off2 = off1 + 1, off2 + 1
        while off1 < lim1 and off2 < lim2 and h1[lim1 - 1] == h2[lim2 - 1]:
            lim1, lim2 = lim1 - 1, lim2 - 1
        if off1 == lim1:
            for i in range(off2, lim2):
                x2.changed[x2.ref[i] + 1] = True
        elif off2 == lim2:
            for i in range(off1, lim1):
                x1.changed[x1.ref[i] + 1] = True
        else:
            i1, i2, min_lo, min_hi = _split(h1, off1, lim1, h2, off2, lim2, kvdf, kvdb, need_min, mxcost)
            todo.append((i1, lim1, i2, lim2, min_hi))
            todo.append((off1, i1, off2, i2, min_lo))
    _compact(x1, x2)
    _compact(x2, x1)
    return x1.changed, x2.changed


def _prepare(x1: _File, x2: _File) -> None:
    """xdl_trim_ends and xdl_cleanup_records: the common ends are left out, and so are lines the other side
    lacks (and repeated lines among them)."""
    n1, n2 = len(x1.recs), len(x2.recs)
    i, lim = 0, min(n1, n2)
    while i < lim and x1.ids[i] == x2.ids[i]:
        i += 1
    x1.dstart = x2.dstart = i
    lim -= i
    k = 0
    while k < lim and x1.ids[n1 - 1 - k] == x2.ids[n2 - 1 - k]:
        k += 1
    x1.dend, x2.dend = n1 - k - 1, n2 - k - 1
    count1 = Counter(x1.ids)
    count2 = Counter(x2.ids)
    for x, other in ((x1, count2), (x2, count1)):
        off = x.dstart
        mlim = min(_bogosqrt(len(x.recs)), _MAX_EQLIMIT)
        action = []
        for r in range(off, x.dend + 1):
            nm = other[x.ids[r]]
            action.append(_DISCARD if nm == 0 else _KEEP if nm < mlim else _INVESTIGATE)
        for j, act in enumerate(action):
            if act == _INVESTIGATE:
                act = _DISCARD if _clean_mmatch(action, j, len(action)) else _KEEP
            if act == _KEEP:
                x.ref.append(j + off)
            else:
                x.changed[j + off + 1] = True


def _clean_mmatch(action: list[int], i: int, length: int) -> bool:
    s, e = max(0, i - _SIMSCAN_WINDOW), min(length - 1, i + _SIMSCAN_WINDOW)
    rdis0, rpdis0 = 0, 1
    r = 1
    while i - r >= s:
        if action[i - r] == _DISCARD:
            rdis0 += 1
        elif action[i - r] == _INVESTIGATE:
            rpdis0 += 1
        else:
            break
        r += 1
    if rdis0 == 0:
        return False
    rdis1, rpdis1 = 0, 1
    r = 1
    while i + r <= e:
        if action[i + r] == _DISCARD:
            rdis1 += 1
        elif action[i + r] == _INVESTIGATE:
            rpdis1 += 1
        else:
            break
        r += 1
    if rdis1 == 0:
        return False
    rdis1 += rdis0
    rpdis1 += rpdis0
    return rpdis1 * _KPDIS_RUN < rpdis1 + rdis1


def _split(
    h1: list[int], off1: int, lim1: int, h2: list[int], off2: int, lim2: int,
    kvdf: dict[int, int], kvdb: dict[int, int], need_min: bool, mxcost: int,
) -> tuple[int, int, bool, bool]:  # fmt: skip
    """xdl_split: where the middle snake of the box is (i1, i2), and whether each half needs a minimal
    diff."""
    dmin, dmax = off1 - lim2, lim1 - off2
    fmid, bmid = off1 - off2, lim1 - lim2
    odd = (fmid - bmid) & 1
    fmin = fmax = fmid
    bmin = bmax = bmid
    kvdf[fmid] = off1
    kvdb[bmid] = lim1
    ec = 0
    while True:
        ec += 1
        got_snake = False
        if fmin > dmin:
            fmin -= 1
            kvdf[fmin - 1] = -1
        else:
            fmin += 1
        if fmax < dmax:
            fmax += 1
            kvdf[fmax + 1] = -1
        else:
            fmax -= 1
        for d in range(fmax, fmin - 1, -2):
            i1 = kvdf[d - 1] + 1 if kvdf[d - 1] >= kvdf[d + 1] else kvdf[d + 1]
            prev1 = i1
            i2 = i1 - d
            while i1 < lim1 and i2 < lim2 and h1[i1] == h2[i2]:
                i1, i2 = i1 + 1, i2 + 1
            if i1 - prev1 > _SNAKE_CNT:
                got_snake = True
            kvdf[d] = i1
            if odd and bmin <= d <= bmax and kvdb[d] <= i1:
                return i1, i2, True, True
        if bmin > dmin:
            bmin -= 1
            kvdb[bmin - 1] = _LINE_MAX
        else:
            bmin += 1
        if bmax < dmax:
            bmax += 1
            kvdb[bmax + 1] = _LINE_MAX
        else:
            bmax -= 1
        for d in range(bmax, bmin - 1, -2):
            i1 = kvdb[d - 1] if kvdb[d - 1] < kvdb[d + 1] else kvdb[d + 1] - 1
            prev1 = i1
            i2 = i1 - d
            while i1 > off1 and i2 > off2 and h1[i1 - 1] == h2[i2 - 1]:
                i1, i2 = i1 - 1, i2 - 1
            if prev1 - i1 > _SNAKE_CNT:
                got_snake = True
            kvdb[d] = i1
            if not odd and fmin <= d <= fmax and i1 <= kvdf[d]:
                return i1, i2, True, True
        if need_min:
            continue
        if got_snake and ec > _HEUR_MIN_COST:
            best, found = 0, (0, 0)
            for d in range(fmax, fmin - 1, -2):
                dd = d - fmid if d > fmid else fmid - d
                i1 = kvdf[d]
                i2 = i1 - d
                v = (i1 - off1) + (i2 - off2) - dd
                if (
                    v > _K_HEUR * ec and v > best and off1 + _SNAKE_CNT <= i1 < lim1
                    and off2 + _SNAKE_CNT <= i2 < lim2
                ):  # fmt: skip
                    k = 1
                    while h1[i1 - k] == h2[i2 - k]:
                        if k == _SNAKE_CNT:
                            best, found = v, (i1, i2)
                            break
                        k += 1
            if best > 0:
                return found[0], found[1], True, False
            for d in range(bmax, bmin - 1, -2):
                dd = d - bmid if d > bmid else bmid - d
                i1 = kvdb[d]
                i2 = i1 - d
                v = (lim1 - i1) + (lim2 - i2) - dd
                if (
                    v > _K_HEUR * ec and v > best and off1 < i1 <= lim1 - _SNAKE_CNT
                    and off2 < i2 <= lim2 - _SNAKE_CNT
                ):  # fmt: skip
                    k = 0
                    while h1[i1 + k] == h2[i2 + k]:
                        if k == _SNAKE_CNT - 1:
                            best, found = v, (i1, i2)
                            break
                        k += 1
            if best > 0:
                return found[0], found[1], False, True
        if ec >= mxcost:
            fbest = fbest1 = -1
            for d in range(fmax, fmin - 1, -2):
                i1 = min(kvdf[d], lim1)
                i2 = i1 - d
                if lim2 < i2:
                    i1, i2 = lim2 + d, lim2
                if fbest < i1 + i2:
                    fbest, fbest1 = i1 + i2, i1
            bbest = bbest1 = _LINE_MAX
            for d in range(bmax, bmin - 1, -2):
                i1 = max(off1, kvdb[d])
                i2 = i1 - d
                if i2 < off2:
                    i1, i2 = off2 + d, off2
                if i1 + i2 < bbest:
                    bbest, bbest1 = i1 + i2, i1
            if (lim1 + lim2) - bbest < fbest - (off1 + off2):
                return fbest1, fbest - fbest1, True, False
            return bbest1, bbest - bbest1, False, True


@dataclass
class _Group:
    start: int
    end: int


def _compact(x: _File, other: _File) -> None:
    """xdl_change_compact with the indent heuristic: each group of changed lines slid as far as it goes,
    then back to meet a change on the other side, or to where the indent heuristic likes it best."""
    n = len(x.recs)
    ch = x.changed  # line i is ch[i + 1]

    def match(i: int, j: int) -> bool:
        return x.ids[i] == x.ids[j]

    def init(f: _File) -> _Group:
        g = _Group(0, 0)
        while f.changed[g.end + 1]:
            g.end += 1
        return g

    def nxt(f: _File, g: _Group) -> bool:
        if g.end == len(f.recs):
            return False
        g.start = g.end + 1
        g.end = g.start
        while f.changed[g.end + 1]:
            g.end += 1
        return True

    def prev(f: _File, g: _Group) -> bool:
        if g.start == 0:
            return False
        g.end = g.start - 1
        g.start = g.end
        while f.changed[g.start]:
            g.start -= 1
        return True

    def down(g: _Group) -> bool:
        if g.end < n and match(g.start, g.end):
            ch[g.start + 1] = False
            ch[g.end + 1] = True
            g.start += 1
            g.end += 1
            while ch[g.end + 1]:
                g.end += 1
            return True
        return False

    def up(g: _Group) -> bool:
        if g.start > 0 and match(g.start - 1, g.end - 1):
            g.start -= 1
            g.end -= 1
            ch[g.start + 1] = True
            ch[g.end + 1] = False
            while ch[g.start]:
                g.start -= 1
            return True
        return False

    g, go = init(x), init(other)
    while True:
        if g.end != g.start:
            while True:
                size = g.end - g.start
                end_matching_other = -1
                while up(g):
                    if not prev(other, go):
                        raise AssertionError("group sync broken sliding up")
                earliest_end = g.end
                if go.end > go.start:
                    end_matching_other = g.end
                while down(g):
                    if not nxt(other, go):
                        raise AssertionError("group sync broken sliding down")
                    if go.end > go.start:
                        end_matching_other = g.end
                if size == g.end - g.start:
                    break
            if g.end == earliest_end:
                pass
            elif end_matching_other != -1:
                while go.end == go.start:
                    if not up(g) or not prev(other, go):
                        raise AssertionError("match disappeared")
            else:
                best_shift, best = -1, (0, 0)
                shift = max(earliest_end, g.end - size - 1, g.end - _INDENT_MAX_SLIDING)
                while shift <= g.end:
                    score = _score(x.recs, shift, (0, 0))
                    score = _score(x.recs, shift - size, score)
                    if best_shift == -1 or _score_cmp(score, best) <= 0:
                        best, best_shift = score, shift
                    shift += 1
                while g.end > best_shift:
                    if not up(g) or not prev(other, go):
                        raise AssertionError("best shift unreached")
        if not nxt(x, g):
            break
        if not nxt(other, go):
            raise AssertionError("group sync broken moving to next group")


def _indent(rec: bytes) -> int:
    """get_indent: the line's indentation (a tab to the next multiple of 8), -1 when it is blank."""
    ret = 0
    for c in rec:
        if c not in b" \t\n\v\f\r":
            return ret
        if c == 0x20:
            ret += 1
        elif c == 0x09:
            ret += 8 - ret % 8
        if ret >= _MAX_INDENT:
            return _MAX_INDENT
    return -1


def _score(recs: list[bytes], split: int, score: tuple[int, int]) -> tuple[int, int]:
    """measure_split and score_add_split: (effective indent, penalty) with this split's added."""
    n = len(recs)
    end_of_file = split >= n
    indent = -1 if end_of_file else _indent(recs[split])
    pre_blank, pre_indent = 0, -1
    for i in range(split - 1, -1, -1):
        pre_indent = _indent(recs[i])
        if pre_indent != -1:
            break
        pre_blank += 1
        if pre_blank == _MAX_BLANKS:
            pre_indent = 0
            break
    post_blank, post_indent = 0, -1
    for i in range(split + 1, n):
        post_indent = _indent(recs[i])
        if post_indent != -1:
            break
        post_blank += 1
        if post_blank == _MAX_BLANKS:
            post_indent = 0
            break
    effective, penalty = score
    if pre_indent == -1 and pre_blank == 0:
        penalty += 1  # START_OF_FILE_PENALTY
    if end_of_file:
        penalty += 21  # END_OF_FILE_PENALTY
    blank_after = 1 + post_blank if indent == -1 else 0
    total_blank = pre_blank + blank_after
    penalty += -30 * total_blank + 6 * blank_after  # TOTAL_BLANK_WEIGHT, POST_BLANK_WEIGHT
    here = indent if indent != -1 else post_indent
    any_blanks = total_blank != 0
    effective += here
    if here == -1 or pre_indent == -1 or here == pre_indent:
        pass
    elif here > pre_indent:
        penalty += 10 if any_blanks else -4  # RELATIVE_INDENT(_WITH_BLANK)_PENALTY
    elif post_indent != -1 and post_indent > here:
        penalty += 17 if any_blanks else 24  # RELATIVE_OUTDENT(_WITH_BLANK)_PENALTY
    else:
        penalty += 17 if any_blanks else 23  # RELATIVE_DEDENT(_WITH_BLANK)_PENALTY
    return effective, penalty


def _score_cmp(one: tuple[int, int], two: tuple[int, int]) -> int:
    return 60 * ((one[0] > two[0]) - (one[0] < two[0])) + (one[1] - two[1])  # INDENT_WEIGHT


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
        self.replied: list[tuple[int, int, str]] = []  # (chat, message replied to, text): typed answers
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

    def reply(self, chat_id: int, message_id: int, text: str) -> None:
        if self.fail:
            raise self.fail.pop(0)
        self.replied.append((chat_id, message_id, text))


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
