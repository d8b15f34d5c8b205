"""A machine that goes quiet is said once for the whole fleet, and once when it is back; a machine that
cannot reach the remote finds nobody quiet.  Whole passes of the real driver on ``engine.memory``'s twins
(``tests/support/twin.py``): machines on one remote, with a clock the test sets."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.support.twin import TwinClock, TwinFleet, no_processes  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_processes")

NOW = datetime(2026, 3, 3, 10, 5).astimezone()
QUIET = '[daemon]\npeer_silent = "30m"\n'


def pass_on(fleet: TwinFleet, i: int, when: datetime) -> list[str]:
    fleet.clock.now = when
    return fleet.tick(i).warnings


def test_a_quiet_machine_is_said_once_for_the_fleet_and_once_when_back(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_peer_silent.py's test of the same name."""
    fleet = TwinFleet(tmp_path, 3, "# Inbox\n", extra=QUIET, clock=TwinClock(NOW))
    for i in (0, 1, 2):
        pass_on(fleet, i, NOW)
    for i in (0, 1):  # each sees host2's last pass, and starts counting from here on its own clock
        pass_on(fleet, i, NOW + timedelta(minutes=1))
    for minutes in (10, 20, 29):  # host0 and host1 go on; host2 has stopped
        for i in (0, 1):
            assert not [w for w in pass_on(fleet, i, NOW + timedelta(minutes=minutes)) if "peer" in w]
    assert not [t for t in fleet.sent() if "quiet" in t]
    later = NOW + timedelta(minutes=45)
    said = [w for i in (1, 0, 1, 0) for w in pass_on(fleet, i, later) if w.startswith("peer:")]
    quiet = [t for t in fleet.sent() if t.endswith("host2 is quiet")]
    assert len(quiet) == 1, fleet.sent()
    assert len(said) == 1 and "host2 is quiet since" in said[0], said
    assert not [t for t in fleet.sent() if "host0" in t or "host1" in t], "both kept making passes"
    [message] = [f"{n.title}\n{n.body}" for m in fleet.machines for n in m.chat.sent if "quiet" in n.title]
    assert "obsidian://open?vault=" in message and "vaultops" in message
    remote_daily = fleet.remote_text(f"Daily/{later.strftime('%Y-%m-%d')}.md")
    assert remote_daily.count("- host2 quiet · last pass ") == 1
    for i in (0, 1):  # not again, however long it stays quiet
        pass_on(fleet, i, later + timedelta(hours=3))
    assert len([t for t in fleet.sent() if t.endswith("host2 is quiet")]) == 1

    back = later + timedelta(hours=4)
    pass_on(fleet, 2, back)  # host2 makes a pass: its note says so
    for i in (0, 1, 0):
        pass_on(fleet, i, back + timedelta(minutes=1))
    assert len([t for t in fleet.sent() if t.endswith("host2 is back")]) == 1, fleet.sent()
    for i in (0, 1):
        pass_on(fleet, i, back + timedelta(minutes=2))
    assert len([t for t in fleet.sent() if t.endswith("host2 is back")]) == 1


def test_a_machine_that_cannot_reach_the_remote_finds_nobody_quiet(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_peer_silent.py's test of the same name."""
    fleet = TwinFleet(tmp_path, 2, "# Inbox\n", extra=QUIET, clock=TwinClock(NOW))
    for i in (0, 1):
        pass_on(fleet, i, NOW)
    pass_on(fleet, 0, NOW + timedelta(minutes=1))
    fleet.origin.reachable = False  # the remote is unreachable from here on
    warnings = pass_on(fleet, 0, NOW + timedelta(hours=2))
    assert [w for w in warnings if "cannot be reached" in w] != [], warnings
    assert not [w for w in warnings if w.startswith("peer:")], warnings
    assert not [t for t in fleet.sent() if "quiet" in t]
