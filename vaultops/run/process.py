"""Running one command: its own process group, no shell, no stdin, bounded time and output.  I/O edge.

Both pipes are drained by threads, so a chatty child never blocks on a full pipe and silence can be
measured.  On a timeout the whole group gets SIGTERM, then SIGKILL: agent CLIs start helpers (MCP
servers, shells, language servers) that must not outlive the run.  The same happens to whatever is left
of the job when the command itself exits, also to what left its group or session (``setsid``, a double
fork, ``nohup … &``): on Linux the command runs under a reaper of its own, a child subreaper to which
those processes re-parent (``vaultops.run.reaper``).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from vaultops.base.redact import redact
from vaultops.run import reaper
from vaultops.run.reaper import descendants, proc_table

TERM_GRACE = 5.0  # seconds between SIGTERM and SIGKILL
_SAMPLE_EVERY = 0.5  # seconds between looks at the child's process tree
_POLL = 0.05
_CHUNK = 65536
# After the group is gone, how long to wait for the pipes to close.  A process that left the group
# (setsid) and was not stopped (no reaper: not Linux) can hold them open forever; its output after that
# is not waited for.
_DRAIN = 2.0
_LONGEST_LINE = 64 * 1024 * 1024  # bytes a watched line may hold before the run is stopped
_KILL_ROUNDS = 20  # SIGKILL rounds over the job's processes (a fork under way may add one after a round)
_REAPER_LAST = 2.0  # seconds the reaper gets to say how the command ended, once its job is killed
_REAPER_START = 10.0  # seconds the reaper may take to say it started the command (a few ms, unless very busy)


@dataclass(frozen=True, slots=True)
class ProcessResult:
    argv: tuple[str, ...]
    exit_code: int | None  # None if it could not start; negative: killed by that signal
    timed_out: bool
    duration: float  # seconds
    stdout: str  # decoded UTF-8 (errors replaced), raw: parse it first, then redact what is kept
    stderr: str  # raw too
    start_error: str | None  # "command not found: foo", "permission denied: ./x", … (redacted)
    cancelled: bool = False  # stopped on request (the daemon shutting down), not by a timeout
    stopped: str = ""  # why ``watch`` stopped it: a limit it crossed ("cost limit $2 reached …")
    secrets: tuple[str, ...] = field(default=(), repr=False)  # the run's extra_secrets, for redact()
    limit: str = ""  # which limit stopped it: "timeout" (the wall-clock time) or "inactivity"
    limit_seconds: float = 0.0  # ...and what that limit was, in seconds


class _Reader(threading.Thread):
    """Reads one pipe to its end, keeping the first ``limit`` bytes and counting the rest.

    The reader closes the pipe itself: closing it from outside while a read is blocked would let the
    descriptor number be reused under the read.
    """

    def __init__(
        self, stream: IO[bytes], limit: int, activity: _Activity, watch: _Watch | None = None
    ) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.limit = limit
        self.activity = activity
        self.watch = watch
        self.data = bytearray()
        self.dropped = 0

    def run(self) -> None:
        with self.stream:
            while chunk := os.read(self.stream.fileno(), _CHUNK):
                self.activity.touch()
                room = max(0, self.limit - len(self.data))
                self.data += chunk[:room]
                self.dropped += len(chunk) - min(room, len(chunk))
                if self.watch is not None:
                    self.watch.take(chunk)

    def text(self) -> str:
        text = bytes(self.data).decode("utf-8", errors="replace")
        if self.dropped:
            text += f"\n[vaultops: output cut at {self.limit} bytes; {self.dropped} more bytes dropped]\n"
        if self.is_alive():
            text += "\n[vaultops: stopped reading: a process that left the group still holds the output]\n"
        return text


class _Watch:
    """Hands each whole line of a stream to ``judge``; the first reason it gives stops the run."""

    def __init__(self, judge: Callable[[str], str]) -> None:
        self.judge = judge
        self.partial = bytearray()
        self.reason = ""
        self.crossed = threading.Event()
        # called the moment a line crosses (from the reading thread): the job is told to stop at once, not
        # at the watch loop's next look, so an agent makes no model call after the one that crossed
        self.on_cross: Callable[[], None] | None = None

    def take(self, chunk: bytes) -> None:
        self.partial += chunk
        if b"\n" not in chunk:  # a long line (a tool's whole output) is split once, when it ends
            if len(self.partial) > _LONGEST_LINE:
                self._stop(f"stopped: a line of its output ran past {_LONGEST_LINE} bytes")
            return
        *whole, rest = self.partial.split(b"\n")
        self.partial = bytearray(rest)
        for line in whole:
            if self.crossed.is_set():
                return
            try:
                reason = self.judge(line.decode("utf-8", errors="replace"))
            except Exception as exc:  # a judge that fails must stop the run, not the reading thread
                reason = f"stopped: its output could not be read ({type(exc).__name__})"
            if reason:
                self._stop(reason)

    def _stop(self, reason: str) -> None:
        if not self.crossed.is_set():
            self.reason = reason
            self.crossed.set()
            if self.on_cross is not None:
                self.on_cross()


class _Activity:
    def __init__(self) -> None:
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def touch(self) -> None:
        with self._lock:
            self._last = time.monotonic()

    def idle(self) -> float:
        with self._lock:
            return time.monotonic() - self._last


class _ReaperFailed(Exception):
    """``vaultops.run.reaper`` ended before it started the command (its own error is on the stderr)."""

    def __init__(self, code: int | None) -> None:
        super().__init__(
            f"vaultops's process reaper (vaultops/run/reaper.py) ended at once (exit {code}); its own"
            " error is in the run's stderr"
        )


def _start_error(exc: BaseException, program: str, cwd: Path) -> str:
    if isinstance(exc, OSError) and exc.filename is not None and os.fspath(exc.filename) == os.fspath(cwd):
        return f"cannot use working directory {cwd}: {exc.strerror or exc}"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {program}"
    if isinstance(exc, PermissionError):
        return f"permission denied: {program}"
    if isinstance(exc, OSError):
        return f"could not start {program}: {exc.strerror or exc}"
    if isinstance(exc, ValueError) and "null" in str(exc).lower():
        return (
            f"could not start {program}: an argument or the environment contains a NUL byte, which cannot"
            " be passed to a program; remove it from the request"
        )
    return f"could not start {program}: {exc}"


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    """Whether the group has a member that is not a zombie.

    Orphans are reaped by init, but not under every container init; a zombie cannot be signalled and
    must not hold the run up for the whole grace period.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not sys.platform.startswith("linux"):
        return True
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def process_start_time(pid: int) -> int | None:
    """A process's start time (clock ticks since boot, Linux): with the pid, it names one process for good."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


class _Tree:
    """The child's descendants, remembered with their start times.

    Agent CLIs run tools in sessions of their own (Claude Code's Bash tool does), so signalling the child's
    process group misses them.  Under the reaper every one of them stays a descendant while the job runs;
    without it (not Linux), once their parent dies they belong to init and cannot be found from the child,
    so the tree is sampled while the child runs.  A remembered pid is signalled only while its start time
    still matches, never a stranger that reused the number.
    """

    def __init__(self, root: int) -> None:
        self.root = root
        self.known: dict[int, int] = {}

    def sample(self) -> None:
        table = proc_table()
        for pid in descendants(self.root, table):
            self.known.setdefault(pid, table[pid][1])

    def alive(self) -> list[int]:
        if not self.known:
            return []
        table = proc_table()
        return [
            pid
            for pid, started in self.known.items()
            if pid in table and table[pid][1] == started and table[pid][2] not in (b"Z", b"X")
        ]

    def signal(self, sig: signal.Signals) -> None:
        for pid in self.alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if os.getpgid(pid) == pid:  # a group leader of its own: take its whole group
                    os.killpg(pid, sig)
                else:
                    os.kill(pid, sig)


def _reaper_argv() -> tuple[str, ...]:
    """How to start a command under ``vaultops.run.reaper``, or () where it cannot work.

    Only Linux has a child subreaper.  Elsewhere (macOS) the best there is: the command's own group,
    plus its descendants as sampled every _SAMPLE_EVERY while it runs; a process that leaves its session
    and whose parent exits before a sample is not found there.
    """
    script = reaper.__file__
    runnable = sys.executable and script and os.path.isfile(script) and not getattr(sys, "frozen", False)
    if not (sys.platform.startswith("linux") and runnable):
        return ()
    return (sys.executable, "-I", "-S", script)


class _Said:
    """What the reaper says on its pipe (see ``vaultops.run.reaper``): the command's pid or why it could
    not start, then the command's wait status."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lines: list[str] = []
        self.partial = b""
        self.closed = False

    def listen(self, wait: float) -> None:
        """Read what has come within ``wait`` seconds (all of it, once the reaper has ended)."""
        while not self.closed:
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                return
            chunk = os.read(self.fd, 4096)
            if not chunk:
                self.closed = True
                return
            *whole, self.partial = (self.partial + chunk).split(b"\n")
            self.lines += [line.decode() for line in whole]
            wait = 0.0

    def started(self, give_up: float, proc: subprocess.Popen[bytes]) -> None:
        """Wait (at most until the monotonic time ``give_up``) for the first line."""
        while not self.lines and not self.closed and time.monotonic() < give_up:
            self.listen(_POLL)
            if proc.poll() is not None:
                self.listen(0.0)  # it has ended: the pipe's end has come, or comes now
                return

    def failure(self, program: str, proc: subprocess.Popen[bytes]) -> BaseException | None:
        """Why the command did not start, when it did not: what starting it raised, or the reaper's end."""
        if self.errno is not None:
            return OSError(self.errno, os.strerror(self.errno), program)
        if self.pid is None and (self.closed or proc.poll() is not None):  # it ended without a word
            return _ReaperFailed(proc.wait())  # (its own error is on the stderr)
        return None

    @property
    def pid(self) -> int | None:
        return int(self.lines[0]) if self.lines and self.lines[0].isdigit() else None

    @property
    def errno(self) -> int | None:
        return int(self.lines[0][1:]) if self.lines and self.lines[0].startswith("!") else None

    @property
    def status(self) -> int | None:
        return next((int(line[1:]) for line in self.lines if line.startswith("=")), None)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


@dataclass(slots=True)
class _Job:
    """One running command: ``proc`` is what was started (the reaper, or the command itself where there
    is none), ``leader`` the command, leader of its own session and group."""

    proc: subprocess.Popen[bytes]
    leader: int
    said: _Said | None
    tree: _Tree

    def ended(self, wait: float) -> bool:
        """Whether the command has ended, waiting up to ``wait`` seconds for it."""
        if self.said is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=wait)  # returns as soon as it exits, even a short command
            return self.proc.poll() is not None
        self.said.listen(wait)
        return self.said.status is not None or self.said.closed

    def settle(self) -> None:
        """Once the command has ended, the reaper stops what is left of its job by itself: wait for that
        (it takes TERM_GRACE at most, then kills), rather than poll for it."""
        if self.said is not None and self.said.status is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=TERM_GRACE + _REAPER_LAST)

    def left(self) -> bool:
        """Whether anything of it is still running."""
        return self.proc.poll() is None or _group_alive(self.leader) or bool(self.tree.alive())

    def exit_code(self) -> int | None:
        status = self.said.status if self.said is not None else None
        return os.waitstatus_to_exitcode(status) if status is not None else self.proc.returncode

    def stop(self) -> None:
        """SIGTERM to the command's group and every descendant, up to TERM_GRACE for them to go, then
        SIGKILL; the reaper (which stops what is left on its own once the command ends) goes last, so that
        nothing of the job is orphaned to init before it is killed."""
        self.tree.sample()
        _signal_group(self.leader, signal.SIGTERM)
        self.tree.signal(signal.SIGTERM)
        deadline = time.monotonic() + TERM_GRACE
        while time.monotonic() < deadline:
            self.tree.sample()
            if not self.left():
                return
            time.sleep(_POLL)
        for _ in range(_KILL_ROUNDS):  # a killed process starts nothing more, but a fork under way may
            self.tree.sample()
            if not self.tree.alive() and not _group_alive(self.leader):
                break
            self.tree.signal(signal.SIGKILL)
            _signal_group(self.leader, signal.SIGKILL)
            time.sleep(_POLL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=_REAPER_LAST)  # it says how the command ended, then goes
        _signal_group(self.proc.pid, signal.SIGKILL)


