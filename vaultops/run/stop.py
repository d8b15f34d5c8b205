"""Why running jobs are told to stop: the daemon shutting down, or the fleet's halt (``engine.halt``).

The dispatcher's ``cancel`` is a ``threading.Event`` its jobs watch; ``Stop`` is one that also carries the
sentence their requests get, so that a job the halt stopped says so, not that vaultops shut down.
"""

from __future__ import annotations

import threading

SHUT_DOWN = "stopped when vaultops shut down; `- retry: yes` runs it again"
BY_HALT = "stopped by the fleet's halt"


def halted_reason(sentence: str) -> str:
    """What a job the fleet's halt stopped says (``sentence``: the halt's own, "HALTED by …: …")."""
    return f"{BY_HALT} ({sentence}); `- retry: yes` runs it again"


class Stop(threading.Event):
    def __init__(self) -> None:
        super().__init__()
        self.reason = SHUT_DOWN

    def stop(self, reason: str) -> None:
        """Stop the jobs watching this, each to say ``reason``."""
        self.reason = reason
        self.set()


def stopped_why(cancel: threading.Event | None) -> str:
    """The reason an interrupted job gives: its ``Stop``'s, else the shutdown's."""
    return cancel.reason if isinstance(cancel, Stop) else SHUT_DOWN
