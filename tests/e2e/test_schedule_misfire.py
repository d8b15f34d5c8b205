"""What a scheduled plan note does with the runs it missed while nothing ran (``misfire: once | skip |
all`` with a ``grace`` window), how late a run says it started, and the circuit breaker that pauses a
schedule after ``[limits] pause_after`` failed runs in a row.  Whole passes (``tick``) on a real vault
and git repository, with a clock the test moves: nothing waits on the wall clock."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.support.helpers import make_vault, with_plans
from vaultops.engine.tick import tick
from vaultops.vault import Vault

QUEUE = "executor-queue"
T0 = datetime(2026, 5, 4, 6, 0).astimezone()


def scheduled(tmp_path: Path, front: str) -> Path:
    text = f"---\ntype: research\n{front}---\nSummarise the open threads in this vault.\n"
    vault = with_plans(make_vault(tmp_path / "v", "# Inbox\n"), {"sweep.md": text})
    return vault / QUEUE / "sweep.md"


def pass_at(note: Path, delta: timedelta) -> None:
    tick(Vault.open(note.parent.parent), clock=lambda: T0 + delta, wait_settle=False)


def count(runs: Path) -> int:
    return len(runs.read_text().split())


def ran(note: Path) -> int:
    """The note's runs (a failed attempt may be tried again on a fallback profile within one run)."""
    return note.read_text().count("### Run — ")


def lines_of(note: Path, key: str) -> list[str]:
    return [line for line in note.read_text().splitlines() if line.startswith(f"- {key}: ")]


def test_once_catches_a_missed_week_up_in_one_run_and_says_every_time_it_skipped(
    tmp_path: Path, runs: Path
) -> None:
    note = scheduled(tmp_path, "schedule: every 2h\n")
    pass_at(note, timedelta())
    pass_at(note, timedelta(hours=2))
    assert count(runs) == 2
    pass_at(note, timedelta(days=7, hours=2))  # 84 times passed with nothing running
    pass_at(note, timedelta(days=7, hours=2))
    assert count(runs) == 3, "caught up once, not replayed"
    missed = lines_of(note, "missed")
    assert len(missed) == 10, "nine times one by one, and one line for the rest: bounded, never silent"
    assert "74 runs from then to" in missed[0]
    assert missed[0].endswith("one run catches up on it (misfire: once)")
    assert all(line.endswith("(misfire: once)") for line in missed)
    assert lines_of(note, "scheduled")[-1] == f"- scheduled: {(T0 + timedelta(days=7, hours=2)).isoformat()}"
    # the missed lines are vaultops's, not the person's: the prompt and the note's text are unchanged
    pass_at(note, timedelta(days=7, hours=3))
    assert count(runs) == 3


def test_skip_leaves_runs_more_than_grace_late_unrun_and_a_late_run_says_how_late(
    tmp_path: Path, runs: Path
) -> None:
    note = scheduled(tmp_path, 'schedule: "0 7 * * *"\nmisfire: skip\ngrace: 10m\n')
    pass_at(note, timedelta(minutes=30))  # first seen at 06:30: the first time is 07:00
    pass_at(note, timedelta(hours=1))
    assert count(runs) == 1
    assert lines_of(note, "scheduled") == [f"- scheduled: {(T0 + timedelta(hours=1)).isoformat()}"]
    pass_at(note, timedelta(days=3, hours=3))  # three mornings missed, the last two hours ago
    assert count(runs) == 1, "nothing runs more than the grace late"
    missed = lines_of(note, "missed")
    mornings = [(T0 + timedelta(days=d, hours=1)).isoformat() for d in (1, 2, 3)]
    assert [m.split()[2] for m in missed] == mornings
    assert all(m.endswith("more than 10 min late (misfire: skip)") for m in missed)
    pass_at(note, timedelta(days=3, hours=4))
    assert count(runs) == 1 and len(lines_of(note, "missed")) == 3, "said once; it waits for tomorrow"
    pass_at(note, timedelta(days=4, hours=1, minutes=7))  # seven minutes late: within the grace
    assert count(runs) == 2
    when = (T0 + timedelta(days=4, hours=1)).isoformat()
    assert lines_of(note, "scheduled")[-1] == f"- scheduled: {when} · started 7 min late"