def _start_failed(
    args: tuple[str, ...], exc: BaseException, cwd: Path, secrets: list[str], started: float
) -> ProcessResult:
    error = redact(_start_error(exc, args[0], cwd), secrets)
    return ProcessResult(args, None, False, time.monotonic() - started, "", "", error)


def _launch(
    args: tuple[str, ...], cwd: Path, env: Mapping[str, str]
) -> tuple[subprocess.Popen[bytes], _Said | None]:
    """The command started, under its reaper where there is one (and what the reaper says)."""
    launcher = _reaper_argv()
    if not launcher:
        return _popen(args, cwd, env, ()), None
    read, write = os.pipe()
    try:
        proc = _popen(
            (*launcher, str(write), repr(TERM_GRACE), str(os.getpid()), "--", *args), cwd, env, (write,)
        )
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
    return proc, _Said(read)


def _popen(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str], pass_fds: tuple[int, ...]
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
        pass_fds=pass_fds,
    )


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float,
    inactivity_timeout: float | None = None,
    max_output_bytes: int = 20_000_000,
    extra_secrets: Iterable[str] = (),
    on_start: Callable[[int], None] | None = None,
    cancel: threading.Event | None = None,
    watch: Callable[[str], str] | None = None,
    overdue: Callable[[], str] | None = None,
) -> ProcessResult:
    """Run ``argv`` (never through a shell) in ``cwd`` as the leader of a new session and group.

    ``timeout`` bounds the wall-clock time; ``inactivity_timeout`` the time with no output on either
    stream.  Either one stops the whole group and sets ``timed_out``, and ``limit`` says which.
    ``env`` (default: this process's environment) is passed without NOTIFY_SOCKET, which belongs to the
    daemon alone.  The outputs are kept raw, so that a secret in them cannot break their parse (Claude
    Code's JSON): whoever keeps or shows them redacts them, with ``extra_secrets`` (kept as ``secrets``)
    as well.  ``watch`` is given each line of stdout as it arrives; the first reason it returns stops the
    group at once, and is the result's ``stopped``; ``overdue``, asked between looks at the command, stops
    it the same way (a reason that comes from waiting, not from a line).  ``on_start`` is given the command's
    pid.

    On Linux the command runs under a reaper of its own (``vaultops.run.reaper``): every process it
    starts, also one that left its group or session, has ended when this returns.
    """
    args = tuple(argv)
    secrets = list(extra_secrets)
    child_env = {k: v for k, v in (os.environ if env is None else env).items() if k != "NOTIFY_SOCKET"}
    started = time.monotonic()
    if not args:
        return ProcessResult(args, None, False, 0.0, "", "", "empty command")
    try:
        proc, said = _launch(args, cwd, child_env)
    except (OSError, ValueError) as exc:
        return _start_failed(args, exc, cwd, secrets, started)

    assert proc.stdout is not None and proc.stderr is not None
    activity = _Activity()
    watching = _Watch(watch) if watch is not None else None
    readers = [
        _Reader(proc.stdout, max_output_bytes, activity, watching),
        _Reader(proc.stderr, max_output_bytes, activity),
    ]
    for reader in readers:
        reader.start()

    job = _Job(proc, proc.pid, said, _Tree(proc.pid))
    broken: BaseException | None = None  # why the command never started
    stop = _Stop()
    try:
        if said is not None:
            said.started(started + max(timeout, _REAPER_START), proc)  # the time counts toward the timeout
            broken = said.failure(args[0], proc)
            job.leader = said.pid or proc.pid
        if broken is None:
            if watching is not None:
                leader = job.leader
                watching.on_cross = lambda: _signal_group(leader, signal.SIGTERM)
            if on_start is not None:
                on_start(job.leader)
            stop = _watch(job, started, timeout, inactivity_timeout, activity, watching, cancel, overdue)
    finally:
        # Also on KeyboardInterrupt or any other surprise: nothing it started outlives the call.
        job.settle()
        if job.left():
            job.stop()
        proc.wait()
        if said is not None:
            said.listen(0.0)  # the rest of what it said: it has ended, so this reads to the end
            said.close()
        drain_until = time.monotonic() + _DRAIN
        for reader in readers:
            reader.join(max(0.0, drain_until - time.monotonic()))

    duration = time.monotonic() - started
    stdout, stderr = (reader.text() for reader in readers)
    if broken is not None:
        error = redact(_start_error(broken, args[0], cwd), secrets)
        return ProcessResult(args, None, False, duration, stdout, stderr, error, secrets=tuple(secrets))
    stopped = watching.reason if watching is not None else ""
    return ProcessResult(
        args,
        job.exit_code(),
        stop.timed_out,
        duration,
        stdout,
        stderr,
        None,
        stop.cancelled,
        stopped,
        tuple(secrets),
        stop.limit,
        stop.limit_seconds,
    )


