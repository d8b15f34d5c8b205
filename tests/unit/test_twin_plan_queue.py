"""Plan notes in executor-queue/ on the twin: they run through the same pass as the inbox, one job per note,
status and result lines appended at the note's end, the frontmatter never touched; schedules follow a clock
the test moves.  Whole passes of the real driver on ``engine.memory``'s twins (``tests/support/twin.py``),
one machine with no remote, as tests/e2e/test_plan_queue.py ran them on a vault with no remote."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from tests.support.twin import Machine, TwinClock, TwinFleet, no_processes  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_processes")

QUEUE = "executor-queue"
T0 = datetime(2026, 5, 4, 6, 0).astimezone()


def plan(front: str, body: str = "Summarise the open threads in this vault.") -> str:
    return f"---\n{front}---\n{body}\n"


def with_plans(tmp_path: Path, plans: dict[str, str]) -> tuple[TwinFleet, Machine]:
    fleet = TwinFleet(tmp_path, 1, "# Inbox\n", plans=plans, clock=TwinClock(T0))
    fleet[0].shared = False
    return fleet, fleet[0]


def ran(fleet: TwinFleet) -> list[str]:
    return sorted(fleet.runs().elements())


def test_a_plan_note_runs_once_and_its_lines_go_at_its_end(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_plan_queue.py's test of the same name."""
    text = plan("type: research\nfiles: [notes/**]\n")
    fleet, machine = with_plans(tmp_path, {"summary.md": text})
    report = machine.tick()
    after = machine.text(f"{QUEUE}/summary.md")
    assert after.startswith(text), "the person's note is kept byte for byte; lines are only appended"
    added = after[len(text) :]
    assert "- locked-by: agent0" in added and "### Result — " in added and "- status: done" in added
    assert ran(fleet) == ["PLAN-summary"]
    assert ("PLAN-summary", "done") in [(rid, state) for rid, state, _ in report.outcomes]
    head = machine.clone.origin.commits[machine.clone.head]
    assert machine.git.blob(head.parents[0], f"{QUEUE}/summary.md") != head.tree[f"{QUEUE}/summary.md"]
    machine.tick()
    assert ran(fleet) == ["PLAN-summary"], "a finished plan note does not run again"


def test_paused_and_draft_notes_do_not_run(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_plan_queue.py's test of the same name."""
    notes = {
        "paused.md": plan("type: research\nstatus: paused\n"),
        "draft.md": plan("type: research\ndraft: true\n"),
    }
    fleet, machine = with_plans(tmp_path, notes)
    machine.tick()
    assert ran(fleet) == []
    for name, text in notes.items():
        assert machine.text(f"{QUEUE}/{name}") == text


def test_a_scheduled_note_runs_when_due_and_catches_up_once(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_plan_queue.py's test of the same name."""
    fleet, machine = with_plans(tmp_path, {"sweep.md": plan("type: research\nschedule: every 2h\n")})
    machine.tick()
    assert len(ran(fleet)) == 1  # never run: due at once
    assert "### Run — 2026-05-04 06:00 — agent0" in machine.text(f"{QUEUE}/sweep.md")
    fleet.clock.move(hours=1, minutes=59)
    machine.tick()
    assert len(ran(fleet)) == 1
    fleet.clock.move(minutes=1)
    machine.tick()
    assert len(ran(fleet)) == 2
    fleet.clock.move(days=7)  # a week with nothing running: 84 runs missed
    machine.tick()
    machine.tick()
    assert len(ran(fleet)) == 3, "caught up once, not replayed"
    assert machine.text(f"{QUEUE}/sweep.md").count("### Run — ") == 3


def test_a_cron_note_waits_for_its_time(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_plan_queue.py's test of the same name."""
    fleet, machine = with_plans(tmp_path, {"daily.md": plan('type: research\nschedule: "0 7 * * *"\n')})
    fleet.clock.move(minutes=30)
    machine.tick()
    assert ran(fleet) == []
    fleet.clock.move(minutes=30)
    machine.tick()
    assert ran(fleet) == ["PLAN-daily"]
    fleet.clock.move(hours=1)
    machine.tick()
    assert ran(fleet) == ["PLAN-daily"]


def test_an_ambiguous_schedule_is_an_error_in_the_note(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_plan_queue.py's test of the same name."""
    fleet, machine = with_plans(tmp_path, {"vague.md": plan("type: research\nschedule: 30m\n")})
    machine.tick()
    text = machine.text(f"{QUEUE}/vague.md")
    assert "- status: error" in text and "write `every 30m` to repeat it" in text
    assert ran(fleet) == []


def test_a_workdir_outside_the_allowed_roots_is_an_error_in_the_note(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_plan_queue.py's test of the same name."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    fleet, machine = with_plans(tmp_path, {"far.md": plan(f"type: research\nworkdir: {outside}\n")})
    machine.tick()
    after = machine.text(f"{QUEUE}/far.md")
    assert "- status: error" in after and "outside [limits] allowed_roots" in after
    assert ran(fleet) == []


def test_plan_notes_whose_files_overlap_never_run_in_one_pass(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_plan_queue.py's test of the same name."""
    fleet, machine = with_plans(
        tmp_path,
        {
            "a.md": plan("type: research\nfiles: [src/tabs/**]\n"),
            "b.md": plan("type: research\nfiles: [src/tabs/preview.ts]\n"),
            "c.md": plan("type: research\nfiles: [docs/**]\n"),
        },
    )
    machine.tick()
    assert ran(fleet) == ["PLAN-a", "PLAN-c"]
    machine.tick()
    assert ran(fleet) == ["PLAN-a", "PLAN-b", "PLAN-c"]


def test_a_plan_note_with_broken_yaml_is_said_and_nothing_runs(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_plan_queue.py's test of the same name."""
    fleet, machine = with_plans(tmp_path, {"bad.md": "---\ntype: [research\n---\nDo it.\n"})
    report = machine.tick()
    assert ran(fleet) == []
    text = machine.text(f"{QUEUE}/bad.md")
    assert "- status: error" in text and "not valid YAML" in text, (text, report.warnings)


def test_a_blocked_plan_note_is_escalated_and_runs_once_when_approved(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_plan_queue.py's test of the same name."""
    rotate = plan("", "Rotate the Stripe secret key in production.")
    fleet, machine = with_plans(tmp_path, {"rotate.md": rotate})
    machine.tick()
    rel = f"{QUEUE}/rotate.md"
    assert "- status: escalated" in machine.text(rel)
    machine.save(rel, machine.text(rel) + "- decision: approve\n")
    machine.tick()
    assert ran(fleet) == ["PLAN-rotate"]
    assert machine.text(rel).rstrip().splitlines()[-1].startswith("- status: done")


def test_a_plan_note_is_claimed_once_across_two_machines(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 2, "# Inbox\n", plans={"summary.md": plan("type: research\n")})
    for _ in range(2):
        fleet.tick(0)
        fleet.tick(1)
    assert fleet.runs() == {"PLAN-summary": 1}
    assert "- status: done" in fleet.remote_text(f"{QUEUE}/summary.md")
    assert fleet[1].text(f"{QUEUE}/summary.md") == fleet.remote_text(f"{QUEUE}/summary.md")
