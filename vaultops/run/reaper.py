"""The parent of a job's command: whatever the job starts comes back to it, and nothing outlives the job.

Linux only.  ``vaultops.run.process`` runs this file with ``python -I -S reaper.py REPORT_FD GRACE PARENT
-- COMMAND...``; it imports nothing of vaultops, so it starts in a few milliseconds and the interpreter's
own environment variables cannot change it.  It makes itself a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``): a process the job starts that leaves its group or session
(``setsid``, a double fork, ``nohup … &``, ``setsid -f``, a program that daemonises) re-parents to it
instead of to init once its parent exits, so it stays a descendant and can be found, even with its
environment cleared (``env -i``), which no marker in the environment survives.

It starts the command (fork and exec) as the leader of a session and group of its own (as vaultops
did before it existed), says the command's pid on REPORT_FD, reaps whatever comes to it, and when the
command ends says its wait status, then stops every descendant left: SIGTERM, up to GRACE seconds,
SIGKILL.  Once none is left, it exits.  Each job has its own reaper, so a daemon running several jobs
at once stops only the ended job's processes, and vaultops's own other processes (worker supervisors,
git) are never its descendants.  A worker the job spawned itself (``vaultops worker spawn``) is not the
job's leftover either: it lives on, recorded, until it is terminated or ends.

It dies with PARENT, the vaultops process that started it (``prctl(PR_SET_PDEATHSIG)``): a pass killed
with ``kill -9`` takes its jobs with it at once, also one whose pid it had not yet recorded, which the
next start's recovery (``vaultops.engine.recover``) could not find.

What it says on REPORT_FD, one line each: ``PID`` (the command started) or ``!ERRNO`` (it could not
start: the errno its exec gave); then ``=STATUS``, the command's wait status.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterable

PR_SET_PDEATHSIG = 1  # linux/prctl.h
PR_SET_CHILD_SUBREAPER = 36
SUPERVISOR = b"vaultops.workers.supervise"  # a worker's supervisor runs as python -m this
_POLL = 0.02
_KILL_ROUNDS_FOR = 10.0  # seconds to go on killing and reaping (a process stuck in the kernel may never go)


def proc_table() -> dict[int, tuple[int, int, bytes]]:
    """pid -> (parent pid, start time, state) for every process, from /proc (empty where there is none)."""
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


def is_supervisor(pid: int) -> bool:
    """Whether ``pid`` is a worker's supervisor (``python -m vaultops.workers.supervise``)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return False
    return argv[1:3] == [b"-m", SUPERVISOR]


def descendants(root: int, table: dict[int, tuple[int, int, bytes]]) -> list[int]:
    """Every process below ``root`` in ``table``, zombies included, parents before their children.

    A worker spawned from inside a job (``vaultops worker spawn``) is left out, with all below it: it is a
    long-lived session that vaultops records and stops by itself (``worker terminate``, a plan's
    timeout), not a leftover of the job that spawned it."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if is_supervisor(pid):
            continue
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def become_subreaper() -> bool:
    """Orphans of this process's descendants re-parent to it (Linux 3.4 and later); False where not."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def die_with(parent: int) -> bool:
    """SIGTERM comes to this process when ``parent`` ends (the thread that started it: ``run_process``
    waits in that thread for the job, so it ends only with the process).  False if it has already ended."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    return os.getppid() == parent


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        zero = ctypes.c_ulong(0)
        return int(libc.prctl(option, ctypes.c_ulong(value), zero, zero, zero)) == 0
    except (OSError, AttributeError, ImportError):
        return False


def _initial_environ() -> dict[bytes, bytes]:
    """The environment this process was given, byte for byte.  Python's start may add to ``os.environ``
    (LC_CTYPE, when it coerces a C locale); the command must get what vaultops gave, and no more."""
    env: dict[bytes, bytes] = {}
    try:
        with open("/proc/self/environ", "rb") as f:
            raw = f.read()
    except OSError:
        return {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}
    for item in raw.split(b"\0"):
        key, eq, value = item.partition(b"=")
        if eq and key:
            env.setdefault(key, value)
    return env


def _signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
            if sig == signal.SIGTERM:
                os.kill(pid, signal.SIGCONT)  # a stopped process acts on its TERM only once it runs


def _live(pids: Iterable[int], table: dict[int, tuple[int, int, bytes]]) -> list[int]:
    return [pid for pid in pids if table[pid][2] not in (b"Z", b"X")]


def _left() -> list[int]:
    """The job's processes still running, once the children that ended are reaped.  Each orphan comes
    to this process, so none can be missed: a live descendant has a live child of ours above it."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    table = proc_table()
    return _live(descendants(os.getpid(), table), table)


