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
from vaultops.store.state import StateDB

ERROR_LIMIT = 300


@dataclass(frozen=True, slots=True)
class Channel:
    target: str  # the target's id (see ``send.Target``)
    label: str
    failures: int  # failed tries in a row
    failing_since: float | None  # when it became failing; None while it is not
    last_error: str


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
        self.db = state.db
        self.failing_after = failing_after

    def get(self, target: str) -> Channel | None:
        row = self.db.execute(
            "SELECT target, label, failures, failing_since, last_error FROM channels WHERE target = ?",
            (target,),
        ).fetchone()
        return None if row is None else Channel(row[0], row[1], int(row[2]), row[3], row[4] or "")

    def failing(self) -> list[Channel]:
        rows = self.db.execute(
            "SELECT target, label, failures, failing_since, last_error FROM channels"
            " WHERE failing_since IS NOT NULL ORDER BY failing_since"
        )
        return [Channel(r[0], r[1], int(r[2]), r[3], r[4] or "") for r in rows]

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
        self.db.execute(
            "INSERT OR REPLACE INTO channels (target, label, failures, failing_since, last_error)"
            " VALUES (?, ?, ?, ?, ?)",
            (target, label, failures, since, shown),
        )
        return Change("failing", Channel(target, label, failures, since, shown)) if became else None

    def worked(self, target: str, label: str) -> Change | None:
        old = self.get(target)
        if old is None or (old.failures == 0 and old.failing_since is None):
            return None
        self.db.execute(
            "UPDATE channels SET failures = 0, failing_since = NULL, last_error = '' WHERE target = ?",
            (target,),
        )
        if old.failing_since is None:
            return None
        return Change("recovered", Channel(target, label, 0, None, ""))
