"""The bus as a library: at-least-once delivery with explicit ack, priorities, names and the log, on
state.db files in a temp folder; and a model of any interleaving of sends, reads and acks."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.bus import Clock, open_bus
from vaultops.bus import PRIORITIES, REDELIVER_AFTER, Bus, BusError, Message, parent, whoami


@pytest.fixture
def bus(tmp_path: Path) -> Iterator[Bus]:
    state, bus = open_bus(tmp_path / "state" / "state.db")
    yield bus
    state.close()


def ids(messages: list[Message]) -> list[int]:
    return [m.id for m in messages]


# --- the library -------------------------------------------------------------------------------------


def test_unacked_message_comes_back_after_the_timeout_and_not_before(tmp_path: Path) -> None:
    clock = Clock()
    state, bus = open_bus(tmp_path / "state.db", clock)
    sent = bus.send("person", "w1", "rebase on main")
    assert sent.deliveries == 0 and sent.delivered_at is None
    (first,) = bus.inbox("w1")
    assert first.id == sent.id and first.deliveries == 1 and first.delivered_at == clock.now
    assert bus.inbox("w1") == []
    clock.advance(REDELIVER_AFTER - 0.5)
    assert bus.inbox("w1") == []  # still within the five minutes
    clock.advance(1.0)
    (again,) = bus.inbox("w1")
    assert again.id == sent.id and again.deliveries == 2 and again.text == "rebase on main"
    # the redelivery restarts the timer
    clock.advance(REDELIVER_AFTER - 0.5)
    assert bus.inbox("w1") == []
    state.close()


def test_an_acked_message_never_comes_back(tmp_path: Path) -> None:
    clock = Clock()
    state, bus = open_bus(tmp_path / "state.db", clock)
    sent = bus.send("person", "w1", "one")
    bus.inbox("w1")
    assert bus.ack("w1", sent.id) is True
    for _ in range(5):
        clock.advance(REDELIVER_AFTER * 3)
        assert bus.inbox("w1") == []
    (logged,) = bus.log()
    assert logged.acked_at is not None and logged.deliveries == 1
    state.close()


def test_a_message_can_be_acked_before_it_is_read(bus: Bus) -> None:
    sent = bus.send("person", "w1", "never mind")
    assert bus.ack("w1", sent.id)
    assert bus.inbox("w1") == []


def test_survives_reopening_the_database(tmp_path: Path) -> None:
    """A reader that crashes after reading and before acking: a new process sees the message later."""
    clock = Clock()
    state, bus = open_bus(tmp_path / "state.db", clock)
    sent = bus.send("person", "w1", "keep going")
    bus.inbox("w1")
    state.close()
    clock.advance(REDELIVER_AFTER + 1)
    state, bus = open_bus(tmp_path / "state.db", clock)
    assert ids(bus.inbox("w1")) == [sent.id]
    state.close()


def test_highest_priority_first_then_oldest(bus: Bus) -> None:
    clock = bus.clock
    assert isinstance(clock, Clock)
    order = ["normal", "low", "urgent", "high", "normal", "urgent", "low"]
    sent = []
    for i, priority in enumerate(order):
        sent.append(bus.send("person", "w1", f"m{i}", priority))
        clock.advance(1)
    got = bus.inbox("w1")
    rank = {p: i for i, p in enumerate(PRIORITIES)}
    expected = sorted(sent, key=lambda m: (-rank[m.priority], m.sent_at))
    assert ids(got) == ids(expected)
    assert [m.priority for m in got] == ["urgent", "urgent", "high", "normal", "normal", "low", "low"]


def test_limit_hands_out_the_most_urgent_and_keeps_the_rest(bus: Bus) -> None:
    low = bus.send("person", "w1", "later", "low")
    urgent = bus.send("person", "w1", "now", "urgent")
    assert ids(bus.inbox("w1", limit=1)) == [urgent.id]
    assert ids(bus.inbox("w1", limit=1)) == [low.id]
    assert bus.inbox("w1") == []


def test_inbox_holds_only_messages_for_that_name(bus: Bus) -> None:
    a = bus.send("person", "w1", "for one")
    b = bus.send("person", "w2", "for two")
    assert ids(bus.inbox("w2")) == [b.id]
    assert ids(bus.inbox("w1")) == [a.id]
    assert bus.inbox("person") == []


def test_only_the_recipient_acks_and_acking_twice_is_harmless(bus: Bus) -> None:
    sent = bus.send("orchestrator", "w1", "do it")
    bus.inbox("w1")
    assert bus.ack("w2", sent.id) is False
    assert bus.ack("orchestrator", sent.id) is False  # not even the sender
    unacked = bus.get(sent.id)
    assert unacked is not None and unacked.acked_at is None
    assert bus.ack("w1", sent.id) is True
    first = bus.get(sent.id)
    assert bus.ack("w1", sent.id) is False
    assert bus.get(sent.id) == first  # the second ack changed nothing, not even the time
    assert bus.ack("w1", 999_999) is False


@pytest.mark.parametrize("priority", ["", "NORMAL", "critical", "hi"])
def test_a_bad_priority_is_one_sentence_naming_the_choices(bus: Bus, priority: str) -> None:
    with pytest.raises(BusError) as caught:
        bus.send("person", "w1", "x", priority)
    message = str(caught.value)
    assert "\n" not in message and all(p in message for p in PRIORITIES)
    assert bus.log() == []


@pytest.mark.parametrize(
    ("sender", "to", "text"), [("person", "", "x"), ("a b", "w1", "x"), ("p", "w1", "  ")]
)
def test_bad_names_and_empty_text_are_refused(bus: Bus, sender: str, to: str, text: str) -> None:
    with pytest.raises(BusError):
        bus.send(sender, to, text)
    assert bus.log() == []


def test_log_is_newest_first_with_deliveries_and_acks(bus: Bus) -> None:
    clock = bus.clock
    assert isinstance(clock, Clock)
    m1 = bus.send("person", "w1", "one")
    clock.advance(1)
    m2 = bus.send("w1", "person", "two")
    clock.advance(1)
    m3 = bus.send("person", "w2", "three")
    bus.inbox("w1")
    clock.advance(REDELIVER_AFTER + 1)
    bus.inbox("w1")
    bus.ack("w1", m1.id)
    log = bus.log()
    assert ids(log) == [m3.id, m2.id, m1.id]
    assert log[2].deliveries == 2 and log[2].acked_at == clock.now
    assert log[0].deliveries == 0 and log[0].acked_at is None
    assert ids(bus.log("w1")) == [m2.id, m1.id]  # what it sent and what it received
    assert ids(bus.log(limit=1)) == [m3.id]


def test_text_that_is_not_utf8_is_kept_readable(bus: Bus) -> None:
    sent = bus.send("person", "w1", "bad byte: \udcff end")
    (got,) = bus.inbox("w1")
    assert got.text == sent.text == "bad byte: \ufffd end"


def test_whoami_reads_the_worker_environment() -> None:
    assert whoami({}) == "person"
    assert whoami({"VAULTOPS_WORKER": "w1", "VAULTOPS_PARENT": "orch"}) == "w1"
    assert whoami({"VAULTOPS_WORKER": "w1"}, as_name="w9") == "w9"  # --as wins
    assert whoami({"VAULTOPS_WORKER": ""}) == "person"
    assert parent({"VAULTOPS_WORKER": "w1", "VAULTOPS_PARENT": "orch"}) == "orch"
    assert parent({}) is None
    with pytest.raises(BusError):
        whoami({}, as_name="two words")


# --- the property ------------------------------------------------------------------------------------


NAMES = ("orch", "w1", "w2")


OPS = st.one_of(
    st.tuples(st.just("send"), st.sampled_from(NAMES), st.sampled_from(NAMES), st.sampled_from(PRIORITIES)),
    st.tuples(st.just("inbox"), st.sampled_from(NAMES), st.integers(1, 4)),
    st.tuples(st.just("ack"), st.sampled_from(NAMES), st.integers(0, 12)),
    st.tuples(st.just("advance"), st.sampled_from([1.0, 100.0, 299.0, 300.0, 301.0, 1000.0])),
)


@dataclass
class Modelled:
    """What the bus should know about one message."""

    to: str
    priority: str
    sent_at: float
    delivered_at: float | None = None
    deliveries: int = 0
    acked: bool = False


@given(st.lists(OPS, max_size=40))
def test_no_message_is_lost_or_misdelivered_in_any_interleaving(ops: list[tuple[Any, ...]]) -> None:
    """A model of the bus beside the real one: every inbox hands out exactly the messages that are due
    (unacked, never delivered or delivered more than REDELIVER_AFTER ago), in priority order, to their
    recipient only; acks succeed exactly once and only for the recipient; in the end every unacked
    message is delivered again once the timeout has passed."""
    rank = {p: i for i, p in enumerate(PRIORITIES)}
    with tempfile.TemporaryDirectory() as tmp:
        clock = Clock()
        state, bus = open_bus(Path(tmp) / "state.db", clock)
        model: dict[int, Modelled] = {}

        def due(name: str) -> list[int]:
            pending = [
                i
                for i, m in model.items()
                if m.to == name
                and not m.acked
                and (m.delivered_at is None or clock.now - m.delivered_at > REDELIVER_AFTER)
            ]
            return sorted(pending, key=lambda i: (-rank[model[i].priority], model[i].sent_at, i))

        for op in ops:
            if op[0] == "send":
                _, sender, to, priority = op
                sent = bus.send(sender, to, "hello", priority)
                assert sent.id not in model
                model[sent.id] = Modelled(to, priority, clock.now)
            elif op[0] == "inbox":
                _, name, limit = op
                expected = due(name)[:limit]
                got = bus.inbox(name, limit)
                assert ids(got) == expected
                for m in got:
                    assert m.to == name and m.acked_at is None  # never someone else's, never an acked one
                    model[m.id].delivered_at = clock.now
                    model[m.id].deliveries += 1
                    assert m.deliveries == model[m.id].deliveries
            elif op[0] == "ack":
                _, name, pick = op
                if not model:
                    continue
                ident = sorted(model)[pick % len(model)]
                should = model[ident].to == name and not model[ident].acked
                assert bus.ack(name, ident) is should
                model[ident].acked = model[ident].acked or should
            else:
                clock.advance(op[1])

        # nothing is lost: past the timeout, every unacked message comes back to its recipient, once
        clock.advance(REDELIVER_AFTER + 1)
        for name in NAMES:
            assert ids(bus.inbox(name, limit=1000)) == due(name)
            assert bus.inbox(name, limit=1000) == []
        logged = {m.id: m for m in bus.log(limit=1000)}
        assert set(logged) == set(model)
        for ident, want in model.items():
            assert (logged[ident].to, logged[ident].priority) == (want.to, want.priority)
            assert (logged[ident].acked_at is not None) == want.acked
            assert logged[ident].deliveries >= want.deliveries
        state.close()
