"""Named fault-injection points, so tests can kill or disturb the daemon at exact moments.

``VAULTOPS_FAULT=write.before_replace`` makes the process SIGKILL itself when it reaches that point
(several points may be given, comma-separated).  In-process tests register a hook instead.  Both are
inert unless a test sets them.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable

_hooks: dict[str, Callable[[], None]] = {}


def on(point: str, hook: Callable[[], None] | None) -> None:
    if hook is None:
        _hooks.pop(point, None)
    else:
        _hooks[point] = hook


def reach(point: str) -> None:
    hook = _hooks.get(point)
    if hook is not None:
        hook()
    wanted = os.environ.get("VAULTOPS_FAULT")
    if wanted and point in wanted.split(","):
        os.kill(os.getpid(), signal.SIGKILL)
