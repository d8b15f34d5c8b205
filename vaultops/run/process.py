"""Running one command: its own process group, no shell, no stdin, bounded time and output.  I/O edge.

Both pipes are drained by threads, so a chatty child never blocks on a full pipe and silence can be
measured.  On a timeout the whole group gets SIGTERM, then SIGKILL: agent CLIs start helpers (MCP
servers, shells, language servers) that must not outlive the run.  The same happens to whatever is left
of the group when the command itself exits.
"""

from __future__ import annotations

import contextlib
import os
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

TERM_GRACE = 5.0  # seconds between SIGTERM and SIGKILL
_SAMPLE_EVERY = 0.5  # seconds between looks at the child's process tree
_POLL = 0.05
_CHUNK = 65536
# After the group is gone, how long to wait for the pipes to close.  A process that left the group
# (setsid) can hold them open forever; its output after that is not waited for.
_DRAIN = 2.0
_LONGEST_LINE = 64 * 1024 * 1024  # bytes a watched line may hold before the run is stopped


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


def _proc_table() -> dict[int, tuple[int, int, bytes]]:
    """pid -> (parent pid, start time, state) for every process, from /proc (Linux only)."""
    table: dict[int, tuple[int, int, bytes]] = {}
    if not sys.platform.startswith("linux"):
        return table
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            table[int(entry.name)] = (int(fields[1]), int(fields[19]), fields[0])
        except (OSError, IndexError, ValueError):
            continue
    return table


class _Tree:
    """The child's descendants, remembered with their start times.

    Agent CLIs run tools in sessions of their own (Claude Code's Bash tool does), so signalling the child's
    process group misses them, and once the child dies they belong to init and cannot be found from it.
    So the tree is sampled while the child runs; a remembered pid is signalled only while its start time
    still matches, never a stranger that reused the number.
    """

    def __init__(self, root: int) -> None:
        self.root = root
        self.known: dict[int, int] = {}

    def sample(self) -> None:
        table = _proc_table()
        children: dict[int, list[int]] = {}
        for pid, (parent, _, _) in table.items():
            children.setdefault(parent, []).append(pid)
        todo = list(children.get(self.root, []))
        while todo:
            pid = todo.pop()
            self.known.setdefault(pid, table[pid][1])
            todo.extend(children.get(pid, []))

    def alive(self) -> list[int]:
        if not self.known:
            return []
        table = _proc_table()
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


def _stop_group(proc: subprocess.Popen[bytes], tree: _Tree) -> None:
    """SIGTERM to the group and every descendant, up to TERM_GRACE for them to go, then SIGKILL."""
    tree.sample()
    _signal_group(proc.pid, signal.SIGTERM)
    tree.signal(signal.SIGTERM)
    deadline = time.monotonic() + TERM_GRACE
    while time.monotonic() < deadline:
        tree.sample()
        if proc.poll() is not None and not _group_alive(proc.pid) and not tree.alive():
            return
        time.sleep(_POLL)
    _signal_group(proc.pid, signal.SIGKILL)
    tree.signal(signal.SIGKILL)


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
) -> ProcessResult:
    """Run ``argv`` (never through a shell) in ``cwd`` as the leader of a new session and group.

    ``timeout`` bounds the wall-clock time; ``inactivity_timeout`` the time with no output on either
    stream.  Either one stops the whole group and sets ``timed_out``.  ``env`` (default: this
    process's environment) is passed without NOTIFY_SOCKET, which belongs to the daemon alone.
    The outputs are kept raw, so that a secret in them cannot break their parse (Claude Code's JSON):
    whoever keeps or shows them redacts them, with ``extra_secrets`` (kept as ``secrets``) as well.
    ``watch`` is given each line of stdout as it arrives; the first reason it returns stops the group
    at once, and is the result's ``stopped``.
    """
    args = tuple(argv)
    secrets = list(extra_secrets)
    child_env = {k: v for k, v in (os.environ if env is None else env).items() if k != "NOTIFY_SOCKET"}
    started = time.monotonic()
    if not args:
        return ProcessResult(args, None, False, 0.0, "", "", "empty command")
    try:
        proc = subprocess.Popen(
            args,
            cwd=cwd,
            env=child_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
        )
    except (OSError, ValueError) as exc:
        error = redact(_start_error(exc, args[0], cwd), secrets)
        return ProcessResult(args, None, False, time.monotonic() - started, "", "", error)

    assert proc.stdout is not None and proc.stderr is not None
    if on_start is not None:
        on_start(proc.pid)
    activity = _Activity()
    watching = _Watch(watch) if watch is not None else None
    readers = [
        _Reader(proc.stdout, max_output_bytes, activity, watching),
        _Reader(proc.stderr, max_output_bytes, activity),
    ]
    for reader in readers:
        reader.start()

    timed_out = cancelled = False
    tree = _Tree(proc.pid)
    next_sample = started + _SAMPLE_EVERY
    try:
        while True:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=_POLL)  # returns as soon as it exits, even a short command
                break
            now = time.monotonic()
            if now >= next_sample:
                tree.sample()
                next_sample = now + _SAMPLE_EVERY
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            if watching is not None and watching.crossed.is_set():
                break
            if now - started >= timeout or (
                inactivity_timeout is not None and activity.idle() >= inactivity_timeout
            ):
                timed_out = True
                break
    finally:
        # Also on KeyboardInterrupt or any other surprise: nothing it started outlives the call.
        if proc.poll() is None or _group_alive(proc.pid) or tree.alive():
            _stop_group(proc, tree)
        proc.wait()
        drain_until = time.monotonic() + _DRAIN
        for reader in readers:
            reader.join(max(0.0, drain_until - time.monotonic()))

    duration = time.monotonic() - started
    stdout, stderr = (reader.text() for reader in readers)
    stopped = watching.reason if watching is not None else ""
    return ProcessResult(
        args, proc.returncode, timed_out, duration, stdout, stderr, None, cancelled, stopped, tuple(secrets)
    )
