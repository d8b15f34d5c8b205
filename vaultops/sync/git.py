"""git at the edge: stage exactly the paths vaultops wrote and commit them under its own name.

Never ``git add -A``: the person's other changes are theirs to commit.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from vaultops.base import faults
from vaultops.base.redact import redact
from vaultops.base.visible import visible

LOCK_RETRIES = 6

# Every git process is bounded.  The daemon's unit gives it WatchdogSec=30 and a stop timeout of its grace
# plus 15 s (vaultops.service.units): a call to the remote (fetch, push, ls-remote) is given up on after
# NETWORK_TIMEOUT, and at once when the daemon is asked to stop; local plumbing never waits on the
# network, so it has a longer bound, and a stop gives it STOP_WAIT more seconds to end by itself (a
# read-tree cut short leaves files half moved: move_head's journal finishes that on the next start).
# Meanwhile the daemon's ``while_waiting`` goes on pinging the watchdog.
NETWORK_TIMEOUT = 30.0
LOCAL_TIMEOUT = 60.0
STOP_WAIT = 10.0  # within the smallest stop timeout (grace 0 + 15 s), with KILL_WAIT to spare
SLICE = 0.2  # seconds between two calls of ``while_waiting`` while git runs
KILL_WAIT = 2.0  # seconds a git given up on has to end after SIGTERM before its group gets SIGKILL

# Called every SLICE while a git process runs (from whichever thread started it); True means "give up
# on a call to the remote": the daemon is stopping.  The daemon installs one (``waiting_with``).
WhileWaiting = Callable[[], bool]
_while_waiting: WhileWaiting | None = None


def waiting_with(callback: WhileWaiting | None) -> WhileWaiting | None:
    """Install ``callback`` as what every git call does while it waits; returns the one it replaces."""
    global _while_waiting
    previous, _while_waiting = _while_waiting, callback
    return previous


def git_processes_in(root: Path) -> list[int]:
    """Git processes whose working folder is this repository (Linux; elsewhere, any git process)."""
    found = []
    real = root.resolve()
    if not Path("/proc").is_dir():
        proc = subprocess.run(["pgrep", "-x", "git"], capture_output=True, text=True, check=False)
        return [int(p) for p in proc.stdout.split()]
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if Path(f"/proc/{entry.name}/comm").read_text().strip() != "git":
                continue
            cwd = Path(os.readlink(f"/proc/{entry.name}/cwd"))
        except OSError:
            continue
        if cwd == real or real in cwd.parents:
            found.append(int(entry.name))
    return found


class GitError(Exception):
    pass


class GitGaveUp(GitError):
    """A git process that vaultops stopped waiting for: it took too long, or the daemon is stopping.  It
    was killed with its whole process group (an ssh it started included)."""

    def __init__(self, args: Sequence[str], seconds: float, stopped: bool) -> None:
        self.stopped = stopped
        self.seconds = seconds
        why = "vaultops is stopping" if stopped else f"it did not finish within {seconds:.0f} s"
        super().__init__(f"git {args[0] if args else ''} was given up on: {why}")


def last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "no detail"


AUTHOR_PREFIX = "vaultops ("


def identity(agent: str) -> tuple[str, str]:
    """The author of vaultops's commits: ``vaultops (<agent>)``; git log tells them from the person's."""
    return f"{AUTHOR_PREFIX}{agent})", f"{agent}@vaultops.invalid"


@dataclass(frozen=True)
class Moved:
    why: str = ""  # "" when moved; "busy" (another git is at work: try later) or "local changes"
    detail: str = ""


@dataclass(frozen=True)
class CommitResult:
    sha: str | None  # None when there was nothing to commit
    message: str


# What another git (obsidian-git, a person) may be in the middle of; vaultops waits for it to end.
_IN_PROGRESS = (
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase"),
    ("MERGE_HEAD", "a merge"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
)


class Git:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._git_dir: Path | None = None

    @property
    def git_dir(self) -> Path:
        """The repository's folder (``.git`` may be a file pointing elsewhere, as in a worktree)."""
        if self._git_dir is None:
            proc = self._run("rev-parse", "--absolute-git-dir")
            found = proc.stdout.strip()
            if proc.returncode != 0 or not found:
                return self.root / ".git"
            self._git_dir = Path(found)
        return self._git_dir

    def in_progress(self) -> str:
        """A rebase or merge another git has under way here ("" when none): a file check, no process."""
        for name, what in _IN_PROGRESS:
            if (self.git_dir / name).exists():
                return f"{what} is in progress in this clone (obsidian-git's or the person's)"
        return ""

    def busy(self) -> str:
        """What another git is in the middle of in this repository ("" when nothing): a rebase or merge
        that obsidian-git or the person started and has not finished or aborted, or a detached HEAD."""
        under_way = self.in_progress()
        if under_way:
            return under_way
        if self._run("symbolic-ref", "-q", "HEAD").returncode != 0:
            return "HEAD is not on a branch (detached)"
        return ""

    def run(
        self, *args: str, env: dict[str, str] | None = None, check: bool = True, network: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """Run git; when another git (obsidian-git, a person) holds the index lock, wait for it a little,
        and clear a lock that no running git holds (one left by a killed process).  ``network``: a call
        to the remote (see NETWORK_TIMEOUT).  Raises GitGaveUp when it was given up on."""
        for attempt in range(LOCK_RETRIES):
            proc = self._run(*args, env=env, network=network)
            if proc.returncode == 0 or "index.lock" not in proc.stderr:
                break
            if attempt >= 2 and not git_processes_in(self.root):
                with contextlib.suppress(FileNotFoundError):
                    (self.git_dir / "index.lock").unlink()
            time.sleep(0.2 * (attempt + 1))
        if check and proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            raise GitError(f"git {args[0]} failed: {detail[-1] if detail else f'exit {proc.returncode}'}")
        return proc

    def _run(
        self, *args: str, env: dict[str, str] | None = None, network: bool = False
    ) -> subprocess.CompletedProcess[str]:
        done = self._call(["git", "-c", "core.quotepath=off", *args], env=env, network=network)
        # paths come back as the bytes the file system gave: surrogateescape carries any of them through
        out = done.stdout.decode("utf-8", "surrogateescape")
        return subprocess.CompletedProcess(done.args, done.returncode, out, _text(done.stderr))

    def _call(
        self,
        argv: list[str],
        *,
        env: dict[str, str] | None = None,
        data: bytes | None = None,
        network: bool = False,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``argv`` in its own process group and wait for it in slices, calling ``while_waiting``
        between them (the daemon pings its watchdog there).  Given up on after its bound, or (a call to
        the remote) as soon as ``while_waiting`` says the daemon is stopping: then its whole group is
        killed, so that no ssh is left behind, and GitGaveUp is raised."""
        bound = NETWORK_TIMEOUT if network else LOCAL_TIMEOUT
        proc = subprocess.Popen(
            argv,
            cwd=self.root,
            env=self._env(env),
            stdin=subprocess.DEVNULL if data is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own group: a terminal's Ctrl-C is the daemon's to handle
        )
        deadline = time.monotonic() + bound
        stop_by = float("inf")  # when a stop gives up on local plumbing
        try:
            while True:
                try:
                    out, err = proc.communicate(data, timeout=SLICE)
                    return subprocess.CompletedProcess(argv, proc.returncode, out, err)
                except subprocess.TimeoutExpired:
                    data = None  # sent already: communicate() goes on from where it was
                waiting = _while_waiting
                now = time.monotonic()
                if waiting is not None and waiting():
                    stop_by = min(stop_by, now if network else now + STOP_WAIT)
                if now >= stop_by or now >= deadline:
                    _end_group(proc)
                    raise GitGaveUp(_subcommand(argv), bound, now >= stop_by)
        except BaseException:
            if proc.returncode is None:  # interrupted while waiting (KeyboardInterrupt): git goes too
                _end_group(proc)
            raise

    def _env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(extra or {})}
        # a remote that wants a password must fail, not wait for someone to type it
        env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        env.pop("NOTIFY_SOCKET", None)
        return env

    # --- plumbing: objects and refs without touching the working tree ------------------------------

    def rev(self, name: str) -> str | None:
        proc = self.run("rev-parse", "--verify", "-q", f"{name}^{{commit}}", check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.strip() or None

    def blob(self, commit: str | None, path: str) -> bytes | None:
        """The bytes of ``path`` at ``commit``, or None when it is not there."""
        if commit is None:
            return None
        proc = self._call(["git", "cat-file", "blob", f"{commit}:{path}"])
        return proc.stdout if proc.returncode == 0 else None

    def hash_object(self, data: bytes) -> str:
        proc = self._call(["git", "hash-object", "-w", "--stdin"], data=data)
        if proc.returncode != 0:
            raise GitError(f"git hash-object failed: {proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout.decode().strip()

    def commit_files(
        self, parent: str | None, files: dict[str, bytes | None], message: str, author: tuple[str, str, str]
    ) -> str:
        """A commit on ``parent`` whose tree is the parent's with ``files`` replaced (None: removed), built
        in a private index so that neither the working tree nor the real index is touched.
        ``author``: (name, email, date or "")."""
        index = self.git_dir / f"vaultops-index-{os.getpid()}"
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            if parent:
                self.run("read-tree", parent, env=env)
            else:
                self.run("read-tree", "--empty", env=env)
            for path, data in files.items():
                if data is None:
                    self.run("update-index", "--force-remove", "--", path, env=env)
                else:
                    blob = self.hash_object(data)
                    self.run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
            tree = self.run("write-tree", env=env).stdout.strip()
        finally:
            with contextlib.suppress(FileNotFoundError):
                index.unlink()
        name, email, date = author
        ident = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email}
        if date:
            ident["GIT_AUTHOR_DATE"] = date
        if not self.has_identity():
            ident |= {"GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
        parents = ["-p", parent] if parent else []
        return self.run("commit-tree", tree, *parents, "-m", message, env=ident).stdout.strip()

    def move_head(self, old: str, new: str) -> Moved:
        """Bring HEAD, the index and the working tree from ``old`` to ``new`` as ``git reset --keep``
        would, keeping uncommitted changes.  When it cannot, nothing is changed.

        Another git in the same clone (obsidian-git committing) must not slip in between: the index
        lock is held throughout, as git itself holds it, and HEAD moves only if it is still ``old``
        (a commit made meanwhile is never thrown away)."""
        lock = self.git_dir / "index.lock"
        fd = self._take_index_lock(lock)
        if fd is None:
            return Moved("busy", "another git holds the index lock")
        private = self.git_dir / f"vaultops-move-{os.getpid()}"
        env = {"GIT_INDEX_FILE": str(private)}
        cut_short = False
        try:
            # With the lock held no other git can start changing files; one that was already under way
            # (a rebase between its steps) shows in HEAD or in its own state folder.
            busy = self.busy()
            if busy:
                return Moved("busy", busy)
            if self._run("rev-parse", "-q", "--verify", "HEAD").stdout.strip() != old:
                return Moved("busy", "HEAD moved meanwhile (a commit by another tool)")
            index = self.git_dir / "index"
            if index.exists():
                shutil.copyfile(index, private)
            self._journal.write_text(f"{old} {new}\n")  # files may move before HEAD does
            # the index's file times may be stale (another tool wrote the files): a file that only looks
            # changed must not count as the person's change
            self._run("update-index", "-q", "--refresh", env=env)
            proc = self._run("read-tree", "-m", "-u", old, new, env=env)
            if proc.returncode != 0:
                return Moved("local changes", last_line(proc.stderr))
            faults.reach("move.before_ref")
            ref = self._run("update-ref", "-m", "vaultops: follow the remote", "HEAD", new, old)
            if ref.returncode != 0:
                self._run("read-tree", "-m", "-u", new, old, env=env)  # the files as they were
                return Moved("busy", "HEAD moved meanwhile (a commit by another tool)")
            os.write(fd, private.read_bytes())
            os.fsync(fd)
            os.close(fd)
            fd = -1
            os.replace(lock, index)  # git's own way to write the index
            return Moved()
        except GitGaveUp:
            cut_short = True  # files may be half moved: the journal has the next pass finish the move
            raise
        finally:
            if fd >= 0:
                os.close(fd)
                lock.unlink(missing_ok=True)
            private.unlink(missing_ok=True)
            if not cut_short:
                self._journal.unlink(missing_ok=True)

    @property
    def _journal(self) -> Path:
        return self.git_dir / "vaultops-moving"

    def unfinished_move(self) -> tuple[str, str] | None:
        """(from, to) of a ``move_head`` that was killed after it began to change files."""
        try:
            old, new = self._journal.read_text().split()
        except (OSError, ValueError):
            return None
        return old, new

    def forget_move(self) -> None:
        self._journal.unlink(missing_ok=True)

    def _take_index_lock(self, lock: Path) -> int | None:
        """Create the index lock as git does; a lock that no git process works behind (one left by a
        process killed mid-move, ours included) is removed first."""
        for attempt in range(LOCK_RETRIES):
            try:
                return os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if attempt >= 2 and not git_processes_in(self.root):
                    lock.unlink(missing_ok=True)
                time.sleep(0.2 * (attempt + 1))
        return None

    def is_repo(self) -> bool:
        try:
            proc = self.run("rev-parse", "--show-toplevel", check=False)
        except (OSError, subprocess.SubprocessError, GitGaveUp):
            return False
        return proc.returncode == 0 and Path(proc.stdout.strip()).resolve() == self.root.resolve()

    def init(self) -> None:
        self.run("init", "-q")

    def blame(self, path: str, contents: bytes, lines: Sequence[int]) -> dict[int, Blamed]:
        """Which commit brought each of ``lines`` (0-based) of ``contents``, read as ``path``, in: its author
        (``Name <email>``), and where the line stood in it.  A line no commit has yet is left out, and so is
        every line when ``path`` has no history (or there is no repository)."""
        if not lines:
            return {}
        ranges = [arg for n in sorted(set(lines)) for arg in ("-L", f"{n + 1},{n + 1}")]
        argv = ["git", "blame", "--porcelain", "--contents", "-", *ranges, "--", path]
        proc = self._call(argv, data=contents)
        if proc.returncode != 0:
            return {}
        return _blamed(proc.stdout.decode("utf-8", "replace"), path)

    def renames(self, limit: int) -> list[tuple[str, str]]:
        """The renames git finds (``-M``: a file moved, edited or not) in HEAD's last ``limit`` commits, as
        (from, to), oldest first; none when there is no history to ask."""
        proc = self.run("log", "-M", "--name-status", "--format=", "-z", f"-n{limit}", "HEAD", check=False)
        return renames_in(proc.stdout) if proc.returncode == 0 else []

    def has_identity(self) -> bool:
        name = self.run("config", "user.name", check=False).stdout.strip()
        email = self.run("config", "user.email", check=False).stdout.strip()
        return bool(name and email)

    def commit_paths(self, paths: Sequence[str], message: str, agent: str) -> CommitResult:
        """Stage exactly ``paths`` and commit only them, authored by ``vaultops (<agent>)``."""
        if not paths:
            return CommitResult(None, message)
        # a secret never reaches git (a request's title quoted in a reason, say); a NUL (an agent's command
        # quoted in a reason) cannot be an argument
        message = visible(redact(message))
        name, email = identity(agent)
        env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email}
        if not self.has_identity():
            env |= {"GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
        self.run("add", "--", *paths)
        # nothing of these paths changed: no commit, whatever else the tree holds (git's own words for it
        # vary with the tree: "nothing added to commit but untracked files present" is one of them)
        if (
            self.rev("HEAD") is not None
            and self.run("diff", "--cached", "--quiet", "HEAD", "--", *paths, check=False).returncode == 0
        ):
            return CommitResult(None, message)
        proc = self.run("commit", "--no-status", "-m", message, "--only", "--", *paths, env=env, check=False)
        if proc.returncode != 0:
            if "nothing to commit" in proc.stdout + proc.stderr or "no changes added" in proc.stdout:
                return CommitResult(None, message)
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            raise GitError(f"git commit failed: {detail[-1] if detail else f'exit {proc.returncode}'}")
        # "[main 1a2b3c4] subject" (or "[main (root-commit) 1a2b3c4] subject")
        head = proc.stdout.split("]", 1)[0].split()
        sha = head[-1] if head else None
        return CommitResult(sha, message)


def renames_in(log: str) -> list[tuple[str, str]]:
    """The (from, to) pairs of ``git log --name-status -z`` output, oldest first: a status is followed by
    one path, or by two for a rename (R) or a copy (C)."""
    fields = log.split("\0")
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(fields):
        status = fields[i].strip()
        if status[:1] in ("R", "C") and i + 2 < len(fields):
            if status[0] == "R":
                found.append((fields[i + 1], fields[i + 2]))
            i += 3
        else:
            i += 2 if status else 1
    return found[::-1]


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _subcommand(argv: Sequence[str]) -> list[str]:
    """git's arguments after its own options (``-c name=value``)."""
    rest = list(argv[1:])
    while rest[:1] == ["-c"]:
        rest = rest[2:]
    return rest


def _end_group(proc: subprocess.Popen[bytes]) -> None:
    """End a git given up on and everything in its process group (the ssh it started): SIGTERM, a moment
    to end, then SIGKILL to whatever is left.  git is reaped only after that, so that its process group's
    id cannot have been given to another process meanwhile."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + KILL_WAIT
    while time.monotonic() < deadline and not _has_exited(proc.pid):
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # an ssh that ignores SIGTERM, or a git still busy
    try:
        proc.communicate(timeout=KILL_WAIT)
    except subprocess.TimeoutExpired:  # something that left the group holds the pipes: stop reading
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()


def _has_exited(pid: int) -> bool:
    """True once the child ``pid`` has exited, without reaping it."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


_UNCOMMITTED = "0" * 40


@dataclass(frozen=True, slots=True)
class Blamed:
    """The commit that brought a line in, as ``git blame`` names it."""

    who: str  # "Name <email>" of its author
    commit: str
    line: int  # 0-based, in the file as that commit has it
    path: str  # the file's path in that commit


def _blamed(porcelain: str, path: str) -> dict[int, Blamed]:
    """``git blame --porcelain``'s answer: 0-based line -> its commit (committed lines only).  A commit's
    author and file name are given the first time it appears; each line's header names its commit, the
    line's number in that commit and its number now."""
    details: dict[str, dict[str, str]] = {}
    out: dict[int, Blamed] = {}
    sha, orig, final = "", 0, 0
    for line in porcelain.splitlines():
        if line.startswith("\t"):
            got = details.get(sha, {})
            if sha != _UNCOMMITTED and "author" in got:
                who = f"{got['author']} {got.get('author-mail', '<>')}"
                out[final - 1] = Blamed(who, sha, orig - 1, got.get("filename", path))
            continue
        head = line.split(" ")
        if len(head) >= 3 and len(head[0]) == 40 and head[1].isdigit() and head[2].isdigit():
            sha, orig, final = head[0], int(head[1]), int(head[2])
            details.setdefault(sha, {})
            continue
        key, _, value = line.partition(" ")
        if key in ("author", "author-mail", "filename"):
            details.setdefault(sha, {})[key] = value
    return out
