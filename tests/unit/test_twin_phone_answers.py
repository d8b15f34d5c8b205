"""Answers and headings as people type them, end to end on the twin (issue 29): whole passes of the real
driver (``tests/support/twin.py``), one machine with no remote.

* ``- decision: approve`` under a review ran the agent again and made a second commit; it now gets one
  review line saying what a review takes, and nothing runs.
* ``- Decision: Approve.`` with a phone's non-breaking space is an approval.
* A heading that is almost a request is named once, never swallowed by the request above, and runs once
  it is retyped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.clones import statuses
from tests.support.helpers import INBOX, ROTATE
from tests.support.twin import START, Machine, TwinFleet, alone, answer, no_processes  # noqa: F401
from vaultops import lines as fmt
from vaultops.model import State
from vaultops.render.results import RunResult

pytestmark = pytest.mark.usefixtures("no_processes")

FIX = "## REQ-fix\n- type: code\n- ready: yes\nFix the preview tab in the web app.\n"
ENV = "## REQ-env\n- type: env-check\n- ready: yes\nIs git installed?\n"


def commits_of(machine: Machine) -> int:
    return len(machine.clone.origin.history(machine.clone.head))


def in_review(tmp_path: Path) -> tuple[TwinFleet, Machine]:
    """A code job whose agent is done and whose checks passed: in review."""
    fleet, machine = alone(tmp_path, FIX)
    reason = f"review: no checks configured; 1 commit on vaultops/REQ-fix; {fmt.REVIEW_ANSWERS}"
    machine.runner.script["REQ-fix"] = RunResult(State.REVIEW, "worker-code", START, 0.1, "fixed", reason)
    machine.tick()
    assert machine.requests()["REQ-fix"].state is State.REVIEW
    assert fleet.runs() == {"REQ-fix": 1}
    return fleet, machine


def test_the_review_notice_says_what_a_review_takes(tmp_path: Path) -> None:
    _, machine = in_review(tmp_path)
    [body] = [n.body for n in machine.chat.sent if "REQ-fix review" in n.title]
    assert "- decision: accept makes it done, - retry: yes — what to change sends it back" in body, body
    assert "decision: approve" not in body, "the notice once asked for the answer a review does not take"


def test_approve_under_a_review_is_said_once_and_runs_nothing(tmp_path: Path) -> None:
    """Regression: the review's notice said `- decision: approve`, which ran the agent again."""
    fleet, machine = in_review(tmp_path)
    commits = commits_of(machine)
    answer(machine, "REQ-fix", "- decision: approve")
    machine.tick()
    machine.tick()
    assert fleet.runs() == {"REQ-fix": 1}, "an approval is no answer to a review: nothing runs again"
    said = statuses(machine.text(), "REQ-fix")
    assert [s.split()[0] for s in said] == ["running", "review", "review"], said
    assert "`- decision: approve` is no answer to a review and ran nothing" in said[-1]
    assert "`- decision: accept` makes it done" in said[-1] and "`- retry: yes" in said[-1]
    assert commits_of(machine) == commits + 1, "one commit for the one line"
    answer(machine, "REQ-fix", "- Decision: Accept.")  # what it takes, as a phone types it
    machine.tick()
    assert machine.requests()["REQ-fix"].state is State.DONE
    assert fleet.runs() == {"REQ-fix": 1}


def test_a_phone_typed_approval_runs_an_escalation_once(tmp_path: Path) -> None:
    fleet, machine = alone(tmp_path, ROTATE)
    machine.tick()
    escalated = statuses(machine.text(), "REQ-rotate")[-1]
    assert "vaultops will not run it" not in escalated
    assert "it runs only if you approve: `- decision: approve` below runs it once" in escalated
    answer(machine, "REQ-rotate", "-\u00a0Decision:\u00a0Approve.")
    machine.tick()
    said = statuses(machine.text(), "REQ-rotate")
    assert [s.split()[0] for s in said] == ["escalated", "approved", "running", "done"], said
    assert fleet.runs() == {"REQ-rotate": 1}


def test_a_near_heading_is_named_once_and_the_result_above_lands_above(tmp_path: Path) -> None:
    phone = "##\u00a0REQ-disk\n- type: env-check\n- ready: yes\nHow full is the disk?\n"
    fleet, machine = alone(tmp_path, f"{ENV}\n{phone}")
    machine.tick()
    machine.tick()
    text = machine.text()
    env = machine.requests()["REQ-env"]
    near = text.splitlines().index("##\u00a0REQ-disk")
    assert env.end == near and env.state is State.DONE, text  # its result under it, not under the phone's
    assert fleet.runs() == {"REQ-env": 1}
    said = statuses(text, "REQ-disk")
    assert len(said) == 1 and said[0].startswith("error @ "), said
    assert "a no-break space (U+00A0)" in said[0] and "retype it as `## REQ-disk`" in said[0]
    machine.save(INBOX, text.replace("##\u00a0REQ-disk", "## REQ-disk"))
    machine.tick()
    assert fleet.runs() == {"REQ-env": 1, "REQ-disk": 1}
    assert machine.requests()["REQ-disk"].state is State.DONE


@pytest.mark.parametrize("typed", ["- decision: approved", "- Decision: Yes", "- decision: ok, go"])
def test_an_answer_that_does_not_read_under_a_review_is_named_once(tmp_path: Path, typed: str) -> None:
    fleet, machine = in_review(tmp_path)
    answer(machine, "REQ-fix", typed)
    machine.tick()
    machine.tick()
    said = statuses(machine.text(), "REQ-fix")
    assert [s.split()[0] for s in said] == ["running", "review", "review"], said
    assert f"`{typed}` is no answer vaultops reads and ran nothing" in said[-1]
    assert fleet.runs() == {"REQ-fix": 1}


def test_an_answer_that_does_not_read_under_an_escalation_is_named_and_approve_still_works(
    tmp_path: Path,
) -> None:
    fleet, machine = alone(tmp_path, ROTATE)
    machine.tick()
    answer(machine, "REQ-rotate", "- Decision: Approved")
    machine.tick()
    machine.tick()
    said = statuses(machine.text(), "REQ-rotate")
    assert [s.split()[0] for s in said] == ["escalated", "escalated"], said
    assert "`- Decision: Approved` is no answer vaultops reads and ran nothing" in said[-1]
    assert fleet.runs() == {}, "a word that is not `approve` is never taken for it"
    answer(machine, "REQ-rotate", "- Decision: Approve")
    machine.tick()
    said = statuses(machine.text(), "REQ-rotate")
    assert [s.split()[0] for s in said] == ["escalated", "escalated", "approved", "running", "done"], said
    assert fleet.runs() == {"REQ-rotate": 1}
