"""Status and lock lines vaultops did not write change nothing (issue 27): a typed ``- status: approved`` (or
any state, in any form a phone or an editor types, or a copy of a real line) neither silences a request nor
runs one.  The request is decided, escalated and told as if the line were not there; the line is named
once, in the first line vaultops writes after it; the dashboard shows the real state.  Lines another
machine's vaultops wrote, and lines this clone remembers writing, keep counting.  Whole passes of the real
driver on the engine's twins (``tests/support/twin.py``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from tests.support.clones import after, statuses
from tests.support.helpers import INBOX, ROTATE
from tests.support.twin import Machine, TwinChecks, TwinFleet, no_processes  # noqa: F401
from vaultops.model import State
from vaultops.render.results import RunResult
from vaultops.run.jobs import Job
from vaultops.scan.note import parse_note
from vaultops.vault import Vault

pytestmark = pytest.mark.usefixtures("no_processes")

ENV = "## REQ-env\n- type: env-check\n- ready: yes\nIs git installed?\n"
NOT_OURS = "was not written by vaultops; it changes nothing"
DASHBOARD = "_System/vaultops.md"
WHEN = "2026-03-02T08:59:00+00:00"

# Every state vaultops writes, typed as vaultops writes it, bare, and as a phone or an editor types it.
FORMS = {
    "exact": "- status: {s} @ " + WHEN + " — all good",
    "bare": "- status: {s}",
    "no space": "- status:{s}",
    "star": "* status: {s}",
    "indented": "   - status: {s}",
    "capitals": "- Status: {S}",
    "nbsp": "-\u00a0status:\u00a0{s}",
    "zero-width": "- sta\u200btus: {s}",
    "full-width colon": "- status\uff1a {s}",
    "bullet": "\u2022 status: {s}",
}
STATES = [s.value for s in State]


def _line(form: str, state: str) -> str:
    return FORMS[form].format(s=state, S=state.upper())


def _block(text: str, rid: str) -> list[str]:
    note = parse_note(INBOX, text.encode())
    [request] = [r for r in note.requests if r.id == rid]
    return note.lines[request.start : request.end]


def _named(text: str, rid: str) -> int:
    """How many lines under ``rid`` name a line as not vaultops's."""
    return sum("not written by vaultops" in line for line in _block(text, rid))


@pytest.mark.parametrize("state", STATES)
def test_a_typed_status_line_of_any_state_does_not_silence_a_blocked_request(
    tmp_path: Path, state: str
) -> None:
    forged = _line("bare", state)
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}{forged}\n")
    fleet.tick()
    text = fleet.remote_text()
    said = statuses(text, "REQ-rotate")
    assert said[-1].startswith("escalated @ ") and "blocked: key or token rotation" in said[-1], said
    assert f"`{forged}` {NOT_OURS}" in said[-1]
    assert fleet.runs() == {}
    assert any("REQ-rotate escalated" in t for t in fleet.sent()), "the person is told, as without the line"
    fleet.tick()
    fleet.tick()
    assert fleet.remote_text() == text, "named once; nothing more"
    assert len(fleet.sent()) == 1


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("state", ["approved", "done", "running", "escalated", "cancelled"])
def test_a_typed_status_line_in_any_form_does_not_silence_a_routine_request(
    tmp_path: Path, form: str, state: str
) -> None:
    forged = _line(form, state)
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ENV}{forged}\n")
    fleet.tick()
    text = fleet.remote_text()
    assert fleet.runs() == {"REQ-env": 1}, "it runs, as it would without the line"
    assert statuses(text, "REQ-env")[-1].startswith("done @ ")
    # quoted as typed, its spaces as a status line's reason has them (one space each)
    assert _named(text, "REQ-env") == 1 and f"`{' '.join(forged.split())}` {NOT_OURS}" in text
    fleet.tick()
    assert fleet.runs() == {"REQ-env": 1} and fleet.remote_text() == text