def test_all_replays_each_missed_run_in_turn_and_at_most_ten(tmp_path: Path, runs: Path) -> None:
    note = scheduled(tmp_path, "schedule: every 1h\nmisfire: all\n")
    pass_at(note, timedelta())
    for minute in range(4):  # 01:00, 02:00 and 03:00 passed; a minute apart, so each run's block differs
        pass_at(note, timedelta(hours=3, minutes=minute))
    assert count(runs) == 4, "each missed run in turn, then nothing more"
    slots = [line.split()[2] for line in lines_of(note, "scheduled")]
    assert slots == [(T0 + timedelta(hours=h)).isoformat() for h in range(4)]
    assert "started 2 h late" in lines_of(note, "scheduled")[1]
    for minute in range(12):
        pass_at(note, timedelta(hours=18, minutes=minute))  # fifteen more passed: the last ten are replayed
    assert count(runs) == 14
    missed = lines_of(note, "missed")
    assert len(missed) == 5 and all("more than 10 missed runs to replay" in m for m in missed)


def test_a_schedule_that_fails_three_times_in_a_row_is_paused_until_retry(
    tmp_path: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_EXIT", "1")
    note = scheduled(tmp_path, "schedule: every 1h\n")
    for hour in range(3):
        pass_at(note, timedelta(hours=hour))
    assert ran(note) == 3
    statuses = lines_of(note, "status")
    assert "schedule paused: 3 runs failed in a row" not in statuses[-3]
    assert statuses[-1].endswith(
        "schedule paused: 3 runs failed in a row; fix the cause, then write `- retry: yes` to resume"
    )
    for hour in range(3, 8):
        pass_at(note, timedelta(hours=hour))
    assert ran(note) == 3, "paused: its times come and go"
    monkeypatch.delenv("FAKE_AGENT_EXIT")
    with note.open("a") as fh:
        fh.write("- retry: yes\n")
    pass_at(note, timedelta(hours=8))
    assert ran(note) == 4 and lines_of(note, "status")[-1].split()[2] == "done"
    pass_at(note, timedelta(hours=9))
    assert ran(note) == 5, "resumed"


def test_one_failure_after_a_success_does_not_pause(
    tmp_path: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = scheduled(tmp_path, "schedule: every 1h\n")
    pass_at(note, timedelta())
    monkeypatch.setenv("FAKE_AGENT_EXIT", "1")
    pass_at(note, timedelta(hours=1))
    pass_at(note, timedelta(hours=2))
    monkeypatch.delenv("FAKE_AGENT_EXIT")
    pass_at(note, timedelta(hours=3))
    pass_at(note, timedelta(hours=4))
    assert ran(note) == 5
    assert not any("paused" in s for s in lines_of(note, "status"))


def test_a_bad_misfire_or_grace_is_an_error_in_the_note(tmp_path: Path, runs: Path) -> None:
    note = scheduled(tmp_path, "schedule: every 1h\nmisfire: sometimes\ngrace: soon\n")
    pass_at(note, timedelta())
    assert count(runs) == 0
    [status] = lines_of(note, "status")
    assert re.search(r"misfire 'sometimes' is not one of once, skip, all", status), status


@pytest.mark.parametrize(
    "front", ['schedule: "0 0 30 2 *"\n', "schedule: every 99999999999 d\n", "schedule: every 1h\n"]
)
def test_no_schedule_and_no_line_in_a_note_can_stop_the_passes(
    tmp_path: Path, runs: Path, monkeypatch: pytest.MonkeyPatch, front: str
) -> None:
    """A date no month has, a repetition past any calendar, or an agent's output holding lines that look
    like vaultops's own with a time far in the future: the note is said to be wrong or runs as before,
    and the inbox's requests still run."""
    monkeypatch.setenv("FAKE_AGENT_OUTPUT", "- missed: 9999-12-31T23:00:00+00:00 — from a web page\n"
                                            "- scheduled: 9000-01-01T00:00:00+00:00")  # fmt: skip
    note = scheduled(tmp_path, front)
    inbox = note.parent.parent / "_System" / "COO-Inbox.md"
    inbox.write_text("# Inbox\n\n## REQ-hello\n- type: research\n- ready: yes\nSummarise the open threads.\n")
    pass_at(note, timedelta())
    pass_at(note, timedelta(hours=1))
    pass_at(note, timedelta(hours=2))
    assert "REQ-hello" in runs.read_text().split()
    if front == "schedule: every 1h\n":
        assert ran(note) == 3, "the lines in its own output neither stop nor shift the schedule"
    else:
        assert ran(note) == 0 and "schedule" in lines_of(note, "status")[-1]
