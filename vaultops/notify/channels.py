"""A channel that keeps failing is an incident, not a log line: each target's failed tries in a row are
counted in state.db, and after ``[notify] failing_after`` of them the target is failing, said once (in
the daily note, the log, ``status`` and ``doctor``), and what it cannot take goes to ``[notify]
fallback``.  The first try that works again is said once too.

A try is one send to one target; a target that failed is not tried again in the same round (see
``send``), so a round counts at most one failure per target.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from vaultops.base.redact import redact

# A channel is one row of the channels table, so it is defined with that table's SQL (the store cannot
# import notify); it is notify's type, named here as ever.
from vaultops.store.channels_table import Channel as Channel
from vaultops.store.channels_table import ChannelsTable
from vaultops.store.state import StateDB

ERROR_LIMIT = 300


@dataclass(frozen=True, slots=True)
class Change:
    """A channel became failing, or recovered: to be said once."""

    kind: Literal["failing", "recovered"]
    channel: Channel

    def sentence(self) -> str:
        c = self.channel
        if self.kind == "failing":
            return (
                f"notify: {c.label} is failing ({c.failures} tries in a row): {c.last_error}; "
                "its messages go to [notify] fallback, if any, until it answers again"
            )
        return f"notify: {c.label} works again"


class Channels:
    """The channels table of one state.db (callers serialise access, as for the rest of it)."""

    def __init__(self, state: StateDB, failing_after: int = 3) -> None:
        self._table = ChannelsTable(state)
        self.failing_after = failing_after

    def get(self, target: str) -> Channel | None:
        return self._table.get(target)

    def failing(self) -> list[Channel]:
        return self._table.failing()

    def is_failing(self, target: str) -> bool:
        found = self.get(target)
        return found is not None and found.failing_since is not None

    def failed(self, target: str, label: str, error: str, now: float | None = None) -> Change | None:
        at = time.time() if now is None else now
        old = self.get(target)
        failures = (old.failures if old else 0) + 1
        since = old.failing_since if old else None
        became = since is None and failures >= self.failing_after
        since = at if became else since
        shown = redact(error)[:ERROR_LIMIT]
        channel = Channel(target, label, failures, since, shown)
        self._table.put(channel)
        return Change("failing", channel) if became else None

    def worked(self, target: str, label: str) -> Change | None:
        old = self.get(target)
        if old is None or (old.failures == 0 and old.failing_since is None):
            return None
        self._table.clear(target)
        if old.failing_since is None:
            return None
        return Change("recovered", Channel(target, label, 0, None, ""))
