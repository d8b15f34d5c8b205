"""The person's answers in the note, on the twin: approve, deny, cancel and retry, each acknowledged with a
status line, each counted only after the status it answers, and only for its own request.  Whole passes of
the real driver on ``engine.memory``'s twins (``tests/support/twin.py``), one machine with no remote, as
tests/e2e/test_answers.py ran them on a vault with no remote."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.clones import statuses as status_lines
from tests.support.helpers import INBOX, ROTATE
from tests.support.twin import Machine, TwinFleet, alone, answer, no_processes  # noqa: F401
from vaultops.model import State

pytestmark = pytest.mark.usefixtures("no_processes")

MERGE = "## REQ-merge\n- type: code\n- ready: yes\nMerge the release branch into main.\n"


def statuses(machine: Machine, rid: str) -> list[str]:
    return status_lines(machine.text(), rid)


def answered(machine: Machine, rid: str, line: str) -> None:
    """A pass escalates ``rid``; the person answers ``line``; a pass reads the answer."""
    machine.tick()
    assert machine.requests()[rid].state is State.ESCALATED
    answer(machine, rid, line)
    machine.tick()


def test_an_approved_escalation_runs_once_on_its_route_and_is_acknowledged(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_answers.py's test of the same name."""
    fleet, machine = alone(tmp_path, ROTATE)
    answered(machine, "REQ-rotate", "- decision: approve — rotate it now, I am watching")
    said = statuses(machine, "REQ-rotate")
    assert [s.split()[0] for s in said] == ["escalated", "approved", "running", "done"]
    assert "— approved once by the person — rotate it now, I am watching; runs once on worker-code" in said[1]
    assert fleet.runs() == {"REQ-rotate": 1}
    machine.tick()
    machine.tick()
    assert fleet.runs() == {"REQ-rotate": 1}, "an approval runs a request once"
    assert machine.runner.ran_twice() == []


def test_an_approval_may_name_the_profile_that_runs_it(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_answers.py's test of the same name."""
    _, machine = alone(tmp_path, MERGE)
    answered(machine, "REQ-merge", "- decision: approve — use worker-research for this one")
    merge = machine.requests()["REQ-merge"]
    assert merge.state is State.DONE
    assert merge.outcomes[-1].route == "worker-research"
    assert "runs once on worker-research" in statuses(machine, "REQ-merge")[1]
    assert [j.profile for j in machine.runner.jobs] == ["worker-research"]


def test_a_denied_escalation_is_acknowledged_and_never_runs(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_answers.py's test of the same name."""
    fleet, machine = alone(tmp_path, ROTATE)
    machine.tick()
    answer(machine, "REQ-rotate", "- decision: deny — not this week")
    machine.tick()
    assert machine.requests()["REQ-rotate"].state is State.DENIED
    assert statuses(machine, "REQ-rotate")[-1].endswith("— denied by the person — not this week")
    answer(machine, "REQ-rotate", "- decision: approve")  # after a final state: nothing happens
    machine.tick()
    assert fleet.runs() == {}
    assert machine.requests()["REQ-rotate"].state is State.DENIED


def test_an_answer_from_before_the_escalation_never_counts(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_answers.py's test of the same name."""
    fleet, machine = alone(tmp_path, ROTATE.replace("- ready: yes\n", "- ready: yes\n- decision: approve\n"))
    machine.tick()
    machine.tick()
    assert [s.split()[0] for s in statuses(machine, "REQ-rotate")] == ["escalated"]
    assert fleet.runs() == {}


def test_a_decision_never_applies_to_another_request(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_answers.py's test of the same name."""
    fleet, machine = alone(tmp_path, f"{ROTATE}\n{MERGE}")
    machine.tick()
    answer(machine, "REQ-merge", "- decision: approve")
    machine.tick()
    found = machine.requests()
    assert found["REQ-merge"].state is State.DONE
    assert found["REQ-rotate"].state is State.ESCALATED
    assert fleet.runs() == {"REQ-merge": 1}


@pytest.mark.parametrize("before", ["escalated", "error"])
def test_cancel_is_acknowledged_for_a_request_that_is_not_running(tmp_path: Path, before: str) -> None:
    """Replaces tests/e2e/test_answers.py's test of the same name."""
    block = {
        "escalated": ROTATE,
        "error": "## REQ-x\n- ready: yes\n- timeout: soon\nSummarise the week.\n",
    }[before]
    fleet, machine = alone(tmp_path, block)
    rid = next(iter(machine.requests()))
    machine.tick()
    assert machine.requests()[rid].state.value == before
    answer(machine, rid, "- cancel: yes — not needed any more")
    machine.tick()
    assert machine.requests()[rid].state is State.CANCELLED
    assert statuses(machine, rid)[-1].endswith("— cancelled by the person — not needed any more")
    assert fleet.runs() == {}


def test_a_cancel_typed_with_the_request_is_no_answer_and_nothing_runs(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_answers.py's test of the same name: an answer typed with the request is told
    as forged, and a cancel after that escalation counts."""
    block = "## REQ-x\n- type: research\n- ready: yes\n- cancel: yes — not needed any more\nSummarise.\n"
    fleet, machine = alone(tmp_path, block)
    machine.tick()
    [said] = statuses(machine, "REQ-x")
    assert said.startswith("escalated @ ")
    assert 'ignored a forged cancellation: "- cancel: yes — not needed any more" follows no status' in said
    assert fleet.runs() == {}
    answer(machine, "REQ-x", "- cancel: yes")
    machine.tick()
    assert machine.requests()["REQ-x"].state is State.CANCELLED
    assert fleet.runs() == {}


def test_an_approval_with_no_profile_for_the_type_says_how_to_name_one(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_answers.py's test of the same name."""
    fleet, machine = alone(tmp_path, ROTATE, extra="[routing]\ndefault = []\n")
    machine.tick()
    answer(machine, "REQ-rotate", "- decision: approve")
    machine.tick()
    assert machine.requests()["REQ-rotate"].state is State.ERROR
    assert "`- decision: approve — <profile>`" in statuses(machine, "REQ-rotate")[-1]
    assert fleet.runs() == {}


def test_retry_under_an_escalation_classifies_the_edited_text_again(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_answers.py's test of the same name."""
    fleet, machine = alone(tmp_path, ROTATE)
    machine.tick()
    machine.save(
        INBOX,
        machine.text().replace(
            "Rotate the Stripe secret key and update the production env file.",
            "- type: research\nSummarise what the Stripe docs say about key rotation.",
        ),
    )
    answer(machine, "REQ-rotate", "- retry: yes")
    machine.tick()
    assert machine.requests()["REQ-rotate"].state is State.DONE
    assert fleet.runs() == {"REQ-rotate": 1}
