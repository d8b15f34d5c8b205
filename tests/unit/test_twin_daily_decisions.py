"""The daily note keeps the person's decisions, not only what ran (issue 29): an approval, an accept, a
denial and a retry each get an entry of the day, and a cleanup after a denial is not a second denial.
Whole passes of the real driver on the twin (``tests/support/twin.py``), one machine with no remote."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import ROTATE
from tests.support.twin import START, Machine, TwinFleet, alone, answer, no_processes  # noqa: F401
from vaultops import lines as fmt
from vaultops.model import State
from vaultops.render.results import RunResult

pytestmark = pytest.mark.usefixtures("no_processes")

FIX = "## REQ-fix\n- type: code\n- ready: yes\nFix the preview tab in the web app.\n"
DAILY = "Daily/" + START.strftime("%Y-%m-%d") + ".md"  # as vault-template/.obsidian/daily-notes.json says


def entries(machine: Machine, rid: str) -> list[str]:
    """The daily note's entries for ``rid``: what each says after the link to the request."""
    text = machine.text(DAILY)
    return [line.split(fmt.DOT, 1)[1] for line in text.splitlines() if f"#{rid}" in line and fmt.DOT in line]


def test_an_approval_is_in_the_daily_note_before_the_result(tmp_path: Path) -> None:
    _, machine = alone(tmp_path, ROTATE)
    machine.tick()
    answer(machine, "REQ-rotate", "- decision: approve — rotated by hand last time")
    machine.tick()
    said = entries(machine, "REQ-rotate")
    assert said[0].startswith("escalated · "), said
    assert said[1].startswith("approved once by the person · runs on "), said
    assert said[2].startswith("done · "), said
    assert "rotated by hand" not in "".join(said), "the comment stays in the note, under the request"


def in_review(tmp_path: Path) -> Machine:
    _, machine = alone(tmp_path, FIX)
    reason = f"review: no checks configured; 1 commit on vaultops/REQ-fix; {fmt.REVIEW_ANSWERS}"
    machine.runner.script["REQ-fix"] = RunResult(State.REVIEW, "worker-code", START, 0.1, "fixed", reason)
    machine.tick()
    assert machine.requests()["REQ-fix"].state is State.REVIEW
    return machine


def test_an_accept_and_a_retry_are_in_the_daily_note(tmp_path: Path) -> None:
    machine = in_review(tmp_path)
    machine.clock.move(minutes=5)
    answer(machine, "REQ-fix", "- retry: yes — the tab still flickers")
    machine.tick()
    machine.tick()
    assert machine.requests()["REQ-fix"].state is State.REVIEW, machine.text()
    assert entries(machine, "REQ-fix")[1].startswith("retry asked by the person · runs on "), machine.text(
        DAILY
    )
    answer(machine, "REQ-fix", "- decision: accept")
    machine.tick()
    assert machine.requests()["REQ-fix"].state is State.DONE, machine.text()
    assert entries(machine, "REQ-fix")[-1] == "accepted by the person", machine.text(DAILY)


def test_a_denial_is_said_once_and_a_cleanup_after_it_is_no_second_denial(tmp_path: Path) -> None:
    machine = in_review(tmp_path)
    answer(machine, "REQ-fix", "- decision: deny — not this way")
    machine.tick()
    assert machine.requests()["REQ-fix"].state is State.DENIED
    answer(machine, "REQ-fix", "- cleanup: yes")
    machine.tick()
    said = entries(machine, "REQ-fix")
    assert said.count("rejected by the person") == 1 and not [s for s in said if "denied" in s], said