@pytest.mark.parametrize("form", ["exact", "bare", "capitals", "nbsp", "zero-width"])
def test_the_dashboard_shows_the_real_state_before_the_pass_acts(tmp_path: Path, form: str) -> None:
    """A request settling (not ready) under a typed ``approved``: the dashboard says it is open."""
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n## REQ-slow\nIs git installed?\n{_line(form, 'approved')}\n",
                      settle=3600)  # fmt: skip
    fleet.tick()
    dashboard = fleet.remote_text(DASHBOARD)
    assert "state_approved: 0" in dashboard and "state_open: 1" in dashboard, dashboard
    assert "REQ-slow|REQ-slow]] · open" in dashboard
    assert fleet.runs() == {}


def test_a_copy_of_a_real_escalation_line_under_a_new_request_changes_nothing(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}")
    fleet.tick()
    [real] = statuses(fleet.remote_text(), "REQ-rotate")
    fleet.person_push(lambda t: t + f"\n{ENV}- status: {real}\n")
    fleet.tick()
    text = fleet.remote_text()
    assert fleet.runs() == {"REQ-env": 1}
    assert _named(text, "REQ-env") == 1
    assert statuses(text, "REQ-rotate") == [real], "the copied line's own request is untouched"


def test_a_copy_of_a_requests_own_done_line_after_its_escalation_changes_nothing(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}\n{ENV}")
    fleet.tick()
    done = statuses(fleet.remote_text(), "REQ-env")[-1]
    assert done.startswith("done @ ")
    fleet.person_push(after("REQ-rotate", f"- status: {done}"))
    fleet.tick()
    said = statuses(fleet.remote_text(), "REQ-rotate")
    assert said[-1].startswith("escalated @ ") and NOT_OURS in said[-1], said
    assert fleet.runs() == {"REQ-env": 1}


def test_a_typed_approval_status_after_a_real_escalation_escalates_it_again_and_a_real_answer_counts(
    tmp_path: Path,
) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}")
    fleet.tick()
    [real] = statuses(fleet.remote_text(), "REQ-rotate")
    forged = f"- status: approved @ {WHEN} — approved once by the person"
    fleet.clock.move(minutes=1)
    fleet.person_push(after("REQ-rotate", forged))
    fleet.tick()
    said = statuses(fleet.remote_text(), "REQ-rotate")
    assert len(said) == 3 and said[0] == real and said[1] == forged[len("- status: ") :]
    assert said[2].startswith("escalated @ ") and f"`{forged}` {NOT_OURS}" in said[2]
    assert "blocked: key or token rotation" in said[2]
    assert fleet.runs() == {}
    assert len(fleet.sent()) == 2, "told again, as the escalation it is"
    fleet.tick()
    assert len(statuses(fleet.remote_text(), "REQ-rotate")) == 3
    # the person's own answer to the escalation that stands counts, once
    fleet.clock.move(minutes=1)
    fleet.person_push(after("REQ-rotate", "- decision: approve — I know"))
    fleet.tick()
    fleet.tick()
    assert [s.split()[0] for s in statuses(fleet.remote_text(), "REQ-rotate")[3:]] == [
        "approved", "running", "done",
    ]  # fmt: skip
    assert fleet.runs() == {"REQ-rotate": 1}


def test_a_typed_status_with_a_typed_approval_under_it_is_a_forgery_and_runs_nothing(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}- status: escalated\n- decision: approve\n")
    fleet.tick()
    said = statuses(fleet.remote_text(), "REQ-rotate")
    assert said[-1].startswith("escalated @ ") and "ignored a forged approval" in said[-1]
    assert f"`- status: escalated` {NOT_OURS}" in said[-1]
    assert fleet.runs() == {}


def test_a_typed_status_before_a_real_one_leaves_the_real_one_in_charge(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ENV}- status: cancelled\n")
    fleet.tick()
    text = fleet.remote_text()
    assert fleet.runs() == {"REQ-env": 1} and statuses(text, "REQ-env")[-1].startswith("done @ ")
    fleet.tick()
    assert fleet.remote_text() == text, "a line named once stays named: it is before vaultops's lines now"


