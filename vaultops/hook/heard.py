"""What one job's gate has heard: whether the session's start reached it, and which tool calls it judged.

This is the gate's side of the proof that it saw every call (``vaultops.run.proof`` reads the agent's
stream against it).  Claude Code runs a ``SessionStart`` hook before it prints its ``init`` line, and a
``PreToolUse`` hook, whose event carries the call's ``tool_use_id``, before the tool runs (both found by
experiment with the real CLI; ``tests/e2e/test_gate_proof.py`` keeps them true).  A call is counted as
judged the moment its event arrives, before the policy answers: whatever the answer, the call went
through the gate, and a call the gate could not answer is blocked by its client.

Written by the gate server's threads, read by the thread that watches the agent's stream.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from vaultops.hook.answer import HookAnswer

SESSION_START = "SessionStart"
JUDGED_EVENTS = ("PreToolUse", "PermissionRequest")
# SessionStart's answer: nothing on stdout (Claude Code would add it to the model's context), exit 0
STARTED = HookAnswer("")


class Heard:
    """``session_started``, ``judged(tool_use_id)``, and when the gate last heard anything (monotonic)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock  # the proof's clock: it compares its own times with ``last``
        self._lock = threading.Lock()
        self._started = False
        self._judged: set[str] = set()
        self._last = 0.0

    def hear(self, text: str) -> HookAnswer | None:
        """Take one hook event's text, as the server received it.  A ``SessionStart`` is answered here
        (returned); any other event is left to the policy (None), its tool_use_id noted first."""
        event = _event(text)
        name = event.get("hook_event_name")
        with self._lock:
            self._last = self._clock()
            if name == SESSION_START:
                self._started = True
                return STARTED
            call = event.get("tool_use_id")
            if name in JUDGED_EVENTS and isinstance(call, str) and call:
                self._judged.add(call)
        return None

    @property
    def session_started(self) -> bool:
        with self._lock:
            return self._started

    def judged(self, tool_use_id: str) -> bool:
        with self._lock:
            return tool_use_id in self._judged

    @property
    def last(self) -> float:
        """When the gate last heard an event (on its clock), 0.0 before the first."""
        with self._lock:
            return self._last


def _event(text: str) -> dict[str, Any]:
    """The event as a dict, or {} when it is not one (the policy then refuses it, as ever)."""
    try:
        event = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return event if isinstance(event, dict) else {}
