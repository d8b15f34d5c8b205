"""A failing channel on the twin: after ``[notify] failing_after`` failed tries in a row it is an incident,
said once in the pass's warnings and once in the daily note, and its recovery is said once too; no notice
is sent twice.  Whole passes of the real driver on ``engine.memory``'s twins (``tests/support/twin.py``),
with a clock the test moves past the outbox's back-off.  tests/e2e/test_failing_channel.py keeps the
fallback URL, ``status`` and ``doctor`` over real HTTP servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import INBOX, ROTATE
from tests.support.twin import START, Machine, TwinFleet, no_processes  # noqa: F401
from vaultops.notify.telegram import TelegramError

pytestmark = pytest.mark.usefixtures("no_processes")

FAILING = "telegram chat 1 is failing (3 tries in a row)"


def daily(machine: Machine) -> str:
    rel = f"Daily/{START.strftime('%Y-%m-%d')}.md"
    return machine.text(rel) if rel in machine.tree else ""


def test_a_chat_that_keeps_failing_is_an_incident_said_once_and_its_recovery_once(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}", extra="[notify]\nfailing_after = 3\n")
    machine = fleet[0]
    machine.chat.fail = [TelegramError("502 Bad Gateway") for _ in range(4)]
    warnings = machine.tick().warnings
    assert not any("is failing" in w for w in warnings), "one failed try is a log line"
    fleet.clock.move(seconds=11)  # the outbox waits 10 s after the first failure, then 20 s
    machine.tick()
    fleet.clock.move(seconds=21)
    warnings = machine.tick().warnings
    assert [w for w in warnings if FAILING in w] != [], warnings
    assert machine.chat.sent == []
    assert daily(machine).count(FAILING) == 1
    fleet.clock.move(seconds=41)  # a fourth failure: still the one incident
    warnings = machine.tick().warnings
    assert not any("is failing" in w for w in warnings), warnings
    assert machine.chat.fail == [] and daily(machine).count("is failing") == 1

    fleet.clock.move(seconds=81)  # the chat answers again: the notice goes out once, the recovery is said
    warnings = machine.tick().warnings
    assert [n.key for n in machine.chat.sent if "REQ-rotate" in n.body] != []
    assert [w for w in warnings if "works again" in w] == ["notify: telegram chat 1 works again"]
    assert daily(machine).count("works again") == 1
    fleet.clock.move(seconds=100)
    with_drop = machine.text() + "\n## REQ-drop\n- ready: yes\nDrop the old customers table in production.\n"
    machine.save(INBOX, with_drop)
    machine.clone.person_commit([INBOX])  # with a remote, a request is taken once it is committed
    machine.tick()
    machine.tick()
    assert daily(machine).count("works again") == 1, "said once"
    keys = [n.key for n in machine.chat.sent]
    assert len(keys) == len(set(keys)) == 2, "each notice sent once"
    assert daily(machine).count(FAILING) == 1