def test_a_typed_status_after_a_finished_request_is_named_and_the_request_stays_done(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ENV}")
    fleet.tick()
    fleet.person_push(after("REQ-env", "- status: error — it broke, run it again"))
    fleet.tick()
    said = statuses(fleet.remote_text(), "REQ-env")
    assert said[-1].startswith("done @ ") and NOT_OURS in said[-1], said
    assert fleet.runs() == {"REQ-env": 1}
    requests = fleet.remote_requests()
    assert requests["REQ-env"].state is State.DONE


def test_a_forged_lock_line_does_not_hold_a_new_request(tmp_path: Path) -> None:
    lock = f"- locked-by: agent9 @ {WHEN} (host9, claim abc123, lease 600 s)"
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ENV}{lock}\n- status: running @ {WHEN}\n")
    fleet.tick()
    text = fleet.remote_text()
    assert fleet.runs() == {"REQ-env": 1}, "not held until a lease runs out: run as if it were not there"
    assert statuses(text, "REQ-env")[-1].startswith("done @ ")
    assert _named(text, "REQ-env") == 1


def test_a_forged_lock_line_alone_does_not_hold_a_blocked_request_either(tmp_path: Path) -> None:
    lock = f"- locked-by: agent0 @ {WHEN} (host0, claim 0a0a0a, lease 600 s)"  # this machine's own name
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}{lock}\n")
    fleet.tick()
    said = statuses(fleet.remote_text(), "REQ-rotate")
    assert said and said[-1].startswith("escalated @ ") and f"`{lock[:60]}" in said[-1], said
    assert NOT_OURS in said[-1]
    assert fleet.runs() == {}


def test_a_forged_result_under_a_request_does_not_finish_it(tmp_path: Path) -> None:
    forged = (
        "### Result — 2026-03-02 08:59 — agent0\n"
        "- outcome: done · env-check · light · routine · direct · 0.01 s\n"
        f"~~~text\nall fine\n~~~\n- status: done @ {WHEN}\n"
    )
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}{forged}")
    fleet.tick()
    said = statuses(fleet.remote_text(), "REQ-rotate")
    assert said[-1].startswith("escalated @ ") and NOT_OURS in said[-1]
    assert fleet.runs() == {}
    assert any("REQ-rotate escalated" in t for t in fleet.sent())


def test_a_typed_status_inside_a_code_block_is_text_and_named_nowhere(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ENV}```\n- status: done\n```\n")
    fleet.tick()
    text = fleet.remote_text()
    assert fleet.runs() == {"REQ-env": 1} and _named(text, "REQ-env") == 0


def test_a_status_field_in_words_is_the_persons_text(tmp_path: Path) -> None:
    """Only a state's name after ``status:`` imitates vaultops: ``- status: the db is slow`` is text."""
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ENV}- status: the db is slow today\n")
    fleet.tick()
    assert fleet.runs() == {"REQ-env": 1} and _named(fleet.remote_text(), "REQ-env") == 0


def test_a_typed_status_in_a_plan_note_does_not_finish_it(tmp_path: Path) -> None:
    plan = "---\ntype: env-check\n---\nIs git installed?\n\n- status: done @ " + WHEN + "\n"
    fleet = TwinFleet(tmp_path, 1, "# Inbox\n", plans={"check-git.md": plan})
    fleet.tick()
    text = fleet.remote_text("executor-queue/check-git.md")
    assert fleet.runs() == {"PLAN-check-git": 1}
    assert NOT_OURS in text and text.rstrip().endswith(
        "~~~\n- status: done @ 2026-03-02T09:00:00+00:00"[-30:]
    )


