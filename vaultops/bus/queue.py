"""The bus's queue: send, read an inbox (marking it delivered), ack, and the log.

Every inbox read is one ``BEGIN IMMEDIATE`` transaction: it takes SQLite's write lock before it selects,
so two processes reading one inbox at the same moment are serialised and the second sees the first's
delivery marks; neither hands out a message the other just handed out.  The SQL is the ledger's
(``store.bus_table``); the rules for names, priorities and redelivery are here.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from vaultops.bus.message import PRIORITIES, BusError, Message, check_name, check_priority
from vaultops.store.bus_table import BusTable
from vaultops.store.state import StateDB

REDELIVER_AFTER = 300.0  # seconds: an unacked message is handed out again after five minutes
TEXT_LIMIT = 1_000_000  # characters; a message is a note to an agent, not a file transfer


class Bus:
    """The bus of one state.db.  ``clock`` is injectable so that tests can move time past the
    redelivery timeout without waiting for it."""

    def __init__(self, state: StateDB, clock: Callable[[], float] = time.time) -> None:
        self._table = BusTable(state, PRIORITIES)
        self.clock = clock

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
        return self._table.insert(sender, to, text, priority, self.clock())

    def inbox(self, name: str, limit: int = 50) -> list[Message]:
        """Up to ``limit`` messages for ``name`` that are unacked and not handed out in the last
        ``REDELIVER_AFTER`` seconds, highest priority first, then oldest; each is marked delivered now."""
        if limit < 1:
            raise BusError(f"limit is {limit}; read at least one message")
        now = self.clock()
        return self._table.hand_out(name, now, now - REDELIVER_AFTER, limit)

    def ack(self, name: str, message_id: int) -> bool:
        """Mark a message read and acted on.  True when this call acked it; False when it was already
        acked, is not ``name``'s, or does not exist (``get`` tells which)."""
        return self._table.ack(name, message_id, self.clock())

    def get(self, message_id: int) -> Message | None:
        return self._table.get(message_id)

    def log(self, name: str | None = None, limit: int = 100) -> list[Message]:
        """Every message, acked or not, newest first; with ``name``, those it sent or received."""
        if limit < 1:
            raise BusError(f"limit is {limit}; show at least one message")
        return self._table.newest(name, limit)
