"""The kill switch's pass logic on the twins (``tests/support/twin.py``): a ``halt: yes`` pushed to the
dashboard note from the phone stops every machine from claiming, firing a schedule or starting a job; each
machine says it once, and once when ``halt: no`` lifts it; vaultops's redraws keep the person's lines; a
halt typed on one machine reaches the others.  The daemon's part (stopping running jobs, the gate) is in
tests/e2e/test_halt_fleet.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.clones import after, request_block
from tests.support.halt import DASHBOARD, with_props
from tests.support.helpers import INBOX
from tests.support.twin import TwinFleet, no_processes  # noqa: F401
from vaultops.decide.halt import read_halt
from vaultops.engine.halt import drawn_keeping_halt
from vaultops.model import State
from vaultops.notify.replies import ChatAnswer
from vaultops.render.results import RunResult
from vaultops.run.stop import SHUT_DOWN, halted_reason

pytestmark = pytest.mark.usefixtures("no_processes")

PLAN = "---\ntype: research\nschedule: every 1h\n---\nSummarise the open threads.\n"


def fleet_of(tmp_path: Path) -> TwinFleet:
    fleet = TwinFleet(tmp_path, 2, "# Inbox\n", plans={"sweep.md": PLAN})
    fleet.tick(0)  # the schedule's first run, and the dashboard
    fleet.tick(1)
    assert fleet.runs()["PLAN-sweep"] == 1
    return fleet


def test_a_halt_from_the_phone_stops_claims_and_schedules_on_every_machine(tmp_path: Path) -> None:
    fleet = fleet_of(tmp_path)
    fleet.person_push(with_props("halt: yes", "halt_reason: runaway costs"), DASHBOARD)
    fleet.person_push(lambda t: t + request_block("REQ-new", "Summarise the week."))
    fleet.clock.move(hours=2)  # the schedule is due
    before = fleet.runs()
    for _ in range(2):
        for i in (0, 1):
            report = fleet.tick(i)
            assert any("HALTED by Person: runaway costs" in w for w in report.warnings)
    assert fleet.runs() == before  # nothing ran: no schedule fired, no request started
    assert fleet.remote_requests()["REQ-new"].state is State.OPEN  # and nothing was claimed
    halts = [t for t in fleet.sent() if "HALTED" in t]
    assert sorted(halts) == [
        f"{fleet[i].vault.root.name}: host{i} HALTED by Person: runaway costs" for i in (0, 1)
    ]  # once per machine, whatever the passes
    remote = fleet.remote_text(DASHBOARD)
    assert read_halt(remote).halted and "HALTED by Person: runaway costs" in remote  # kept, and shown


def test_halt_no_resumes_once_and_only_new_work_starts(tmp_path: Path) -> None:
    fleet = fleet_of(tmp_path)
    fleet.person_push(with_props("Halt: Yes"), DASHBOARD)
    fleet.tick(0)
    fleet.person_push(lambda t: t + request_block("REQ-new", "Summarise the week."))
    fleet.tick(0)
    assert fleet.runs()["REQ-new"] == 0
    fleet.person_push(with_props("halt: no"), DASHBOARD)
    fleet.tick(0)
    fleet.tick(0)
    assert fleet.runs()["REQ-new"] == 1  # never started before: it is new work
    assert [t for t in fleet.sent() if "resumed" in t] == [f"{fleet[0].vault.root.name}: host0 resumed"]
    assert "HALTED" not in fleet.remote_text(DASHBOARD)


def test_a_halt_typed_on_one_machine_reaches_the_other(tmp_path: Path) -> None:
    fleet = fleet_of(tmp_path)
    fleet[0].save(DASHBOARD, with_props("halt: yes")(fleet[0].text(DASHBOARD)))  # in Obsidian, not committed
    fleet.tick(0)  # halted at once, and committed and pushed at once (the remote's redraw is newer)
    assert any("HALTED" in n.title for n in fleet[0].chat.sent)
    assert read_halt(fleet.remote_text(DASHBOARD)).halted
    fleet.person_push(lambda t: t + request_block("REQ-new", "Summarise the week."))
    fleet.tick(1)
    assert fleet.runs()["REQ-new"] == 0
    assert any("HALTED by the person, on agent0's machine" in t for t in fleet.sent())


def test_a_redraw_crossing_the_phones_halt_keeps_the_halt(tmp_path: Path) -> None:
    """Machine 0 redraws the dashboard (a new request changes it) while the phone pushes the halt: the
    remote's version is kept, and the halt with it."""
    fleet = fleet_of(tmp_path)
    fleet[0].save("_System/COO-Inbox.md", fleet[0].text() + request_block("REQ-here", "Summarise."))
    fleet.person_push(with_props("halt: yes"), DASHBOARD)
    fleet.tick(0)
    fleet.tick(1)
    assert read_halt(fleet.remote_text(DASHBOARD)).halted
    assert fleet.runs()["REQ-here"] == 0


