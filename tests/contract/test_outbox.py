"""The outbox's contract: one key, one notice, ever (sent or not, in this process or the next), a notice
pending until sent, and a failed one waiting longer before each retry.  state.db, and the twin."""

from __future__ import annotations

from tests.contract.conftest import OutboxSide
from vaultops.notify.message import Notice
from vaultops.notify.outbox import retry_delay

T0 = 1_800_000_000.0


def test_a_key_is_queued_once_ever_across_a_reopen(outboxes: OutboxSide) -> None:
    box = outboxes.outbox
    assert box.queue(Notice("REQ-a#escalated", "REQ-a waits", "body"), now=T0) is True
    assert box.queue(Notice("REQ-a#escalated", "REQ-a waits, again", "other"), now=T0 + 1) is False
    box.sent("REQ-a#escalated", now=T0 + 2)
    reopened = outboxes.reopen()
    assert reopened.queue(Notice("REQ-a#escalated", "once more", "body"), now=T0 + 3) is False
    assert reopened.pending() == []
    entry = reopened.entry("REQ-a#escalated")
    assert entry is not None and entry.notice.title == "REQ-a waits" and entry.sent == T0 + 2


def test_a_notice_is_pending_until_sent_and_a_failure_waits(outboxes: OutboxSide) -> None:
    box = outboxes.outbox
    box.queue(Notice("b", "second", "x"), now=T0 + 1)
    box.queue(Notice("a", "first", "x"), now=T0)
    assert [e.notice.key for e in box.pending()] == ["a", "b"]
    box.failed("a", "telegram said no to token 123456:ABCDEF", now=T0 + 10, secrets=["123456:ABCDEF"])
    assert [e.notice.key for e in box.pending(now=T0 + 10)] == ["b"]
    assert [e.notice.key for e in box.pending(now=T0 + 10 + retry_delay(1))] == ["a", "b"]
    entry = box.entry("a")
    assert entry is not None and entry.attempts == 1 and "123456:ABCDEF" not in (entry.last_error or "")
    box.reached("a", "telegram:1")
    box.reached("a", "telegram:1")
    entry = box.entry("a")
    assert entry is not None and entry.reached == frozenset({"telegram:1"})
    box.sent("a", now=T0 + 30)
    box.failed("a", "too late", now=T0 + 31)  # a sent notice takes no more failures
    entry = box.entry("a")
    assert entry is not None and entry.sent == T0 + 30 and entry.last_error is None and entry.attempts == 1
    assert [e.notice.key for e in box.pending()] == ["b"]


def test_a_secret_never_reaches_the_outbox(outboxes: OutboxSide) -> None:
    key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    outboxes.outbox.queue(Notice("k", "title", f"the key is {key}"), now=T0)
    entry = outboxes.reopen().entry("k")
    assert entry is not None and key not in entry.notice.body
