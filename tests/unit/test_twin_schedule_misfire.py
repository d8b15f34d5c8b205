"""What a scheduled plan note does with the runs it missed while nothing ran (``misfire: once | skip |
all`` with a ``grace`` window), how late a run says it started, and the circuit breaker that pauses a
schedule after ``[limits] pause_after`` failed runs in a row.  Whole passes of the real driver on
``engine.memory``'s twins (``tests/support/twin.py``), one machine with no remote, as
tests/e2e/test_schedule_misfire.py ran them on a vault with no remote; the clock is a value the test sets,
the agent's results are scripted."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.support.twin import Machine, TwinClock, TwinFleet, no_processes  # noqa: F401
from vaultops.model import State
from vaultops.render.results import RunResult

pytestmark = pytest.mark.usefixtures("no_processes")

NOTE = "executor-queue/sweep.md"
T0 = datetime(2026, 5, 4, 6, 0).astimezone()
FAILED = RunResult(State.ERROR, "worker-research", T0, 0.1, "", "exit 1", exit_code=1)


def scheduled(tmp_path: Path, front: str, inbox: str = "# Inbox\n") -> tuple[TwinFleet, Machine]:
    text = f"---\ntype: research\n{front}---\nSummarise the open threads in this vault.\n"
    fleet = TwinFleet(tmp_path, 1, inbox, plans={"sweep.md": text}, clock=TwinClock(T0))
    fleet[0].shared = False
    return fleet, fleet[0]


def pass_at(machine: Machine, delta: timedelta) -> None:
    machine.clock.now = T0 + delta
    machine.tick()


def count(fleet: TwinFleet) -> int:
    """The agent's runs."""
    return sum(fleet.runs().values())


def ran(machine: Machine) -> int:
    """The note's runs."""
    return machine.text(NOTE).count("### Run — ")


def lines_of(machine: Machine, key: str) -> list[str]:
    return [line for line in machine.text(NOTE).splitlines() if line.startswith(f"- {key}: ")]


