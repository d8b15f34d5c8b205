"""One pass at a time per vault on this machine: ``tick`` and the daemon share one lock.

Whoever holds it writes who they are next to it (``vault.lock.json``), so a second pass can say who is busy
instead of just failing.

The lock is held on the vault's own folder (``flock`` on an open descriptor of the vault root), not only
on ``.vaultops/state/vault.lock``.  A file can be deleted or replaced while its lock is held (a person
might, after "the daemon holds this vault"): the holder keeps its lock on the old file, a newcomer makes a
new file and locks that, and two daemons then run on one clone, the second killing the first's agent as a
leftover.
The vault folder cannot be deleted by accident while the vault is in use, and a ``flock`` on it lives
exactly as long as the holder's descriptor: the kernel ends it with the process, nothing stays on disk, and
a rename of the vault keeps it (it follows the folder, not a path).  This is preferred over a name bound in
Linux's abstract socket namespace, which is Linux-only, is per network namespace (a sandboxed service
would not see a terminal's daemon) and follows a path.  ``vault.lock`` is still taken too, after the
folder: a vaultops from before this change only knows that one.  Who holds the folder is read from the
holder's ``vault.lock.json`` and, where that is gone or belongs to someone else, from the kernel's own
list of locks (``/proc/locks``), so the busy message names the holder whatever happened to the files.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from vaultops.base.confine import CLOEXEC, confine, make_dirs, write_text
from vaultops.base.errors import LockBusy

POLL = 0.05  # seconds between tries of a busy lock, as filelock waits
DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def _busy_message(vault: Path, info: dict[str, Any] | None) -> str:
    if info is None:
        return f"{vault}: another vaultops process holds the vault lock; try again when it finishes"
    since = ""
    if info.get("since"):
        since = ", since " + time.strftime("%H:%M:%S", time.localtime(float(info["since"])))
    who = f"pid {info.get('pid')} on {info.get('host')} (`{info.get('command')}`{since})"
    if str(info.get("command", "")).endswith(" run"):
        # The daemon never lets go, so "try again" would be wrong advice.
        return (
            f"{vault}: the vaultops daemon holds this vault: {who}; it takes requests itself — "
            "stop it first (`vaultops service status` shows whether it is the service)"
        )
    return f"{vault}: another pass holds the vault lock: {who}; try again when it finishes"


def _written_info(info_path: Path) -> dict[str, Any] | None:
    try:
        info = json.loads(info_path.read_text())
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def flock_holder(path: Path, locks: Path = Path("/proc/locks")) -> int | None:
    """The pid that holds a ``flock`` on ``path``, from the kernel's list (Linux), or None when unknown."""
    try:
        st = os.stat(path)
        lines = locks.read_text().splitlines()
    except OSError:
        return None
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; a waiter's line has "->" after the number
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == where:
            with contextlib.suppress(ValueError):
                return int(fields[4])
    return None


def _process_info(pid: int) -> dict[str, Any]:
    """Who ``pid`` is, from its command line, for a holder whose ``vault.lock.json`` is gone."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        args = []
    verbs = [a for a in args if a in ("run", "tick")]
    command = f"vaultops {verbs[-1]}" if verbs else "vaultops"
    return {"pid": pid, "host": socket.gethostname(), "command": command}


def holder_info(vault: Path, info_path: Path) -> dict[str, Any] | None:
    """Who holds the vault: its own ``vault.lock.json`` when that still names the process the kernel says
    holds the vault folder, else what the kernel says; None when neither is known."""
    written = _written_info(info_path)
    pid = flock_holder(vault)
    if pid is None:
        return written
    if written is not None and written.get("pid") == pid:
        return written
    return _process_info(pid)


def _lock_folder(fd: int, vault: Path, info_path: Path, deadline: float) -> None:
    """``flock`` the vault folder's descriptor ``fd``, waiting until ``deadline``; LockBusy after it."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        except OSError as exc:
            if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.EBADF):
                return  # a file system without flock on folders (some network mounts): vault.lock alone
            raise
        if time.monotonic() >= deadline:
            raise LockBusy(_busy_message(vault, holder_info(vault, info_path)))
        time.sleep(POLL)


@contextmanager
def vault_lock(state_dir: Path, *, wait: float, command: str = "") -> Iterator[None]:
    make_dirs(state_dir)
    vault = state_dir.parent.parent
    lock_path = confine(state_dir / "vault.lock")
    info_path = confine(state_dir / "vault.lock.json")
    deadline = time.monotonic() + wait
    fd = os.open(vault, os.O_RDONLY | DIRECTORY | CLOEXEC)  # not inherited by jobs: it ends with us
    try:
        _lock_folder(fd, vault, info_path, deadline)
        lock = FileLock(str(lock_path))
        try:
            lock.acquire(timeout=max(0.0, deadline - time.monotonic()))
        except Timeout:  # a vaultops from before the folder lock holds it
            raise LockBusy(_busy_message(vault, _written_info(info_path))) from None
        try:
            info = {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "command": command or " ".join(["vaultops", *sys.argv[1:]]),
                "since": time.time(),
            }
            write_text(info_path, json.dumps(info))
            yield
        finally:
            with contextlib.suppress(OSError):
                info_path.unlink()
            lock.release()
    finally:
        os.close(fd)  # ends the folder's flock
