"""The bus: messages between the orchestrator and its workers, in the vault's state.db
(docs/architecture.md, "Workers and the bus").

Delivery is at least once with an explicit ack: reading an inbox marks its messages delivered, and a
message that is not acked within ``REDELIVER_AFTER`` seconds is delivered again, so a reader that dies
between reading and acting loses nothing.

    from vaultops.bus import Bus
    bus = Bus(StateDB(vault.state_dir / "state.db"))
    bus.send("person", "w1", "rebase on main", priority="high")
    for message in bus.inbox("w1"):
        ...
        bus.ack("w1", message.id)
"""

from __future__ import annotations

from vaultops.bus.identity import PERSON, parent, whoami
from vaultops.bus.message import PRIORITIES, BusError, Message, check_name, check_priority
from vaultops.bus.queue import REDELIVER_AFTER, Bus

__all__ = [
    "PERSON",
    "PRIORITIES",
    "REDELIVER_AFTER",
    "Bus",
    "BusError",
    "Message",
    "check_name",
    "check_priority",
    "parent",
    "whoami",
]
