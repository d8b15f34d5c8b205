"""The remote is the arbiter between machines: a claim is a compare-and-swap push.

- ``pull`` fetches and brings this clone to the remote's tip: a fast-forward or, when this clone has
  commits the remote lacks, those commits rebuilt on the remote's tip (vaultops's own by replaying its
  insertions, the person's by git's three-way file merge).  Never a merge commit, never conflict markers;
  when it cannot be done cleanly the clone stays as it is and says why (``blocked``), and nothing is
  claimed until it is resolved.
- ``swap`` builds a commit from the parent's tree, not from the working tree, and pushes it.  The push
  fails if anyone pushed in between: that is the compare-and-swap.  The clone only follows once the push
  went through, so a claim that lost the race leaves nothing behind, even after a kill -9.
- ``push`` sends this clone's own commits (results), pulling first when the remote moved.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import subprocess
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vaultops.base import faults
from vaultops.base.confine import make_dirs, write_bytes
from vaultops.base.errors import VaultopsError
from vaultops.base.layout import STATE_DIR
from vaultops.decide.halt import carry_halt, person_changed
from vaultops.sync.git import AUTHOR_PREFIX, Git, GitError, GitGaveUp, Moved, identity, last_line
from vaultops.sync.replay import is_insertion, replay


@dataclass
class Pulled:
    online: bool
    reason: str = ""  # why the remote could not be reached
    stopped: bool = False  # the fetch was given up on because vaultops is stopping: nothing to say
    blocked: str = ""  # why this clone could not follow the remote
    ahead: bool = False  # this clone has commits the remote lacks (to push)
    moved: bool = False  # the working tree was brought to a new commit
    rewritten: str = ""  # the remote's history was rewritten behind this clone: the sentence saying so
    late: list[str] = field(default_factory=list)  # requests whose replayed results became late results
    dropped: list[str] = field(default_factory=list)  # replayed lines that found no place


@dataclass(frozen=True)
class Pushed:
    kind: str  # "pushed" | "behind" (someone pushed first) | "failed" (unreachable, refused)
    detail: str = ""
    sha: str = ""
    problem: str = ""  # when failed: "unreachable" or "refused"; "" when given up on to stop


class Remote:
    def __init__(self, git: Git, name: str, branch: str, rendered: Sequence[str] = ()) -> None:
        self.git = git
        self.name = name
        self.branch = branch
        # notes vaultops renders whole (the dashboard, the machines' notes: a path, or a folder ending in
        # "/"): when the remote changed one too, its version is kept, and the next pass renders it again
        self.rendered = tuple(rendered)

    def is_rendered(self, path: str) -> bool:
        return any(path == r or (r.endswith("/") and path.startswith(r)) for r in self.rendered)

    @property
    def tracking(self) -> str:
        return f"refs/remotes/{self.name}/{self.branch}"

    @classmethod
    def of(cls, git: Git, name: str, rendered: Sequence[str] = ()) -> Remote | None:
        """The remote this clone syncs through, or None when there is no such remote.  With no branch
        checked out (a rebase under way, say) it still is one: nothing is claimed until there is."""
        if git.run("remote", "get-url", name, check=False).returncode != 0:
            return None
        return cls(git, name, _branch_of(git), rendered)

    # --- reading the remote ---------------------------------------------------------------------

    def fetch(self) -> str:
        """ "" when fetched (or the remote has no such branch yet), else why it could not be reached.
        Raises GitGaveUp (``stopped``) when the fetch was given up on because vaultops is stopping."""
        refspec = f"+refs/heads/{self.branch}:{self.tracking}"
        try:
            proc = self.git.run(
                "fetch", "--quiet", "--no-tags", self.name, refspec, check=False, network=True
            )
        except GitGaveUp as exc:
            if exc.stopped:
                raise
            return f"{self.name} cannot be reached (it did not answer within {exc.seconds:.0f} s)"
        if proc.returncode == 0:
            return ""
        if "couldn't find remote ref" in proc.stderr:
            with contextlib.suppress(GitError):
                self.git.run("update-ref", "-d", self.tracking)
            return ""
        if _LOCAL_REF_LOCKED.search(proc.stderr):
            # the remote answered; another git on this clone (obsidian-git's fetch) held the tracking ref at
            # that moment: a race on this machine, not a remote that is down.  The pass goes on with the tip
            # as last fetched; a claim built on it is a compare-and-swap, so it cannot win on stale news.
            return ""
        return f"{self.name} cannot be reached ({git_says(proc.stderr)})"

    def tip(self) -> str | None:
        return self.git.rev(self.tracking)

    def head(self) -> str | None:
        return self.git.rev("HEAD")

    def is_ancestor(self, older: str, newer: str) -> bool:
        return self.git.run("merge-base", "--is-ancestor", older, newer, check=False).returncode == 0

    # --- following it ---------------------------------------------------------------------------

    def pull(self) -> Pulled:
        busy = self.git.busy()
        if busy:
            return Pulled(True, blocked=f"{busy}; vaultops waits until it is finished or aborted")
        self.branch = _branch_of(self.git) or self.branch
        seen, tracked = self.git.rev(self.seen_ref), self.tip()  # the remote as this clone knew it
        try:
            why = self.fetch()
        except GitGaveUp as exc:
            return Pulled(False, reason=str(exc), stopped=True, ahead=self._ahead())
        if why:
            return Pulled(False, reason=why, ahead=self._ahead())
        remote, head = self.tip(), self.head()
        if remote is not None:
            lost = self._lost([k for k in (seen, tracked) if k and k != remote], remote)
            if lost:
                return self._follow_rewritten(remote, head, lost)
            if seen != remote:
                self._saw(remote)
        if remote is None or remote == head:
            return Pulled(True, ahead=remote is None and head is not None)
        if head is None or self.is_ancestor(head, remote):
            blocked = self.keep_to(remote, head)
            return Pulled(True, blocked=blocked, moved=not blocked)
        if self.is_ancestor(remote, head):
            return Pulled(True, ahead=True)
        pulled = Pulled(True, ahead=True)
        try:
            rebuilt = self.rebuild(remote, head, pulled)
        except GitError as exc:
            pulled.blocked = str(exc)
            return pulled
        if rebuilt is None:
            return pulled
        pulled.blocked = self.keep_to(rebuilt, head)
        pulled.moved = not pulled.blocked
        return pulled

    def _ahead(self) -> bool:
        remote, head = self.tip(), self.head()
        return head is not None and head != remote

    def keep_to(self, sha: str, head: str | None) -> str:
        """Move this clone from ``head`` to ``sha``, updating the files that differ and keeping the
        person's uncommitted changes; "" when done, else why not."""
        if head is None:  # a clone with no commit yet
            proc = self.git.run("reset", "-q", "--keep", sha, check=False)
            moved = Moved() if proc.returncode == 0 else Moved("local changes", last_line(proc.stderr))
        else:
            head = self._finish_unfinished_move(head)
            moved = self.git.move_head(head, sha)
            if moved.why == "local changes":
                # A move cut short (kill -9) leaves files already at `sha` that look like local changes.
                self._stage_files_already_at(sha)
                moved = self.git.move_head(head, sha)
            if moved.why == "local changes" and self._put_back_renderings(head, sha):
                moved = self.git.move_head(head, sha)
        if moved.why == "busy":
            return f"{moved.detail}; vaultops follows the remote on its next pass"
        if moved.why:
            return (
                f"this clone has uncommitted changes in files the remote changed too ({moved.detail}); "
                "commit them (obsidian-git does) and vaultops follows the remote again"
            )
        return ""

    def _put_back_renderings(self, head: str, sha: str) -> bool:
        """Local changes to the notes vaultops renders whole, in the way of the move: they are nobody's
        work (each note says edits there are replaced), so the committed version is put back and the next
        pass renders it again.  True when there were any."""
        changed = self.git.run("diff", "--name-only", "-z", "--no-renames", head, sha, check=False)
        put_back = False
        for path in filter(None, changed.stdout.split("\0")):
            if not self.is_rendered(path):
                continue
            committed = self.git.blob(head, path)
            on_disk = self.git.root / path
            if on_disk.is_file() and person_changed(committed, on_disk.read_bytes()):
                continue  # the person's halt, typed here: theirs, never put back (``decide.halt``)
            if committed is not None and (not on_disk.is_file() or on_disk.read_bytes() != committed):
                self.git.run("checkout", head, "--", path, check=False)
                put_back = True
            elif committed is None and on_disk.is_file() and not on_disk.is_symlink():
                on_disk.unlink()
                put_back = True
        return put_back

    def _finish_unfinished_move(self, head: str) -> str:
        """A move killed half-way left files at its target while HEAD stayed: finish it first (the
        files already there are staged, so that they do not count as the person's changes)."""
        unfinished = self.git.unfinished_move()
        if unfinished is None:
            return head
        old, new = unfinished
        if old == head:
            self._stage_files_already_at(new)
            moved = self.git.move_head(old, new)
            if not moved.why:
                return new
            if moved.why == "busy":
                return head  # tried again on the next pass
        self.git.forget_move()
        return head

    def _stage_files_already_at(self, sha: str) -> None:
        changed = self.git.run("diff", "--name-only", "-z", "--no-renames", "HEAD", sha, check=False)
        for path in filter(None, changed.stdout.split("\0")):
            on_disk = self.git.root / path
            target = self.git.blob(sha, path)
            if on_disk.is_file() and target is not None and on_disk.read_bytes() == target:
                self.git.run("add", "--", path, check=False)

    # --- a remote rewritten behind this clone (force-pushed) -------------------------------------

    @property
    def seen_ref(self) -> str:
        """Where this clone keeps the remote's tip as it last followed it: the tracking ref alone will
        not do, as another tool's fetch (obsidian-git's) moves it too."""
        return f"refs/vaultops/seen/{self.name}/{self.branch}"

    def _saw(self, remote: str) -> None:
        self.git.run("update-ref", self.seen_ref, remote, check=False)

    def _lost(self, known: list[str], remote: str) -> dict[str, bool]:
        """The commits this clone saw on the remote that its new tip no longer has, each with whether
        vaultops made it: empty unless the remote's history was rewritten."""
        if all(self.is_ancestor(k, remote) for k in known):
            return {}
        log = self.git.run("log", "--format=%H%x00%an", *known, "--not", remote).stdout
        return {sha: name.startswith(AUTHOR_PREFIX) for sha, name in _pairs(log)}

    def _follow_rewritten(self, remote: str, head: str | None, lost: dict[str, bool]) -> Pulled:
        """Follow a remote whose history was rewritten: its tip as the person left it (the commits of
        theirs it dropped stay dropped), with vaultops's own commits from what was dropped put back on top
        (the claims and results that keep a request from running twice) and this clone's commits the
        remote never had.  This clone's old history is kept under a ref of its own."""
        pulled = Pulled(True, ahead=True)
        if head and self.git.run("merge-base", remote, head, check=False).returncode != 0:
            pulled.blocked = (
                f"{self.name}/{self.branch} shares no history with this clone (another repository?); check "
                f"`git remote -v`, and vaultops follows it again once it is this vault's remote"
            )
            return pulled
        dropped = frozenset(sha for sha, ours in lost.items() if not ours)
        kept = f"refs/vaultops/before-rewrite/{head[:12]}" if head else ""
        try:
            rebuilt = self.rebuild(remote, head, pulled, skip=dropped) if head else remote
            if rebuilt is None:
                return pulled
            if head:
                self.git.run("update-ref", kept, head)
        except GitError as exc:
            pulled.blocked = str(exc)
            return pulled
        pulled.blocked = self.keep_to(rebuilt, head)
        if pulled.blocked:
            return pulled
        self._saw(remote)
        pulled.moved, pulled.ahead = rebuilt != head, rebuilt != remote
        done = [f"kept this clone's old history at {kept}"] if kept else []
        if pulled.late:  # not taken over: claimed again by a machine that never saw the claim
            done.append(f"kept its results for {', '.join(dict.fromkeys(pulled.late))} as late results")
            pulled.late = []
        pulled.rewritten = (
            f"the remote's history was rewritten ({self.name}/{self.branch} was force-pushed, and "
            f"{len(lost)} commit(s) this clone had seen there are gone): vaultops put back the claims and "
            f"results of the {sum(lost.values())} of them that were its own, so that nothing runs twice, "
            "and left the person's dropped commits out" + "".join(f", {what}" for what in done)
        )
        return pulled

    def rebuild(self, onto: str, head: str, pulled: Pulled, skip: frozenset[str] = frozenset()) -> str | None:
        """This clone's commits after ``onto``'s fork point, rebuilt one by one on ``onto``, but those in
        ``skip``.  None (and ``pulled.blocked`` set) when one of the person's commits does not merge
        cleanly."""
        listed = self.git.run("rev-list", "--reverse", "--parents", f"{onto}..{head}").stdout.split("\n")
        base = onto
        for line in filter(None, listed):
            commit, *parents = line.split()
            if commit in skip:
                continue
            if len(parents) != 1:
                pulled.blocked = (
                    f"this clone has a merge commit ({commit[:8]}) that the remote lacks; "
                    "push it or resolve it with git, and vaultops follows the remote again"
                )
                return None
            rebuilt = self._rebuild_one(commit, parents[0], base, pulled)
            if rebuilt is None:
                return None
            base = rebuilt
        return base

    def _rebuild_one(self, commit: str, parent: str, base: str, pulled: Pulled) -> str | None:
        fmt = "%an%x00%ae%x00%aI%x00%B"
        name, email, date, message = self.git.run("log", "-1", f"--format={fmt}", commit).stdout.split(
            "\0", 3
        )
        ours = name.startswith(AUTHOR_PREFIX)
        changed = self.git.run(
            "diff-tree", "--no-commit-id", "--name-only", "-r", "-z", "--no-renames", parent, commit
        )
        files: dict[str, bytes | None] = {}
        for path in filter(None, changed.stdout.split("\0")):
            before, after, now = (self.git.blob(c, path) for c in (parent, commit, base))
            if now == before:
                files[path] = after  # the remote did not touch it
            elif after == before or (ours and after is None):
                continue  # vaultops never deletes a note
            elif ours and self.is_rendered(path):
                # the remote's rendering stands (lines of a rendering are not insertions to replay), with
                # the person's halt typed on this machine in it: a halt is never lost to a redraw
                if (carried := carry_halt(before, after, now or b"")) is None:
                    continue
                files[path] = carried
            elif ours and now is None:
                pulled.dropped.append(
                    f"{path}: deleted on the remote; this machine's lines in it are dropped"
                )
            elif ours and after is not None and now is not None:
                files[path] = _replayed(path, before, after, now, pulled)
            else:
                merged = self._merge_file(now, before, after) if before and after and now else None
                if merged is None and after is not None and now is not None:
                    merged = _replayed_insertions(path, before, after, now, pulled)
                if merged is None:
                    pulled.blocked = (
                        f"{path}: this clone's commit {commit[:8]} and the remote changed it in ways that "
                        "do not merge; resolve it with git (or obsidian-git), and vaultops follows the "
                        "remote again"
                    )
                    return None
                files[path] = merged
            twice = _doubled(path, files.get(path), now, after)
            if twice:  # a merge that would hold a request twice is no merge: both versions are kept
                pulled.blocked = self._kept_apart(path, commit, after, twice)
                return None
        files = {path: data for path, data in files.items() if data != self.git.blob(base, path)}
        if not files:  # the remote has every change it held already (or made it its own way: a rendering)
            return base
        return self.git.commit_files(base, files, message.rstrip("\n") + "\n", (name, email, date))

    def _kept_apart(self, path: str, commit: str, local: bytes | None, rid: str) -> str:
        """Why this clone stopped following the remote: merging ``commit``'s version of ``path`` with the
        remote's would put ``rid`` in twice.  This clone's version is also saved to a file of its own under
        the state folder, for the person to compare; the clone itself is left exactly as it is."""
        kept = f"in its commit {commit[:8]}"
        if local is not None:
            saved = Path(STATE_DIR) / "conflicts" / f"{path.replace('/', '__')}.{commit[:8]}"
            with contextlib.suppress(OSError, VaultopsError):  # a full disk: the commit still holds it
                make_dirs((self.git.root / saved).parent, self.git.root)
                write_bytes(self.git.root / saved, local, self.git.root)
                kept = f"in {saved.as_posix()} and in its commit {commit[:8]}"
        return (
            f"{path}: merging this clone's version with the remote's would put {rid} in it twice, so "
            f"vaultops stopped: this clone's version is kept {kept}, the remote's at "
            f"{self.name}/{self.branch}; merge them with git (or obsidian-git) and vaultops follows the "
            "remote again"
        )

    def _merge_file(self, current: bytes, base: bytes, other: bytes) -> bytes | None:
        folder = self.git.git_dir
        token = f"{os.getpid()}-{secrets.token_hex(4)}"
        paths = [folder / f"vaultops-merge-{token}-{part}" for part in ("current", "base", "other")]
        try:
            for path, data in zip(paths, (current, base, other), strict=True):
                path.write_bytes(data)
            proc = subprocess.run(
                ["git", "merge-file", "-p", *map(str, paths)], capture_output=True, timeout=120, check=False
            )
        finally:
            for path in paths:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        return proc.stdout if proc.returncode == 0 else None

    # --- writing to it --------------------------------------------------------------------------

    def swap(
        self, files: dict[str, bytes], message: str, agent: str, head: str | None, stage: str = "claim"
    ) -> Pushed:
        """Commit ``files`` on ``head`` (this clone's HEAD, as the caller read it with the files' bytes)
        without touching the working tree, and push it: the compare-and-swap.  ``stage`` names the fault
        points around the push (``claim.after_push``, ``result.after_push``)."""
        name, email = identity(agent)
        commit = self.git.commit_files(head, dict(files), message, (name, email, ""))
        faults.reach(f"{stage}.before_push")
        pushed = self.push(commit)
        if pushed.kind == "pushed":
            faults.reach(f"{stage}.after_push")
        return pushed

    def adopt(self, commit: str, old_head: str | None, paths: list[str]) -> bool:
        """Make a pushed commit this clone's HEAD; the caller has written the same lines into the files.
        False when HEAD moved meanwhile (a commit by obsidian-git): the next pull brings it in."""
        args = ["update-ref", "-m", "vaultops: pushed", "HEAD", commit]
        if self.git.run(*args, *([old_head] if old_head else []), check=False).returncode != 0:
            return False
        self.git.run("reset", "-q", commit, "--", *paths, check=False)
        return True

    def push(self, commit: str | None = None) -> Pushed:
        sha = commit or self.head()
        if sha is None:
            return Pushed("pushed")
        faults.reach("push.before")
        refspec = f"{sha}:refs/heads/{self.branch}"
        try:
            proc = self.git.run("push", "--porcelain", self.name, refspec, check=False, network=True)
        except GitGaveUp as exc:
            if exc.stopped:
                return Pushed("failed", f"the push to {self.name} was given up on: vaultops is stopping", sha)
            why = f"{self.name} cannot be reached (it did not answer a push within {exc.seconds:.0f} s)"
            return Pushed("failed", why, sha, "unreachable")
        if proc.returncode == 0:
            self.git.run("update-ref", self.tracking, sha, check=False)
            return Pushed("pushed", sha=sha)
        return self._not_pushed(proc, sha)

    def _not_pushed(self, proc: subprocess.CompletedProcess[str], sha: str) -> Pushed:
        """Why a push did not go through: someone pushed first (a race, nothing wrong), the remote
        refused it (a hook, a protected branch: in its own words), or it could not be reached."""
        # --porcelain: one line per ref, "!<TAB>from:to<TAB>[rejected] (fetch first)" when refused
        refused = [ln.split("\t")[-1] for ln in proc.stdout.splitlines() if ln.startswith("!")]
        if not refused:
            return Pushed(
                "failed", f"{self.name} cannot be reached ({git_says(proc.stderr)})", sha, "unreachable"
            )
        status = refused[0]
        if any(race in status for race in _RACES) or _MOVED_MEANWHILE.search(proc.stderr):
            return Pushed("behind", "someone pushed first", sha)
        reason = status[status.find("(") + 1 : status.rfind(")")] if "(" in status else status
        detail = f"{self.name} refused the push ({_clean(reason)})"
        said = remote_says(proc.stderr)
        return Pushed("failed", f"{detail}: {said}" if said else detail, sha, "refused")

    def merge_through(self) -> Pushed:
        """The wrong way, for the control run of the race test only (fault ``claims.merge``): merge the
        remote into a claim that lost the race, and push that."""
        self.git.run("pull", "--no-rebase", "--no-edit", "-X", "ours", self.name, self.branch, check=False)
        return self.push()


