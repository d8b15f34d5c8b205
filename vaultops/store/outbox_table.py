"""The ``outbox`` table of state.db: its SQL, and ``OutboxRow``, one row of it as stored.

What a notice is (its ask, its topic) is ``vaultops.notify``'s: the row carries them as the JSON text
(``extra``) that notify wrote, and notify reads it back.  Text goes in as SQLite can store it: a note's
undecodable bytes arrive as surrogate escapes, kept as U+FFFD.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from vaultops.store.state import StateDB, storable

_COLUMNS = "key, title, body, queued, sent, attempts, retry_at, last_error, reached, extra"


@dataclass(frozen=True, slots=True)
class OutboxRow:
    key: str
    title: str
    body: str
    queued: float
    sent: float | None
    attempts: int  # failed attempts so far
    retry_at: float  # not tried again before this (0: at once)
    last_error: str | None
    reached: frozenset[str]  # targets that already have it
    extra: str  # the notice's other fields, as notify wrote them (JSON)


def _row(row: tuple[Any, ...]) -> OutboxRow:
    key, title, body, queued, sent, attempts, retry_at, last_error, reached, extra = row
    return OutboxRow(
        key=key,
        title=title,
        body=body,
        queued=float(queued),
        sent=None if sent is None else float(sent),
        attempts=int(attempts),
        retry_at=float(retry_at),
        last_error=last_error,
        reached=frozenset(json.loads(reached)),
        extra=extra,
    )


class OutboxTable:
    """The outbox's rows in one state.db."""

    def __init__(self, state: StateDB) -> None:
        self.db = state.db

    def insert(self, key: str, title: str, body: str, sender: str, extra: str, at: float) -> bool:
        """A new row; False when ``key`` has one already (sent or not)."""
        cur = self.db.execute(
            "INSERT OR IGNORE INTO outbox (key, title, body, queued, sender, extra)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (storable(key), storable(title), storable(body), at, sender, storable(extra)),
        )
        return cur.rowcount == 1

    def pending(self, sender: str, due: float | None) -> list[OutboxRow]:
        """``sender``'s rows not sent yet, oldest first; with ``due``, only those to retry by then."""
        sql = f"SELECT {_COLUMNS} FROM outbox WHERE sent IS NULL AND sender = ?"
        args: tuple[str | float, ...] = (sender,)
        if due is not None:
            sql += " AND retry_at <= ?"
            args = (sender, due)
        return [_row(row) for row in self.db.execute(sql + " ORDER BY queued, rowid", args)]

    def get(self, key: str) -> OutboxRow | None:
        row = self.db.execute(f"SELECT {_COLUMNS} FROM outbox WHERE key = ?", (storable(key),)).fetchone()
        return None if row is None else _row(row)

    def set_reached(self, key: str, targets: frozenset[str]) -> None:
        self.db.execute(
            "UPDATE outbox SET reached = ? WHERE key = ?", (json.dumps(sorted(targets)), storable(key))
        )

    def mark_sent(self, key: str, at: float) -> None:
        """Sent to every target, once: a row already sent keeps its first time."""
        self.db.execute(
            "UPDATE outbox SET sent = ?, last_error = NULL WHERE key = ? AND sent IS NULL",
            (at, storable(key)),
        )

    def mark_failed(self, key: str, attempts: int, retry_at: float, error: str) -> None:
        self.db.execute(
            "UPDATE outbox SET attempts = ?, retry_at = ?, last_error = ? WHERE key = ?",
            (attempts, retry_at, storable(error), storable(key)),
        )