def stop_descendants(grace: float) -> None:
    """SIGTERM to every descendant, up to ``grace`` seconds for them to go, then SIGKILL until none is
    left (bounded: a process stuck in the kernel is left, not waited for forever)."""
    _signal_all(_left(), signal.SIGTERM)
    deadline = time.monotonic() + grace
    while _left() and time.monotonic() < deadline:
        time.sleep(_POLL)
    deadline = time.monotonic() + _KILL_ROUNDS_FOR
    while (left := _left()) and time.monotonic() < deadline:
        _signal_all(left, signal.SIGKILL)
        time.sleep(_POLL)
    _left()  # the last of them reaped


def _say(fd: int, line: str) -> None:
    with contextlib.suppress(OSError):  # vaultops may have stopped listening: the job still ends whole
        os.write(fd, line.encode() + b"\n")


def _spawn(args: list[str], report: int) -> int:
    """The command, started as the leader of a session of its own, with the environment this process was
    given and the signal dispositions subprocess gives: SIGPIPE and SIGXFSZ (which Python ignores) back
    to their defaults, handlers reset by exec, a signal given ignored left ignored.

    fork and exec, as subprocess does, without importing it (that would double the time this takes to
    start); not posix_spawn, which leaves glibc's own signals (32, 33) ignored in the command."""
    env = _initial_environ()
    read, write = os.pipe()  # close-on-exec: an exec that works closes it, and its reader sees the end
    pid = os.fork()
    if pid == 0:  # this process has one thread: the child may run Python until it execs
        try:
            os.close(read)
            os.close(report)
            os.setsid()
            for sig in (signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(sig, signal.SIG_DFL)
            os.execvpe(args[0], args, env)
        except BaseException as exc:
            os.write(write, str(getattr(exc, "errno", 0) or 0).encode())
        finally:
            os._exit(127)
    os.close(write)
    said = b""
    while chunk := os.read(read, 64):
        said += chunk
    os.close(read)
    if said:
        os.waitpid(pid, 0)
        errno = int(said)
        raise OSError(errno, os.strerror(errno))
    return pid


def main(argv: list[str]) -> int:
    report, grace, parent, args = int(argv[1]), float(argv[2]), int(argv[3]), argv[5:]
    become_subreaper()  # without it (a kernel before 3.4) this is a plain parent: the best there is
    command_pid = 0

    def relay(signum: int, frame: object) -> None:
        """A TERM, INT or HUP for the reaper is for the job: its command and everything it started."""
        table = proc_table()
        if command_pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(command_pid, signum)
        _signal_all(_live(descendants(os.getpid(), table), table), signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        if signal.getsignal(sig) is not signal.SIG_IGN:  # one given ignored stays so, for the command too
            signal.signal(sig, relay)
    if not die_with(parent):  # the pass that wanted it is gone: nobody would hear or stop the command
        return 125
    try:
        command_pid = _spawn(args, report)
    except OSError as exc:
        _say(report, f"!{exc.errno or 0}")
        return 127
    if os.getppid() != parent:  # it went while the command started, before there was one to signal
        relay(signal.SIGTERM, None)
    _say(report, str(command_pid))
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:  # cannot happen while the command is our child; nothing to wait for
            status = 0
            break
        if pid == command_pid:
            break
    _say(report, f"={status}")
    stop_descendants(grace)
    os.close(report)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    try:
        code = main(sys.argv)
    except BaseException as exc:  # a line in the job's stderr, never a traceback
        _say(2, f"vaultops reaper: {type(exc).__name__}: {exc}")
        code = 125
    os._exit(code)
