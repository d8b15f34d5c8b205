"""The outbox: notices waiting to go out, in state.db, so that none is sent twice and none is lost.

A notice is queued once per key, ever: queuing a key already queued or sent does nothing, so the pipeline
may queue on every pass without keeping its own memory of what it told.  A notice stays pending until
every target has it; each target that took it is remembered (``reached``), so a retry after a partial
failure goes only to the ones that missed it.  A failure is counted and the notice waits a little longer
before each retry, so a dead notifier does not slow every pass.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from vaultops.base.redact import redact
from vaultops.notify.message import Ask, Notice
from vaultops.store.outbox_table import OutboxRow, OutboxTable
from vaultops.store.state import StateDB

RETRY_BASE = 10.0  # seconds before the first retry; doubled after each further failure
RETRY_MAX = 600.0  # ...up to this: a notifier that is back is used again within ten minutes
ERROR_LIMIT = 500  # characters of the last error kept


@dataclass(frozen=True, slots=True)
class Entry:
    notice: Notice
    queued: float
    sent: float | None
    attempts: int  # failed attempts so far
    retry_at: float  # not tried again before this (0: at once)
    last_error: str | None  # redacted
    reached: frozenset[str]  # targets that already have it


def retry_delay(attempts: int) -> float:
    """Seconds to wait after the ``attempts``-th failure in a row."""
    return float(min(RETRY_BASE * 2 ** max(attempts - 1, 0), RETRY_MAX))


def _extra(notice: Notice) -> str:
    fields: dict[str, Any] = {"topic": notice.topic} if notice.topic else {}
    if notice.ask is not None:
        fields["ask"] = asdict(notice.ask)
    return json.dumps(fields, ensure_ascii=False)


def _notice(key: str, title: str, body: str, extra: str) -> Notice:
    try:
        fields = json.loads(extra or "{}")
        ask = Ask(**fields["ask"]) if isinstance(fields.get("ask"), dict) else None
    except (ValueError, TypeError):  # a row some other version wrote: the message, without its buttons
        fields, ask = {}, None
    topic = fields.get("topic") if isinstance(fields, dict) else ""
    return Notice(key=key, title=title, body=body, ask=ask, topic=topic if isinstance(topic, str) else "")


def _entry(row: OutboxRow) -> Entry:
    return Entry(
        notice=_notice(row.key, row.title, row.body, row.extra),
        queued=row.queued,
        sent=row.sent,
        attempts=row.attempts,
        retry_at=row.retry_at,
        last_error=row.last_error,
        reached=row.reached,
    )


class Outbox:
    """The outbox table of one state.db.  Callers serialise access (the vault lock does), as for the
    rest of state.db."""

    def __init__(self, state: StateDB, sender: str = "") -> None:
        """``sender``: whose notices these are: the vault's (""), or a worker persona's (``worker:NAME``),
        which go out through that worker's own notifiers."""
        self._table = OutboxTable(state)
        self.sender = sender

    def queue(self, notice: Notice, now: float | None = None) -> bool:
        """Keep ``notice`` to be sent; False when its key was queued before (sent or not)."""
        at = time.time() if now is None else now
        notice = notice.redacted()  # kept in state.db, then sent: never with a secret in it
        return self._table.insert(notice.key, notice.title, notice.body, self.sender, _extra(notice), at)

    def pending(self, now: float | None = None) -> list[Entry]:
        """This sender's notices not sent yet, oldest first; with ``now``, only those whose retry time has
        come."""
        return [_entry(row) for row in self._table.pending(self.sender, now)]

    def entry(self, key: str) -> Entry | None:
        row = self._table.get(key)
        return None if row is None else _entry(row)

    def reached(self, key: str, target: str) -> None:
        """``target`` has the notice: a retry will not send it there again."""
        entry = self.entry(key)
        if entry is None or target in entry.reached:
            return
        self._table.set_reached(key, entry.reached | {target})

    def sent(self, key: str, now: float | None = None) -> None:
        """Every target has it: never sent again."""
        at = time.time() if now is None else now
        self._table.mark_sent(key, at)

    def failed(
        self, key: str, error: str, now: float | None = None, secrets: Iterable[str] = (), wait: float = 0.0
    ) -> None:
        """A try that did not reach every target: it stays pending, and waits longer before the next (at
        least ``wait`` seconds: what the service asked for)."""
        at = time.time() if now is None else now
        entry = self.entry(key)
        if entry is None or entry.sent is not None:
            return
        attempts = entry.attempts + 1
        shown = redact(error, secrets)[:ERROR_LIMIT]
        self._table.mark_failed(key, attempts, at + max(retry_delay(attempts), wait), shown)
