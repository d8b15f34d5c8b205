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
import secrets
import subprocess
from dataclasses import dataclass, field

from vaultops import faults
from vaultops.sync.git import AUTHOR_PREFIX, Git, GitError, identity
from vaultops.sync.replay import replay

FETCH_TIMEOUT = 60  # seconds: a remote that has not answered by then is unreachable for this pass


@dataclass
class Pulled:
    online: bool
    reason: str = ""  # why the remote could not be reached
    blocked: str = ""  # why this clone could not follow the remote
    ahead: bool = False  # this clone has commits the remote lacks (to push)
    moved: bool = False  # the working tree was brought to a new commit
    late: list[str] = field(default_factory=list)  # requests whose replayed results became late results
    dropped: list[str] = field(default_factory=list)  # replayed lines that found no place


@dataclass(frozen=True)
class Pushed:
    kind: str  # "pushed" | "behind" (someone pushed first) | "failed" (unreachable, refused)
    detail: str = ""
    sha: str = ""


class Remote:
    def __init__(self, git: Git, name: str, branch: str) -> None:
        self.git = git
        self.name = name
        self.branch = branch
        self.tracking = f"refs/remotes/{name}/{branch}"

    @classmethod
    def of(cls, git: Git, name: str) -> Remote | None:
        """The remote this clone syncs through, or None (no such remote, or no branch checked out)."""
        if git.run("remote", "get-url", name, check=False).returncode != 0:
            return None
        branch = git.run("symbolic-ref", "--short", "-q", "HEAD", check=False).stdout.strip()
        return cls(git, name, branch) if branch else None

    # --- reading the remote ---------------------------------------------------------------------

    def fetch(self) -> str:
        """ "" when fetched (or the remote has no such branch yet), else why it could not be reached."""
        refspec = f"+refs/heads/{self.branch}:{self.tracking}"
        try:
            proc = self.git.run("fetch", "--quiet", "--no-tags", self.name, refspec, check=False)
        except subprocess.TimeoutExpired:
            return f"{self.name} did not answer a fetch"
        if proc.returncode == 0:
            return ""
        detail = _last_line(proc.stderr)
        if "couldn't find remote ref" in proc.stderr:
            with contextlib.suppress(GitError):
                self.git.run("update-ref", "-d", self.tracking)
            return ""
        return f"{self.name} cannot be reached ({detail})"

    def tip(self) -> str | None:
        return self.git.rev(self.tracking)

    def head(self) -> str | None:
        return self.git.rev("HEAD")

    def is_ancestor(self, older: str, newer: str) -> bool:
        return self.git.run("merge-base", "--is-ancestor", older, newer, check=False).returncode == 0

    # --- following it ---------------------------------------------------------------------------

    def pull(self) -> Pulled:
        why = self.fetch()
        if why:
            return Pulled(False, reason=why, ahead=self._ahead())
        remote, head = self.tip(), self.head()
        if remote is None or remote == head:
            return Pulled(True, ahead=remote is None and head is not None)
        if head is None or self.is_ancestor(head, remote):
            blocked = self.keep_to(remote)
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
        pulled.blocked = self.keep_to(rebuilt)
        pulled.moved = not pulled.blocked
        return pulled

    def _ahead(self) -> bool:
        remote, head = self.tip(), self.head()
        return head is not None and head != remote

    def keep_to(self, sha: str) -> str:
        """Move this clone to ``sha``, updating the files that differ and keeping the person's uncommitted
        changes; "" when done, else why not (those changes touch the same files)."""
        proc = self.git.run("reset", "-q", "--keep", sha, check=False)
        if proc.returncode != 0:
            # A move cut short (kill -9) leaves files already at `sha` that look like local changes.
            self._stage_files_already_at(sha)
            proc = self.git.run("reset", "-q", "--keep", sha, check=False)
        if proc.returncode == 0:
            return ""
        why = _last_line(proc.stderr)
        return (
            f"this clone has uncommitted changes in files the remote changed too ({why}); "
            "commit them (obsidian-git does) and vaultops follows the remote again"
        )

    def _stage_files_already_at(self, sha: str) -> None:
        changed = self.git.run("diff", "--name-only", "-z", "--no-renames", "HEAD", sha, check=False)
        for path in filter(None, changed.stdout.split("\0")):
            on_disk = self.git.root / path
            target = self.git.blob(sha, path)
            if on_disk.is_file() and target is not None and on_disk.read_bytes() == target:
                self.git.run("add", "--", path, check=False)

    def rebuild(self, onto: str, head: str, pulled: Pulled) -> str | None:
        """This clone's commits after ``onto``'s fork point, rebuilt one by one on ``onto``.  None (and
        ``pulled.blocked`` set) when one of the person's commits does not merge cleanly."""
        listed = self.git.run("rev-list", "--reverse", "--parents", f"{onto}..{head}").stdout.split("\n")
        base = onto
        for line in filter(None, listed):
            commit, *parents = line.split()
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
            elif ours and now is None:
                pulled.dropped.append(
                    f"{path}: deleted on the remote; this machine's lines in it are dropped"
                )
            elif ours and after is not None and now is not None:
                # created on both sides (today's daily note, say): what they share is the base
                shared = before if before is not None else _common_head(after, now)
                replayed = replay(path, shared, after, now)
                files[path] = replayed.raw
                pulled.late += list(replayed.late)
                pulled.dropped += list(replayed.dropped)
            else:
                merged = self._merge_file(now, before, after) if before and after and now else None
                if merged is None:
                    pulled.blocked = (
                        f"{path}: this clone's commit {commit[:8]} and the remote changed it in ways that "
                        "do not merge; resolve it with git (or obsidian-git), and vaultops follows the "
                        "remote again"
                    )
                    return None
                files[path] = merged
        return self.git.commit_files(base, files, message.rstrip("\n") + "\n", (name, email, date))

    def _merge_file(self, current: bytes, base: bytes, other: bytes) -> bytes | None:
        folder = self.git.root / ".git"
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

    def swap(self, files: dict[str, bytes], message: str, agent: str) -> tuple[Pushed, str | None]:
        """Commit ``files`` on this clone's HEAD without touching the working tree, and push it: the
        compare-and-swap.  Returns the push and the HEAD it was built on."""
        head = self.head()
        name, email = identity(agent)
        commit = self.git.commit_files(head, dict(files), message, (name, email, ""))
        faults.reach("claim.before_push")
        pushed = self.push(commit)
        if pushed.kind == "pushed":
            faults.reach("claim.after_push")
        return pushed, head

    def adopt(self, commit: str, old_head: str | None, paths: list[str]) -> bool:
        """Make a pushed commit this clone's HEAD; the caller has written the same lines into the files.
        False when HEAD moved meanwhile (a commit by obsidian-git): the next pull brings it in."""
        args = ["update-ref", "-m", "vaultops: claim", "HEAD", commit]
        if self.git.run(*args, *([old_head] if old_head else []), check=False).returncode != 0:
            return False
        self.git.run("reset", "-q", commit, "--", *paths, check=False)
        return True

    def push(self, commit: str | None = None) -> Pushed:
        sha = commit or self.head()
        if sha is None:
            return Pushed("pushed")
        faults.reach("push.before")
        try:
            proc = self.git.run(
                "push", "--porcelain", self.name, f"{sha}:refs/heads/{self.branch}", check=False
            )
        except subprocess.TimeoutExpired:
            return Pushed("failed", f"{self.name} did not answer a push")
        out = proc.stdout + proc.stderr
        if proc.returncode == 0:
            self.git.run("update-ref", self.tracking, sha, check=False)
            return Pushed("pushed", sha=sha)
        if "[rejected]" in out and any(w in out for w in ("fetch first", "non-fast-forward", "stale info")):
            return Pushed("behind", "someone pushed first", sha)
        why = _last_line(out)
        return Pushed("failed", f"{self.name} refused the push or cannot be reached ({why})", sha)

    def merge_through(self) -> Pushed:
        """The wrong way, for the control run of the race test only (fault ``claims.merge``): merge the
        remote into a claim that lost the race, and push that."""
        self.git.run("pull", "--no-rebase", "--no-edit", "-X", "ours", self.name, self.branch, check=False)
        return self.push()


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "no detail"


def _common_head(a: bytes, b: bytes) -> bytes:
    """The whole lines that ``a`` and ``b`` both start with."""
    head = []
    for x, y in zip(a.splitlines(keepends=True), b.splitlines(keepends=True), strict=False):
        if x != y:
            break
        head.append(x)
    return b"".join(head)
