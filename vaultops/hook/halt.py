"""The fleet's halt as every gate of this process hears it: while it stands, every tool call is denied.

The gate of a job runs in the daemon's process (``hook.server``), so the daemon's main loop sets this the
moment a pass sees the halt (``engine.halt``), before it stops the running jobs: a call an agent makes
in between is denied, first of anything the policy would say.  A plain string, set and read whole: one
assignment is atomic under the interpreter lock, so the gate's threads need no lock to read it.
"""

from __future__ import annotations

_said = ""  # the halt's sentence ("HALTED by …: …"); "" while the fleet runs


def halt(sentence: str) -> None:
    global _said
    _said = sentence or "HALTED"


def resume() -> None:
    global _said
    _said = ""


def halted() -> str:
    """The halt's sentence, or "" when there is none."""
    return _said
