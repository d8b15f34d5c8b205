"""Named fault-injection points, so tests can kill or freeze vaultops at exact moments.

``VAULTOPS_FAULT`` lists points, comma-separated, each ``point[:action][@n]``: the process SIGKILLs itself
(action ``kill``, the default), stops for good (``hang``) or raises (``raise``) the ``n``-th time it
reaches the point (the first, by default; ``@n+``: the ``n``-th time and every time after).  In-process
tests register a hook instead.  Both are inert unless a test sets them.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

_hooks: dict[str, Callable[[], None]] = {}
_reached: dict[str, int] = {}


def on(point: str, hook: Callable[[], None] | None) -> None:
    if hook is None:
        _hooks.pop(point, None)
    else:
        _hooks[point] = hook


def _wanted(point: str) -> tuple[str, int] | None:
    for spec in os.environ.get("VAULTOPS_FAULT", "").split(","):
        name, _, nth = spec.strip().partition("@")
        name, _, action = name.partition(":")
        if name == point:
            # "@3+": the third time and every time after it (a fault that repeats every pass)
            return action or "kill", -int(nth[:-1]) if nth.endswith("+") else int(nth or 1)
    return None


def enabled(switch: str) -> bool:
    """A behaviour a test switches on by listing it in ``VAULTOPS_FAULT`` (e.g. ``claims.merge``)."""
    return _wanted(switch) is not None


def reach(point: str) -> None:
    hook = _hooks.get(point)
    if hook is not None:
        hook()
    wanted = _wanted(point)
    if wanted is None:
        return
    _reached[point] = _reached.get(point, 0) + 1
    action, nth = wanted
    if _reached[point] != nth and not (nth < 0 and _reached[point] >= -nth):
        return
    if action == "raise":  # a pass that fails, for the heartbeat's fail ping
        raise RuntimeError(f"fault {point}")
    if action == "hang":
        while True:
            time.sleep(3600)
    os.kill(os.getpid(), signal.SIGKILL)
