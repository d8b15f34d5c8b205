"""Reminders and the digest on the twin: an escalation still open after ``[notify] remind`` is reminded once,
and the daily digest goes out once, across passes and two machines on one remote (each machine's
daily-note line is pushed as a compare-and-swap before it sends).  Whole passes of the real driver on
``engine.memory``'s twins (``tests/support/twin.py``) with a clock the test moves."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from tests.support.helpers import ROTATE
from tests.support.twin import TwinClock, TwinFleet, no_processes  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_processes")

MORNING = datetime(2026, 3, 3, 9, 0).astimezone()


def test_one_reminder_and_one_digest_across_two_machines(tmp_path: Path) -> None:
    """Mirrors tests/e2e/test_reminders.py's test of the same name (which stays: it reads the remote's
    daily note with git and the Bot API's messages)."""
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
    daily = fleet.remote_text(f"Daily/{MORNING.strftime('%Y-%m-%d')}.md")
    assert daily.count("reminded on host1") + daily.count("reminded on host0") == 1
    assert daily.count("- digest sent on host") == 1

    fleet.clock.move(days=1)
    fleet.tick(0)
    fleet.tick(1)
    assert len([t for t in fleet.sent() if "digest for" in t]) == 2, "one digest per day"
    assert len([t for t in fleet.sent() if t.endswith("— reminder")]) == 1, "reminded once, ever"