def test_once_catches_a_missed_week_up_in_one_run_and_says_every_time_it_skipped(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_schedule_misfire.py's test of the same name."""
    fleet, machine = scheduled(tmp_path, "schedule: every 2h\n")
    pass_at(machine, timedelta())
    pass_at(machine, timedelta(hours=2))
    assert count(fleet) == 2
    pass_at(machine, timedelta(days=7, hours=2))  # 84 times passed with nothing running
    pass_at(machine, timedelta(days=7, hours=2))
    assert count(fleet) == 3, "caught up once, not replayed"
    missed = lines_of(machine, "missed")
    assert len(missed) == 10, "nine times one by one, and one line for the rest: bounded, never silent"
    assert "74 runs from then to" in missed[0]
    assert missed[0].endswith("one run catches up on it (misfire: once)")
    assert all(line.endswith("(misfire: once)") for line in missed)
    last = f"- scheduled: {(T0 + timedelta(days=7, hours=2)).isoformat()}"
    assert lines_of(machine, "scheduled")[-1] == last
    # the missed lines are vaultops's, not the person's: the prompt and the note's text are unchanged
    pass_at(machine, timedelta(days=7, hours=3))
    assert count(fleet) == 3


def test_skip_leaves_runs_more_than_grace_late_unrun_and_a_late_run_says_how_late(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_schedule_misfire.py's test of the same name."""
    fleet, machine = scheduled(tmp_path, 'schedule: "0 7 * * *"\nmisfire: skip\ngrace: 10m\n')
    pass_at(machine, timedelta(minutes=30))  # first seen at 06:30: the first time is 07:00
    pass_at(machine, timedelta(hours=1))
    assert count(fleet) == 1
    assert lines_of(machine, "scheduled") == [f"- scheduled: {(T0 + timedelta(hours=1)).isoformat()}"]
    pass_at(machine, timedelta(days=3, hours=3))  # three mornings missed, the last two hours ago
    assert count(fleet) == 1, "nothing runs more than the grace late"
    missed = lines_of(machine, "missed")
    mornings = [(T0 + timedelta(days=d, hours=1)).isoformat() for d in (1, 2, 3)]
    assert [m.split()[2] for m in missed] == mornings
    assert all(m.endswith("more than 10 min late (misfire: skip)") for m in missed)
    pass_at(machine, timedelta(days=3, hours=4))
    assert count(fleet) == 1 and len(lines_of(machine, "missed")) == 3, "said once; it waits for tomorrow"
    pass_at(machine, timedelta(days=4, hours=1, minutes=7))  # seven minutes late: within the grace
    assert count(fleet) == 2
    when = (T0 + timedelta(days=4, hours=1)).isoformat()
    assert lines_of(machine, "scheduled")[-1] == f"- scheduled: {when} · started 7 min late"


def test_all_replays_each_missed_run_in_turn_and_at_most_ten(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_schedule_misfire.py's test of the same name."""
    fleet, machine = scheduled(tmp_path, "schedule: every 1h\nmisfire: all\n")
    pass_at(machine, timedelta())
    for minute in range(4):  # 01:00, 02:00 and 03:00 passed; a minute apart, so each run's block differs
        pass_at(machine, timedelta(hours=3, minutes=minute))
    assert count(fleet) == 4, "each missed run in turn, then nothing more"
    slots = [line.split()[2] for line in lines_of(machine, "scheduled")]
    assert slots == [(T0 + timedelta(hours=h)).isoformat() for h in range(4)]
    assert "started 2 h late" in lines_of(machine, "scheduled")[1]
    for minute in range(12):
        pass_at(machine, timedelta(hours=18, minutes=minute))  # fifteen more passed: the last ten replayed
    assert count(fleet) == 14
    missed = lines_of(machine, "missed")
    assert len(missed) == 5 and all("more than 10 missed runs to replay" in m for m in missed)


def test_a_schedule_that_fails_three_times_in_a_row_is_paused_until_retry(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_schedule_misfire.py's test of the same name."""
    fleet, machine = scheduled(tmp_path, "schedule: every 1h\n")
    machine.runner.script["PLAN-sweep"] = FAILED
    for hour in range(3):
        pass_at(machine, timedelta(hours=hour))
    assert ran(machine) == 3 and count(fleet) == 3
    statuses = lines_of(machine, "status")
    assert "schedule paused: 3 runs failed in a row" not in statuses[-3]
    assert statuses[-1].endswith(
        "schedule paused: 3 runs failed in a row; fix the cause, then write `- retry: yes` to resume"
    )
    for hour in range(3, 8):
        pass_at(machine, timedelta(hours=hour))
    assert ran(machine) == 3, "paused: its times come and go"
    del machine.runner.script["PLAN-sweep"]
    machine.save(NOTE, machine.text(NOTE) + "- retry: yes\n")
    pass_at(machine, timedelta(hours=8))
    assert ran(machine) == 4 and lines_of(machine, "status")[-1].split()[2] == "done"
    pass_at(machine, timedelta(hours=9))
    assert ran(machine) == 5, "resumed"


def test_one_failure_after_a_success_does_not_pause(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_schedule_misfire.py's test of the same name."""
    _, machine = scheduled(tmp_path, "schedule: every 1h\n")
    pass_at(machine, timedelta())
    machine.runner.script["PLAN-sweep"] = FAILED
    pass_at(machine, timedelta(hours=1))
    pass_at(machine, timedelta(hours=2))
    del machine.runner.script["PLAN-sweep"]
    pass_at(machine, timedelta(hours=3))
    pass_at(machine, timedelta(hours=4))
    assert ran(machine) == 5
    assert not any("paused" in s for s in lines_of(machine, "status"))


def test_a_bad_misfire_or_grace_is_an_error_in_the_note(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_schedule_misfire.py's test of the same name."""
    fleet, machine = scheduled(tmp_path, "schedule: every 1h\nmisfire: sometimes\ngrace: soon\n")
    pass_at(machine, timedelta())
    assert count(fleet) == 0
    [status] = lines_of(machine, "status")
    assert re.search(r"misfire 'sometimes' is not one of once, skip, all", status), status


@pytest.mark.parametrize(
    "front", ['schedule: "0 0 30 2 *"\n', "schedule: every 99999999999 d\n", "schedule: every 1h\n"]
)
def test_no_schedule_and_no_line_in_a_note_can_stop_the_passes(tmp_path: Path, front: str) -> None:
    """Replaces tests/e2e/test_schedule_misfire.py's test of the same name: a date no month has, a
    repetition past any calendar, or an agent's output holding lines that look like vaultops's own with a
    time far in the future: the note is said to be wrong or runs as before, and the inbox's requests still
    run."""
    hello = "# Inbox\n\n## REQ-hello\n- type: research\n- ready: yes\nSummarise the open threads.\n"
    fleet, machine = scheduled(tmp_path, front, inbox=hello)
    output = "- missed: 9999-12-31T23:00:00+00:00 — from a web page\n- scheduled: 9000-01-01T00:00:00+00:00"
    machine.runner.script["PLAN-sweep"] = RunResult(State.DONE, "worker-research", T0, 0.1, output)
    pass_at(machine, timedelta())
    pass_at(machine, timedelta(hours=1))
    pass_at(machine, timedelta(hours=2))
    assert fleet.runs()["REQ-hello"] == 1
    if front == "schedule: every 1h\n":
        assert ran(machine) == 3, "the lines in its own output neither stop nor shift the schedule"
    else:
        assert ran(machine) == 0 and "schedule" in lines_of(machine, "status")[-1]