# how git says the remote moved between this clone's fetch and its push: a race, not a problem
_RACES = ("fetch first", "non-fast-forward", "stale info")
# the remote's own words when another push updated the branch while this one was being received
# (or while another push held its lock: "Unable to create '…/refs/heads/main.lock': File exists")
_MOVED_MEANWHILE = re.compile(
    r"cannot lock ref '[^']*': (?:is at \w+ but expected \w+|unable to create '[^']*\.lock': file exists)"
    r"|incorrect old value provided",
    re.IGNORECASE,
)
# a fetch that reached the remote but could not write this clone's tracking ref (another git held it)
_LOCAL_REF_LOCKED = re.compile(r"\(unable to update local ref\)|cannot lock ref 'refs/remotes/")
# what git adds to every failure to reach a remote, which says nothing about this one
_BOILERPLATE = (
    "could not read from remote repository",
    "please make sure you have the correct access rights",
    "and the repository exists",
)
_CONTROL = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|[\x00-\x1f\x7f]")
SAID_LIMIT = 300  # characters of the remote's own words kept in a sentence


def _clean(text: str) -> str:
    """One line of what a remote or git printed, without colours or control characters."""
    return " ".join(_CONTROL.sub(" ", text).split())


def _shorten(text: str) -> str:
    return text if len(text) <= SAID_LIMIT else text[: SAID_LIMIT - 1].rstrip() + "…"