@dataclass(frozen=True, slots=True)
class _Stop:
    """Why the watch over a running command ended early (nothing set: the command ended)."""

    timed_out: bool = False
    cancelled: bool = False
    limit: str = ""
    limit_seconds: float = 0.0


def _watch(
    job: _Job,
    started: float,
    timeout: float,
    inactivity_timeout: float | None,
    activity: _Activity,
    watching: _Watch | None,
    cancel: threading.Event | None,
    overdue: Callable[[], str] | None = None,
) -> _Stop:
    """Wait for the command to end, or for a limit, a watched line, an ``overdue`` reason or the daemon's
    shutdown to stop it."""
    next_sample = started + _SAMPLE_EVERY
    while not job.ended(_POLL):
        now = time.monotonic()
        if now >= next_sample:
            job.tree.sample()
            next_sample = now + _SAMPLE_EVERY
        if cancel is not None and cancel.is_set():
            return _Stop(cancelled=True)
        if watching is not None and overdue is not None and (late := overdue()):
            watching._stop(late)
        if watching is not None and watching.crossed.is_set():
            return _Stop()
        if now - started >= timeout:
            return _Stop(True, False, "timeout", timeout)
        if inactivity_timeout is not None and activity.idle() >= inactivity_timeout:
            return _Stop(True, False, "inactivity", inactivity_timeout)
    return _Stop()
