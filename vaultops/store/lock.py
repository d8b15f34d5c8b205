"""One pass at a time per vault on this machine: a file lock under ``.vaultops/state/``.

``tick`` and the daemon share it.  Whoever holds it writes who they are next to it, so a second pass
can say who is busy instead of just failing.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from vaultops.base.confine import confine, make_dirs, write_text
from vaultops.base.errors import LockBusy


def _busy_message(vault: Path, info_path: Path) -> str:
    try:
        info = json.loads(info_path.read_text())
    except (OSError, ValueError):
        return f"{vault}: another vaultops process holds the vault lock; try again when it finishes"
    since = time.strftime("%H:%M:%S", time.localtime(info.get("since", 0)))
    who = f"pid {info.get('pid')} on {info.get('host')} (`{info.get('command')}`, since {since})"
    if str(info.get("command", "")).endswith(" run"):
        # The daemon never lets go, so "try again" would be wrong advice.
        return (
            f"{vault}: the vaultops daemon holds this vault: {who}; it takes requests itself — "
            "stop it first (`vaultops service status` shows whether it is the service)"
        )
    return f"{vault}: another pass holds the vault lock: {who}; try again when it finishes"


@contextmanager
def vault_lock(state_dir: Path, *, wait: float, command: str = "") -> Iterator[None]:
    make_dirs(state_dir)
    lock_path = confine(state_dir / "vault.lock")
    info_path = confine(state_dir / "vault.lock.json")
    lock = FileLock(str(lock_path))
    try:
        lock.acquire(timeout=wait)
    except Timeout:
        raise LockBusy(_busy_message(state_dir.parent.parent, info_path)) from None
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
