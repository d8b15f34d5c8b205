"""The bus's queue: send, read an inbox (marking it delivered), ack, and the log.

Every inbox read is one ``BEGIN IMMEDIATE`` transaction: it takes SQLite's write lock before it selects,
so two processes reading one inbox at the same moment are serialised and the second sees the first's
delivery marks; neither hands out a message the other just handed out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from vaultops.bus.message import PRIORITIES, BusError, Message, check_name, check_priority, storable
from vaultops.store.state import StateDB

REDELIVER_AFTER = 300.0  # seconds: an unacked message is handed out again after five minutes
TEXT_LIMIT = 1_000_000  # characters; a message is a note to an agent, not a file transfer

_COLUMNS = "id, sender, recipient, text, priority, sent_at, delivered_at, deliveries, acked_at"
# The priority is stored by name (readable with the sqlite3 shell) and ranked here for ordering.
_RANK = "CASE priority " + " ".join(f"WHEN '{p}' THEN {i}" for i, p in enumerate(PRIORITIES)) + " END"


def _message(row: tuple[Any, ...]) -> Message:
    ident, sender, to, text, priority, sent_at, delivered_at, deliveries, acked_at = row
    return Message(
        id=int(ident),
        sender=str(sender),
        to=str(to),
        text=str(text),
        priority=str(priority),
        sent_at=float(sent_at),
        delivered_at=None if delivered_at is None else float(delivered_at),
        deliveries=int(deliveries),
        acked_at=None if acked_at is None else float(acked_at),
    )


class Bus:
    """The bus of one state.db.  ``clock`` is injectable so that tests can move time past the
    redelivery timeout without waiting for it."""

    def __init__(self, state: StateDB, clock: Callable[[], float] = time.time) -> None:
        self.state = state
        self.db = state.db
        self.clock = clock
        # StateDB's connection may be shared between threads: a single statement takes its lock too, so that
        # it never lands inside another thread's transaction.
        self._lock = state.lock

    def send(self, sender: str, to: str, text: str, priority: str = "normal") -> Message:
        check_priority(priority)
        check_name(sender, "sender")
        check_name(to, "recipient")
        if not text.strip():
            raise BusError("the message is empty; say something for the recipient to read")
        if len(text) > TEXT_LIMIT:
            raise BusError(
                f"the message is {len(text)} characters long; the bus carries at most {TEXT_LIMIT}"
            )
        now = self.clock()
        with self._lock:  # one INSERT in autocommit mode is its own transaction
            cur = self.db.execute(
                "INSERT INTO bus (sender, recipient, text, priority, sent_at) VALUES (?, ?, ?, ?, ?)",
                (sender, to, storable(text), priority, now),
            )
        ident = int(cur.lastrowid or 0)
        return Message(ident, sender, to, storable(text), priority, now, None, 0, None)

    def inbox(self, name: str, limit: int = 50) -> list[Message]:
        """Up to ``limit`` messages for ``name`` that are unacked and not handed out in the last
        ``REDELIVER_AFTER`` seconds, highest priority first, then oldest; each is marked delivered now."""
        if limit < 1:
            raise BusError(f"limit is {limit}; read at least one message")
        now = self.clock()
        with self.state.immediate() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM bus WHERE recipient = ? AND acked_at IS NULL"
                " AND (delivered_at IS NULL OR delivered_at < ?)"
                f" ORDER BY {_RANK} DESC, sent_at, id LIMIT ?",
                (name, now - REDELIVER_AFTER, limit),
            ).fetchall()
            ids = [row[0] for row in rows]
            db.executemany(
                "UPDATE bus SET delivered_at = ?, deliveries = deliveries + 1 WHERE id = ?",
                [(now, ident) for ident in ids],
            )
        return [_message((*row[:6], now, row[7] + 1, row[8])) for row in rows]

    def ack(self, name: str, message_id: int) -> bool:
        """Mark a message read and acted on.  True when this call acked it; False when it was already
        acked, is not ``name``'s, or does not exist (``get`` tells which)."""
        with self._lock:
            cur = self.db.execute(
                "UPDATE bus SET acked_at = ? WHERE id = ? AND recipient = ? AND acked_at IS NULL",
                (self.clock(), message_id, name),
            )
        return cur.rowcount == 1

    def get(self, message_id: int) -> Message | None:
        row = self.db.execute(f"SELECT {_COLUMNS} FROM bus WHERE id = ?", (message_id,)).fetchone()
        return None if row is None else _message(row)

    def log(self, name: str | None = None, limit: int = 100) -> list[Message]:
        """Every message, acked or not, newest first; with ``name``, those it sent or received."""
        if limit < 1:
            raise BusError(f"limit is {limit}; show at least one message")
        where, args = ("", ()) if name is None else (" WHERE sender = ? OR recipient = ?", (name, name))
        rows = self.db.execute(
            f"SELECT {_COLUMNS} FROM bus{where} ORDER BY sent_at DESC, id DESC LIMIT ?", (*args, limit)
        ).fetchall()
        return [_message(row) for row in rows]