def git_says(stderr: str) -> str:
    """The line of git's error output that says why the remote could not be reached (ssh's or git's
    first real complaint), without the lines git adds to every such failure."""
    for line in stderr.splitlines():
        text = _clean(line)
        if text and not any(b in text.lower() for b in _BOILERPLATE):
            for prefix in ("fatal: ", "error: "):
                text = text.removeprefix(prefix)
            return _shorten(text.rstrip("."))
    # all git printed was its boilerplate: say that in plain words, never a fragment of it
    return "git says only that it could not read from it"


def remote_says(stderr: str) -> str:
    """What the remote itself printed (a hook's reason: the lines git shows as "remote: …"), one line."""
    said = [_clean(line[len("remote:") :]) for line in stderr.splitlines() if line.startswith("remote:")]
    return _shorten(" ".join(s for s in said if s))


def _replayed(path: str, before: bytes | None, after: bytes, now: bytes, pulled: Pulled) -> bytes:
    """The lines a commit inserted into ``path``, inserted again into the remote's version; a note created
    on both sides (today's daily note, say) has what both versions start with as its base."""
    shared = before if before is not None else _common_head(after, now)
    replayed = replay(path, shared, after, now)
    pulled.late += list(replayed.late)
    pulled.dropped += list(replayed.dropped)
    return replayed.raw