def test_a_status_in_a_plan_notes_frontmatter_changes_nothing(tmp_path: Path) -> None:
    plan = "---\ntype: env-check\nstatus: done\n---\nIs git installed?\n"
    fleet = TwinFleet(tmp_path, 1, "# Inbox\n", plans={"check-git.md": plan})
    fleet.tick()
    assert fleet.runs() == {"PLAN-check-git": 1}


def test_another_machines_status_lines_keep_counting(tmp_path: Path) -> None:
    """Machine 1 has no record of machine 0's lines; git says machine 0's vaultops wrote them."""
    fleet = TwinFleet(tmp_path, 2, f"# Inbox\n\n{ROTATE}\n{ENV}")
    fleet.tick(0)
    text = fleet.remote_text()
    fleet.tick(1)
    fleet.tick(1)
    assert fleet.remote_text() == text, "machine 1 neither runs nor re-escalates machine 0's requests"
    assert fleet.runs() == {"REQ-env": 1}
    assert NOT_OURS not in fleet.remote_text()


def test_lines_this_clone_remembers_writing_keep_counting_whoever_committed_them(tmp_path: Path) -> None:
    """A line vaultops wrote before an upgrade is in state.db: it counts, though the person committed it."""
    done = f"- status: done @ {WHEN}"
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ENV}{done}\n")
    fleet[0].ledger.remember_lines(INBOX, [("REQ-env", done, "")])
    fleet.tick()
    assert fleet.runs() == {}
    assert NOT_OURS not in fleet.remote_text()


def test_a_remembered_line_copied_under_another_request_is_not_that_requests(tmp_path: Path) -> None:
    done = f"- status: done @ {WHEN}"
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ENV}{done}\n\n{ENV.replace('REQ-env', 'REQ-two')}{done}\n")
    fleet[0].ledger.remember_lines(INBOX, [("REQ-env", done, "")])
    fleet.tick()
    assert fleet.runs() == {"REQ-two": 1}


def test_a_typed_line_repeating_vaultops_s_own_last_line_is_a_copy(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}")
    fleet.tick()
    [real] = statuses(fleet.remote_text(), "REQ-rotate")
    fleet.clock.move(minutes=1)
    fleet.person_push(after("REQ-rotate", "- decision: approve", f"- status: {real}"))
    fleet.tick()
    said = statuses(fleet.remote_text(), "REQ-rotate")
    assert fleet.runs() == {}
    assert said[-1].startswith("escalated @ ") and said[-1] != real and NOT_OURS in said[-1], said


def test_two_typed_status_lines_are_both_set_aside_and_named_together(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}- status: done\n- status: approved @ {WHEN}\n")
    fleet.tick()
    said = statuses(fleet.remote_text(), "REQ-rotate")
    assert said[-1].startswith("escalated @ ") and "were not written by vaultops" in said[-1]
    assert "`- status: done`" in said[-1] and f"`- status: approved @ {WHEN}`" in said[-1]
    assert fleet.runs() == {}


# --- attacks written after the code ---------------------------------------------------------------------


class _TypingChecks(TwinChecks):
    """The built-in checks, with someone typing ``line`` under the request while its check runs."""

    def __init__(self, machine: Machine, rid: str, line: str) -> None:
        super().__init__()
        self.machine, self.rid, self.line = machine, rid, line

    def __call__(self, job: Job, vault: Vault, started: datetime) -> RunResult:
        self.machine.save(INBOX, after(self.rid, self.line)(self.machine.text()))
        return super().__call__(job, vault, started)


@pytest.mark.parametrize("line", ["- status: done", "- status: cancelled @ " + WHEN, "- Status: Error"])
def test_a_status_typed_while_its_job_runs_does_not_lose_the_result(tmp_path: Path, line: str) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ENV}")
    machine = fleet[0]
    machine.checks = _TypingChecks(machine, "REQ-env", line)
    report = fleet.tick()
    text = machine.text()
    assert "### Result" in text and "env-check: checked" in text, (report.warnings, text)
    assert not any("not recorded" in w for w in report.warnings), report.warnings
    assert fleet.runs() == {"REQ-env": 1}
    fleet.tick()
    assert fleet.runs() == {"REQ-env": 1}, "the typed line does not run it again"


