"""What a worker may be called: a folder name under ``.vaultops/state/workers/`` and a name on the bus.
Pure, and free of imports, so that the plan-note parser can check a ``worker:`` name too."""

from __future__ import annotations

import re

WORKER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.@-]+")


def name_problem(name: str) -> str:
    """Why ``name`` cannot name a worker ("" when it can)."""
    if WORKER_NAME.match(name):
        return ""
    return f"{name!r} is not a usable worker name; use letters, digits, '.', '_', '-' or '@' (at most 64)"


def name_from(text: str) -> str:
    """A usable worker name made from any text (a plan note's file name)."""
    return _UNSAFE.sub("-", text).strip("-._@")[:64] or "worker"
