"""Waiting on another process or thread: poll a condition, with a time limit, never a fixed sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

WAIT = 30.0  # generous: the machine is shared, and a passing test never waits this long


def wait_for(what: Callable[[], T], timeout: float = WAIT, every: float = 0.02) -> T:
    """Call ``what`` until it gives something true, for at most ``timeout`` seconds; what it gave last.
    That is false on a timeout, so say ``assert wait_for(...), why``: the caller says what it waited for."""
    deadline = time.monotonic() + timeout
    while True:
        value = what()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(every)
