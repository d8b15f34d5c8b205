"""Reminders and the digest on the twin: an escalation still open after ``[notify] remind`` is reminded once
(its buttons still answer), and the daily digest goes out once, at its time, listing what waits and the
spend, across passes and two machines on one remote (each machine's daily-note line is pushed as a
compare-and-swap before it sends); a daily note that cannot be written puts them off, and with nobody to
tell no line says they went out.  Whole passes of the real driver on ``engine.memory``'s twins
(``tests/support/twin.py``) with a clock the test moves; a button press comes in as the ``ChatAnswer``
``notify.telegram`` makes of it (tests/e2e/test_telegram_buttons.py keeps Telegram's own parsing)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.support.helpers import ROTATE
from tests.support.twin import Machine, TwinClock, TwinFleet, no_processes  # noqa: F401
from vaultops.model import State
from vaultops.notify.replies import ChatAnswer, Press

pytestmark = pytest.mark.usefixtures("no_processes")

MORNING = datetime(2026, 3, 3, 9, 0).astimezone()
NOW = datetime(2026, 3, 3, 14, 0).astimezone()
ESCALATED = "machine0: REQ-rotate escalated (blocked)"


def alone(tmp_path: Path, extra: str, at: datetime, inbox: str = ROTATE) -> tuple[TwinFleet, Machine]:
    """One machine whose vault has no remote, its clock at ``at``."""
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{inbox}", extra=extra, clock=TwinClock(at))
    fleet[0].shared = False
    return fleet, fleet[0]


def daily_text(machine: Machine, when: datetime) -> str:
    rel = f"Daily/{when.strftime('%Y-%m-%d')}.md"  # the template's daily-note settings
    return machine.text(rel) if rel in machine.tree else ""


def pass_at(machine: Machine, when: datetime) -> list[str]:
    machine.clock.now = when
    return machine.tick().warnings


def test_an_open_escalation_is_reminded_once_and_its_buttons_still_work(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_reminders.py's test of the same name."""
    fleet, machine = alone(tmp_path, '[notify]\nremind = "4h"\n', NOW - timedelta(hours=5))
    machine.tick()
    assert len(machine.chat.sent) == 1
    pass_at(machine, NOW - timedelta(hours=2))
    assert len(machine.chat.sent) == 1, "not due yet"
    pass_at(machine, NOW)
    assert fleet.sent() == [ESCALATED, f"{ESCALATED} — reminder"]
    reminder = machine.chat.sent[1]
    assert "has waited 5 h for you" in reminder.body
    assert "reminded on" in daily_text(machine, NOW) and "REQ-rotate" in daily_text(machine, NOW)
    for later in (NOW, NOW + timedelta(hours=5), NOW + timedelta(hours=20)):
        pass_at(machine, later)
    assert len(machine.chat.sent) == 2, "reminded once, ever"
    assert reminder.ask is not None
    press = Press(reminder.ask.binding, int(NOW.timestamp()), "q1", machine.chat.chat_id, 7, reminder.body)
    when = int((NOW + timedelta(hours=21)).timestamp())
    machine.replies.say(ChatAnswer("REQ-rotate", "approve", "", "Ann", "Telegram", when, "once", press))
    pass_at(machine, NOW + timedelta(hours=21))
    [(pressed, toast)] = machine.replies.toasts
    assert pressed == press and toast.startswith("Approved once"), toast
    assert machine.requests()["REQ-rotate"].state is State.DONE and fleet.runs() == {"REQ-rotate": 1}


def test_remind_zero_never_reminds(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_reminders.py's test of the same name."""
    _, machine = alone(tmp_path, "[notify]\nremind = 0\n", NOW - timedelta(days=3))
    machine.tick()
    pass_at(machine, NOW)
    assert len(machine.chat.sent) == 1


def test_one_reminder_and_one_digest_across_two_machines(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_reminders.py's test of the same name."""
    fleet = TwinFleet(
        tmp_path, 2, f"# Inbox\n\n{ROTATE}", extra='[notify]\nremind = "4h"\ndigest = "08:00"\n',
        clock=TwinClock(MORNING.replace(hour=4)),
    )  # fmt: skip
    fleet.tick(0)  # escalated on machine 0
    assert len(fleet.sent()) == 1
    fleet.tick(1)
    assert len(fleet.sent()) == 1, "the other machine did not write the escalation: it does not tell it"
    fleet.clock.move(hours=5)
    for i in (1, 0, 1, 0):  # machine 1 first this time: whoever is up sends, once
        fleet.tick(i)
    said = fleet.sent()
    reminders = [t for t in said if t.endswith("REQ-rotate escalated (blocked) — reminder")]
    assert len(reminders) == 1, said
    assert len([t for t in said if "digest for" in t]) == 1, said
    [digest] = [n.body for m in fleet.machines for n in m.chat.sent if "digest for" in n.title]
    assert "Waiting for you (1), oldest first:" in digest and "REQ-rotate" in digest
    assert "obsidian://open?vault=" in digest
    daily = fleet.remote_text(f"Daily/{MORNING.strftime('%Y-%m-%d')}.md")
    assert daily.count("reminded on host1") + daily.count("reminded on host0") == 1
    assert daily.count("- digest sent on host") == 1

    fleet.clock.move(days=1)
    fleet.tick(0)
    fleet.tick(1)
    assert len([t for t in fleet.sent() if "digest for" in t]) == 2, "one digest per day"
    assert len([t for t in fleet.sent() if t.endswith("— reminder")]) == 1, "reminded once, ever"


def test_the_digest_waits_for_its_time_and_lists_failures_and_spend(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_reminders.py's test of the same name."""
    broken = "## REQ-broken\n- type: research\n- ready: yes\nResearch it.\n"
    early = NOW.replace(hour=7, minute=30)
    _, machine = alone(tmp_path, '[notify]\ndigest = "08:00"\n', early, inbox=f"{ROTATE}\n{broken}")
    machine.tick()
    assert not [n for n in machine.chat.sent if "digest" in n.title], "not before 08:00"
    pass_at(machine, early.replace(hour=8, minute=5))
    [digest] = [n.body for n in machine.chat.sent if "digest for" in n.title]
    assert "Waiting for you (1), oldest first:\n- REQ-rotate since " in digest
    assert "Spent today on " in digest and "of $10.00" in digest


def test_a_daily_note_that_cannot_be_written_puts_the_reminder_off_and_says_why(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_reminders.py's test of the same name."""
    _, machine = alone(tmp_path, '[notify]\nremind = "4h"\n', NOW - timedelta(hours=5))
    machine.tick()
    daily = f"Daily/{NOW.strftime('%Y-%m-%d')}.md"
    machine.save(daily, "# Today\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other\n")
    warnings = pass_at(machine, NOW)
    assert len(machine.chat.sent) == 1, "no reminder without its line in the daily note"
    assert any(w.startswith("reminders and the digest wait:") for w in warnings), warnings
    machine.save(daily, "# Today\n")
    pass_at(machine, NOW + timedelta(minutes=1))
    assert len(machine.chat.sent) == 2 and "reminded on" in machine.text(daily)


def test_with_nobody_to_tell_no_line_says_a_reminder_went_out(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_reminders.py's test of the same name."""
    _, machine = alone(tmp_path, '[notify]\nremind = "4h"\ndigest = "00:00"\n', NOW - timedelta(hours=5))
    machine.telling = False
    machine.tick()
    pass_at(machine, NOW)
    assert "reminded on" not in daily_text(machine, NOW) and "digest sent" not in daily_text(machine, NOW)
