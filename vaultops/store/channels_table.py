"""The ``channels`` table of state.db: its SQL, and ``Channel``, one row of it (a notifier target's failed
tries in a row).  When a target counts as failing, and what is said then, is ``vaultops.notify.channels``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vaultops.store.state import StateDB

_COLUMNS = "target, label, failures, failing_since, last_error"


@dataclass(frozen=True, slots=True)
class Channel:
    target: str  # the target's id (see ``send.Target``)
    label: str
    failures: int  # failed tries in a row
    failing_since: float | None  # when it became failing; None while it is not
    last_error: str


def _channel(row: tuple[Any, ...]) -> Channel:
    return Channel(row[0], row[1], int(row[2]), row[3], row[4] or "")


class ChannelsTable:
    """The channels' rows in one state.db."""

    def __init__(self, state: StateDB) -> None:
        self.db = state.db

    def get(self, target: str) -> Channel | None:
        row = self.db.execute(f"SELECT {_COLUMNS} FROM channels WHERE target = ?", (target,)).fetchone()
        return None if row is None else _channel(row)

    def failing(self) -> list[Channel]:
        """The targets failing now, the longest failing first."""
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM channels WHERE failing_since IS NOT NULL ORDER BY failing_since"
        )
        return [_channel(row) for row in rows]

    def put(self, channel: Channel) -> None:
        """``channel`` as its target's row, whatever the row was."""
        self.db.execute(
            f"INSERT OR REPLACE INTO channels ({_COLUMNS}) VALUES (?, ?, ?, ?, ?)",
            (channel.target, channel.label, channel.failures, channel.failing_since, channel.last_error),
        )

    def clear(self, target: str) -> None:
        """No failed try in a row, and not failing."""
        self.db.execute(
            "UPDATE channels SET failures = 0, failing_since = NULL, last_error = '' WHERE target = ?",
            (target,),
        )
