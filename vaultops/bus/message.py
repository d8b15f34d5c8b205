"""One message on the bus, and the rules for what a message may hold."""

from __future__ import annotations

from vaultops.base.errors import VaultopsError

# A message is one row of the bus table, so it is defined with that table's SQL (the store cannot import the
# bus); it is the bus's type, named here as ever.
from vaultops.store.bus_table import Message as Message

# Lowest first: the index of a priority is its rank, and an inbox hands out the highest rank first.
PRIORITIES: tuple[str, ...] = ("low", "normal", "high", "urgent")
NAME_LIMIT = 200  # characters; a name is a worker's name or "person", never a paragraph


class BusError(VaultopsError):
    """A bad priority, name or text: the caller's mistake, said in one sentence."""


def check_priority(priority: str) -> str:
    if priority not in PRIORITIES:
        raise BusError(f"unknown priority {priority!r}; use one of: {', '.join(PRIORITIES)}")
    return priority


def check_name(name: str, role: str = "name") -> str:
    """A sender's or recipient's name: what a worker is called, so no blanks and no control characters
    (it is printed in one column of ``bus log``)."""
    if not name or name != name.strip() or any(ch.isspace() or not ch.isprintable() for ch in name):
        raise BusError(f"bad {role} {name!r}: a name is one word without spaces or control characters")
    if len(name) > NAME_LIMIT:
        raise BusError(f"{role} is {len(name)} characters long; a name has at most {NAME_LIMIT}")
    return name