def test_a_typed_denial_status_under_a_new_request_is_not_a_denial(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ENV}- status: denied @ {WHEN} — denied by the person\n")
    fleet.tick()
    assert fleet.runs() == {"REQ-env": 1}
    assert fleet.remote_requests()["REQ-env"].state is State.DONE


def test_a_typed_review_status_with_an_acceptance_accepts_nothing(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}- status: review @ {WHEN}\n- decision: accept\n")
    fleet.tick()
    said = statuses(fleet.remote_text(), "REQ-rotate")
    assert said[-1].startswith("escalated @ ") and "forged" in said[-1], said
    assert fleet.runs() == {}


def test_a_typed_interrupted_status_does_not_wait_for_a_retry(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ENV}- status: interrupted @ {WHEN} — taken over\n")
    fleet.tick()
    assert fleet.runs() == {"REQ-env": 1}


def test_a_typed_waiting_status_with_a_typed_retry_runs_it_once_as_it_would_anyway(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ENV}- status: error @ {WHEN} — exit 1\n- retry: yes\n")
    fleet.tick()
    fleet.tick()
    assert fleet.runs() == {}, "a retry under a line vaultops did not write is forged: escalated, not run"
    said = statuses(fleet.remote_text(), "REQ-env")
    assert said[-1].startswith("escalated @ ") and "forged retry" in said[-1], said


def test_a_status_line_inside_a_quote_or_a_callout_is_named_and_changes_nothing(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}> - status: approved\n")
    fleet.tick()
    said = statuses(fleet.remote_text(), "REQ-rotate")
    assert said[-1].startswith("escalated @ ") and fleet.runs() == {}


def test_a_heading_level_three_with_a_status_under_it_is_not_a_result(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}### Notes\n- status: done @ {WHEN}\n")
    fleet.tick()
    said = statuses(fleet.remote_text(), "REQ-rotate")
    assert said[-1].startswith("escalated @ ") and NOT_OURS in said[-1]
    assert fleet.runs() == {}


def test_a_forged_line_in_a_second_machines_clone_is_named_by_one_machine_only(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 2, f"# Inbox\n\n{ROTATE}- status: approved\n")
    fleet.tick(0)
    fleet.tick(1)
    fleet.tick(0)
    said = statuses(fleet.remote_text(), "REQ-rotate")
    assert [s.split()[0] for s in said] == ["approved", "escalated"], said
    assert len(fleet.sent()) == 1 and fleet.runs() == {}


HEAVY = "## REQ-heavy\n- ready: yes\nSummarise the notes folder in two lines\n"


@pytest.mark.parametrize(("block", "runs"), [(ENV, {"REQ-env": 1}), (HEAVY, {})])
def test_a_claim_whose_lines_a_kill_kept_from_being_remembered_is_interrupted_not_run_as_new(
    tmp_path: Path, block: str, runs: dict[str, int]
) -> None:
    """The claim is recorded before it is written; its lines are remembered after: a kill between leaves
    vaultops's own lock and running lines unknown.  Its request is closed as interrupted (a light check
    runs again by itself, heavy work waits for `- retry: yes`), never read as a new request."""
    rid = block.split()[1]
    claim = f"- locked-by: agent0 @ {WHEN} (host0, claim c0ffee, lease 180 s)\n- status: running @ {WHEN}\n"
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{block}{claim}")
    fleet[0].ledger.claimed(INBOX, rid, "c0ffee", "direct", "host0")
    fleet.tick()
    said = statuses(fleet.remote_text(), rid)
    assert said[1].startswith("interrupted @ ") and "claim c0ffee" in said[1], said
    fleet.tick()
    assert fleet.runs() == runs
    assert NOT_OURS not in fleet.remote_text()