def test_halt_and_resume_from_the_bot_reach_every_machine(tmp_path: Path) -> None:
    fleet = fleet_of(tmp_path)
    when = int(fleet.clock.now.timestamp())
    fleet[0].replies.say(ChatAnswer("", "halt", "it loops on the billing page", "Ann", "Telegram", when))
    fleet.person_push(lambda t: t + request_block("REQ-new", "Summarise the week."))
    fleet.tick(0)
    fleet.tick(1)
    assert fleet.runs()["REQ-new"] == 0
    said = "HALTED by Ann (Telegram): it loops on the billing page"
    assert sorted(t.split(": ", 1)[1] for t in fleet.sent() if "HALTED" in t) == [
        f"host0 {said}",
        f"host1 {said}",
    ]
    assert 'halted_by: "Ann (Telegram)"' in fleet.remote_text(DASHBOARD)
    fleet[1].replies.say(ChatAnswer("", "resume", "", "Ann", "Telegram", when + 60))
    fleet.tick(1)
    fleet.tick(0)
    assert sorted(t.split(": ", 1)[1] for t in fleet.sent() if "resumed" in t) == [
        "host0 resumed",
        "host1 resumed",
    ]
    assert fleet.runs()["REQ-new"] == 1


def test_a_stopped_job_retried_goes_on_in_its_session(tmp_path: Path) -> None:
    """The halt stopped the agent mid-run (its session announced, no result): the person's ``- retry: yes``
    resumes that session, told why it stopped.  One a shutdown stopped starts afresh, as it always has."""
    inbox = "# Inbox\n" + request_block("REQ-x", "Summarise the week.") + request_block("REQ-y", "Summarise.")
    fleet = TwinFleet(tmp_path, 1, inbox)
    machine = fleet[0]
    for rid, why, session in (
        ("REQ-x", halted_reason("HALTED by Ann: loops"), "sess-1"),
        ("REQ-y", SHUT_DOWN, "s2"),
    ):
        machine.runner.script[rid] = RunResult(
            State.INTERRUPTED, "worker-research", fleet.clock.now, 1.0, "", why, session=session
        )
    fleet.tick(0)
    assert fleet.remote_requests()["REQ-x"].state is State.INTERRUPTED
    machine.runner.script.clear()
    fleet.person_push(after("REQ-x", "- retry: yes"))
    fleet.person_push(after("REQ-y", "- retry: yes"))
    fleet.tick(0)
    retried = {job.request_id: job for job in machine.runner.jobs[-2:]}
    assert (retried["REQ-x"].resume, retried["REQ-x"].waited) == (
        "sess-1", "a halt of the fleet, which the person lifted"
    )  # fmt: skip
    assert retried["REQ-y"].resume == ""
    assert fleet.remote_requests()["REQ-x"].state is State.DONE


def test_a_halt_in_the_inbox_halts_a_vault_without_a_dashboard(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 2, "# Inbox\n", extra="[dashboard]\npath = false\n")
    fleet.person_push(
        lambda t: "---\nHalt: yes, the agent loops\n---\n" + t + request_block("REQ-n", "Summarise.")
    )
    fleet.tick(0)
    fleet.tick(1)
    assert fleet.runs()["REQ-n"] == 0
    assert sorted(t.split(": ", 1)[1] for t in fleet.sent()) == [
        f"host{i} HALTED by Person: the agent loops" for i in (0, 1)
    ]
    fleet.person_push(lambda t: t.replace("Halt: yes, the agent loops", "halt: no"))
    fleet.tick(0)
    assert fleet.runs()["REQ-n"] == 1


def test_a_clone_that_cannot_follow_the_remote_still_halts_within_one_fetch(tmp_path: Path) -> None:
    """Machine 0 has the person's unsaved-to-git edit in the inbox, and the remote changed the inbox too:
    it cannot follow the remote.  The halt on the remote's tip halts it all the same."""
    fleet = fleet_of(tmp_path)
    fleet[0].save(INBOX, fleet[0].text() + request_block("REQ-local", "Summarise the local notes."))
    fleet.person_push(lambda t: t + request_block("REQ-remote", "Summarise the week."))
    fleet.person_push(with_props("halt: yes", "halt_reason: runaway"), DASHBOARD)
    report = fleet.tick(0)
    assert any("cannot follow" in w for w in report.warnings), report.warnings
    assert any("HALTED by the person: runaway" in w for w in report.warnings), report.warnings
    assert fleet.runs()["REQ-local"] == 0


def test_a_resume_saved_while_the_dashboard_is_drawn_is_not_written_over(tmp_path: Path) -> None:
    """The pass drew the dashboard while it said ``halt: yes``; the person saved ``halt: no`` before the
    drawing was written: the note keeps the person's line (it was lost so, one run in three, in the e2e)."""
    fleet = fleet_of(tmp_path)
    machine = fleet[0]
    drawn = with_props("halt: yes")(machine.text(DASHBOARD).replace("\nrunning: 0\n", "\nrunning: 1\n"))
    machine.save(DASHBOARD, with_props("halt: no")(machine.text(DASHBOARD)))
    assert drawn_keeping_halt(machine.new_pass().ctx, DASHBOARD, drawn.encode())
    assert "\nrunning: 1\n" in machine.text(DASHBOARD)  # the drawing is written
    assert read_halt(machine.text(DASHBOARD)).kept == ("halt: no",)  # with the person's line