def _replayed_insertions(
    path: str, before: bytes | None, after: bytes, now: bytes, pulled: Pulled
) -> bytes | None:
    """A person's commit that only added lines to a note (the commonest clash: a request appended at the
    end of the inbox while another machine wrote a result there), replayed like vaultops's own commits;
    None when it changed or removed lines, which only the person can weigh."""
    shared = before if before is not None else _common_head(after, now)
    if not path.endswith(".md") or not is_insertion(shared, after):
        return None
    return _replayed(path, shared, after, now, pulled)


_REQUEST_HEADING = re.compile(rb"^##[ \t]+(REQ-[A-Za-z0-9._-]+)", re.MULTILINE)


def request_headings(raw: bytes) -> Counter[bytes]:
    """How often each request id stands in a ``## REQ-`` heading of the note."""
    return Counter(_REQUEST_HEADING.findall(raw))


def _doubled(path: str, merged: bytes | None, now: bytes | None, after: bytes | None) -> str:
    """A request that ``merged`` holds more often than both versions it was made from ("" when none):
    a block the remote already had, inserted again (a claim commit that carried the person's block, met
    by the person's own commit of it).  Later passes would write under the second copy."""
    if merged is None or not path.endswith(".md"):
        return ""
    most = request_headings(now or b"") | request_headings(after or b"")  # the larger count of each
    twice = [rid for rid, n in request_headings(merged).items() if n > most[rid]]
    return twice[0].decode("ascii") if twice else ""


def _pairs(log: str) -> list[tuple[str, str]]:
    return [(sha, name) for sha, _, name in (line.partition("\0") for line in log.splitlines() if line)]


def _branch_of(git: Git) -> str:
    """The branch checked out, or the one a rebase under way works on; "" when neither."""
    branch = git.run("symbolic-ref", "--short", "-q", "HEAD", check=False).stdout.strip()
    if branch:
        return branch
    for folder in ("rebase-merge", "rebase-apply"):
        with contextlib.suppress(OSError):
            return (git.git_dir / folder / "head-name").read_text().strip().removeprefix("refs/heads/")
    return ""


def _common_head(a: bytes, b: bytes) -> bytes:
    """The whole lines that ``a`` and ``b`` both start with."""
    head = []
    for x, y in zip(a.splitlines(keepends=True), b.splitlines(keepends=True), strict=False):
        if x != y:
            break
        head.append(x)
    return b"".join(head)
