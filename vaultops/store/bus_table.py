"""The ``bus`` table of state.db: its SQL, and ``Message``, one row of it.

The bus's rules (names, priorities, redelivery, text limits) are ``vaultops.bus``'s; this module only
stores and reads what the bus decided.  Priorities are stored by name (readable with the sqlite3 shell) and
ranked here for ordering, by their place in the list the bus hands in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from vaultops.store.state import StateDB, storable

_COLUMNS = "id, sender, recipient, text, priority, sent_at, delivered_at, deliveries, acked_at"


@dataclass(frozen=True, slots=True)
class Message:
    id: int
    sender: str
    to: str
    text: str
    priority: str
    sent_at: float  # seconds since the epoch, by the bus's clock
    delivered_at: float | None  # the latest delivery; None until an inbox first hands it out
    deliveries: int  # how many times an inbox handed it out (more than 1: it was redelivered)
    acked_at: float | None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


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


class BusTable:
    """The bus's rows in one state.db.  ``priorities``: lowest first; a message's rank is its priority's
    place in it."""

    def __init__(self, state: StateDB, priorities: Sequence[str]) -> None:
        self.state = state
        ranks = " ".join(f"WHEN '{p}' THEN {i}" for i, p in enumerate(priorities))
        self._rank = f"CASE priority {ranks} END"

    def insert(self, sender: str, to: str, text: str, priority: str, at: float) -> Message:
        """The new message as stored: text holding bytes that were not UTF-8 (lone surrogates from the
        command line) has them as U+FFFD rather than failing the send."""
        text = storable(text)
        with self.state.lock:  # one INSERT in autocommit mode is its own transaction
            cur = self.state.db.execute(
                "INSERT INTO bus (sender, recipient, text, priority, sent_at) VALUES (?, ?, ?, ?, ?)",
                (sender, to, text, priority, at),
            )
        return Message(int(cur.lastrowid or 0), sender, to, text, priority, at, None, 0, None)

    def hand_out(self, to: str, now: float, not_since: float, limit: int) -> list[Message]:
        """Up to ``limit`` unacked messages for ``to`` not handed out since ``not_since``, highest rank
        first, then oldest, each marked delivered at ``now``: one transaction, so that two readers in two
        processes never hand out the same message."""
        with self.state.immediate() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM bus WHERE recipient = ? AND acked_at IS NULL"
                " AND (delivered_at IS NULL OR delivered_at < ?)"
                f" ORDER BY {self._rank} DESC, sent_at, id LIMIT ?",
                (to, not_since, limit),
            ).fetchall()
            db.executemany(
                "UPDATE bus SET delivered_at = ?, deliveries = deliveries + 1 WHERE id = ?",
                [(now, row[0]) for row in rows],
            )
        return [replace(m, delivered_at=now, deliveries=m.deliveries + 1) for m in map(_message, rows)]

    def ack(self, to: str, message_id: int, at: float) -> bool:
        """True when this call acked it (it is ``to``'s and was not acked yet)."""
        with self.state.lock:
            cur = self.state.db.execute(
                "UPDATE bus SET acked_at = ? WHERE id = ? AND recipient = ? AND acked_at IS NULL",
                (at, message_id, to),
            )
        return cur.rowcount == 1

    def get(self, message_id: int) -> Message | None:
        row = self.state.db.execute(f"SELECT {_COLUMNS} FROM bus WHERE id = ?", (message_id,)).fetchone()
        return None if row is None else _message(row)

    def newest(self, name: str | None, limit: int) -> list[Message]:
        """Up to ``limit`` messages, newest first; with ``name``, those it sent or received."""
        where, args = ("", ()) if name is None else (" WHERE sender = ? OR recipient = ?", (name, name))
        rows = self.state.db.execute(
            f"SELECT {_COLUMNS} FROM bus{where} ORDER BY sent_at DESC, id DESC LIMIT ?", (*args, limit)
        ).fetchall()
        return [_message(row) for row in rows]
