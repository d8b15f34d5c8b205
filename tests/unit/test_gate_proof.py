"""The proof that the gate saw every call, as values: what the gate heard (``vaultops.hook.heard``), a stream
read against it (``vaultops.run.proof``) on a clock the test moves, the retry table's answer, and the
gate server's answer to a SessionStart through the real thin client.  The end to end runs are
tests/e2e/test_gate_proof.py's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.support.paths import REPO
from vaultops.hook.claude import CLIENT, settings_for
from vaultops.hook.heard import SESSION_START, STARTED, Heard
from vaultops.hook.job import GateJob
from vaultops.hook.server import GateServer
from vaultops.run.outcome import Attempt, Failure
from vaultops.run.proof import GRACE, SAID, Proof, read_line, unjudged
from vaultops.run.retry import next_step

STREAM = (REPO / "fixtures" / "claude-code" / "stream.jsonl").read_text().splitlines()
INIT = json.dumps({"type": "system", "subtype": "init", "session_id": "s"})


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def event(name: str, **fields: Any) -> str:
    return json.dumps({"hook_event_name": name, "session_id": "s", **fields})


def started(heard: Heard) -> Heard:
    heard.hear(event(SESSION_START, source="startup"))
    return heard


def judge(heard: Heard, call: str) -> None:
    assert heard.hear(event("PreToolUse", tool_name="Bash", tool_input={}, tool_use_id=call)) is None


def tool_use(*calls: str, command: str = "ls") -> str:
    blocks = [{"type": "tool_use", "id": c, "name": "Bash", "input": {"command": command}} for c in calls]
    return json.dumps({"type": "assistant", "message": {"id": "m", "content": blocks}})


def tool_result(call: str, content: Any = "ok", is_error: bool = False) -> str:
    block = {"type": "tool_result", "tool_use_id": call, "content": content, "is_error": is_error}
    return json.dumps({"type": "user", "message": {"role": "user", "content": [block]}})


def proof(start: bool = True) -> tuple[Proof, Clock]:
    """A proof over a gate that heard the session start (unless not ``start``), both on a clock the test
    moves; the gate is the proof's ``heard``."""
    clock = Clock()
    heard = Heard(clock)
    return Proof(started(heard) if start else heard, clock=clock), clock


# --- what the gate heard ------------------------------------------------------------------------------


def test_the_gate_answers_a_session_start_itself_and_notes_each_judged_call() -> None:
    heard = Heard()
    assert heard.last == 0.0
    assert heard.hear(event(SESSION_START, source="resume")) is STARTED
    assert STARTED.stdout == "" and STARTED.exit_code == 0  # nothing for the model's context, no block
    assert heard.session_started and heard.last > 0.0
    judge(heard, "toolu_1")
    assert heard.judged("toolu_1") and not heard.judged("toolu_2")
    for junk in ("not json", "[1]", event("Stop"), event("PreToolUse", tool_use_id=7)):
        assert heard.hear(junk) is None  # the policy refuses it as ever; nothing is counted judged
    assert not heard.judged("7")


def test_the_session_start_goes_through_the_thin_client_to_the_jobs_server(tmp_path: Path) -> None:
    heard = Heard()
    with GateServer(GateJob(None, str(tmp_path)), heard=heard) as server:
        settings = settings_for(server.socket_path, None)
        [entry] = settings["hooks"][SESSION_START]
        [pre] = settings["hooks"]["PreToolUse"]
        assert entry["hooks"][0]["command"] == pre["hooks"][0]["command"]  # the same client, the same gate
        told = subprocess.run(
            [sys.executable, "-I", "-S", str(CLIENT), str(server.socket_path)],
            input=event(SESSION_START, source="startup", cwd=str(tmp_path)),
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    assert (told.returncode, told.stdout, told.stderr) == (0, "", "")
    assert heard.session_started


# --- the stream read against it -----------------------------------------------------------------------


def test_a_recorded_stream_whose_every_call_was_judged_proves_nothing_wrong() -> None:
    check, _ = proof()
    for line in STREAM:
        for call in read_line(line).calls:
            judge(check.heard, call.id)
    assert [r for line in STREAM if (r := check.feed(line))] == []
    assert check.reason == "" and check.overdue() == ""


def test_an_init_line_the_gate_did_not_hear_start_stops_the_job() -> None:
    check, _ = proof(start=False)
    reason = check.feed(INIT)
    assert reason.startswith(f"{SAID} the session start") and "before any tool ran" in reason
    assert check.feed(tool_result("x")) == "", "said once"


def test_a_first_call_before_the_session_start_stops_the_job() -> None:
    check, _ = proof(start=False)
    assert "before it asked for Bash (rm -rf build)" in check.feed(tool_use("t1", command="rm -rf build"))


def test_a_result_for_a_call_the_gate_never_judged_stops_the_job_and_names_the_call() -> None:
    check, _ = proof()
    assert check.feed(INIT) == ""
    assert check.feed(tool_use("t1", command="touch marker-1")) == ""
    reason = check.feed(tool_result("t1"))
    said = "Bash (touch marker-1) ran without the gate judging it; vaultops stopped the job at once"
    assert reason == f"{SAID} a call: {said}"


def test_an_unjudged_calls_error_counts_as_run_unless_claude_code_refused_it_before_any_hook() -> None:
    check, _ = proof()
    check.feed(tool_use("t1", "t2", "t3"))
    refused = "<tool_use_error>InputValidationError: Bash failed</tool_use_error>"
    assert check.feed(tool_result("t1", refused, is_error=True)) == ""
    assert check.feed(tool_result("t2", [{"type": "text", "text": refused}], is_error=True)) == ""
    assert check.feed(tool_result("t3", "Exit code 3", is_error=True)).startswith(f"{SAID} a call")


def test_a_refusal_that_is_not_an_error_is_no_excuse() -> None:
    check, _ = proof()
    check.feed(tool_use("t1"))
    assert check.feed(tool_result("t1", "<tool_use_error>ran anyway</tool_use_error>", is_error=False))


def test_a_call_that_does_not_reach_the_gate_within_the_grace_stops_the_job() -> None:
    check, clock = proof()
    check.feed(tool_use("t1", command="sleep 600"))
    clock.now += GRACE - 0.1
    assert check.overdue() == ""
    clock.now += 0.2
    said = (
        f"Bash (sleep 600) did not reach the gate within {GRACE:g} s of being asked; vaultops stopped the job"
    )
    assert check.overdue() == f"{SAID} a call: {said}"
    assert check.overdue() == "", "said once"


def test_calls_waiting_their_turn_behind_a_judged_call_are_not_overdue() -> None:
    """Claude Code runs a message's calls one by one, each hook just before its tool: the second waits
    while the first (judged) runs, however long that takes."""
    check, clock = proof()
    heard = check.heard
    check.feed(tool_use("t1", "t2"))
    judge(heard, "t1")
    clock.now += 10 * GRACE
    assert check.overdue() == ""
    assert check.feed(tool_result("t1")) == ""
    clock.now += GRACE - 0.1
    assert check.overdue() == "", "the grace counts from the first call's result"
    judge(heard, "t2")
    clock.now += 10 * GRACE
    assert check.overdue() == ""
    assert check.feed(tool_result("t2")) == ""
    assert check.waiting == {}


def test_a_failed_closed_attempt_is_neither_retried_nor_given_to_the_fallback() -> None:
    attempt = unjudged(Attempt("worker-code", None, "done", "", 1.0), f"{SAID} a call: Bash (cat key-abc123)")
    assert attempt.failure is Failure.UNGATED and attempt.detail.endswith(
        "not retried, nor given to another profile"
    )
    step = next_step([attempt], ["worker-code", "worker-fast"])
    assert step.action == "give-up"


@given(st.text())
def test_any_text_is_read_without_raising(text: str) -> None:
    read_line(text)
    check, _ = proof()
    check.feed(text)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
KINDS = st.sampled_from(["system", "assistant", "user", "result", 3, None])


@given(KINDS, JSON, JSON)
def test_any_event_shaped_json_is_read_without_raising(
    kind: object, message: object, content: object
) -> None:
    if isinstance(message, dict):
        message["content"] = content
    line = json.dumps({"type": kind, "subtype": "init", "message": message})
    check, _ = proof(start=False)
    read_line(line)
    check.feed(line)
    check.overdue()


def test_a_fanned_out_task_whose_gate_did_not_see_a_call_makes_the_whole_request_an_incident() -> None:
    from datetime import UTC, datetime

    from vaultops.model import State
    from vaultops.render.results import RunResult
    from vaultops.run.fanout import combine
    from vaultops.run.jobs import Job

    at = datetime(2026, 12, 3, tzinfo=UTC)
    job = Job("n.md", "REQ-plan", "t", "x", "code", "c", "worker-code", tasks=("one", "two"))
    fine = RunResult(State.DONE, "worker-code", at, 1.0, "ok")
    seen = f"{SAID} a call: Bash (touch m) ran without the gate judging it"
    stopped = RunResult(State.ERROR, "worker-code", at, 1.0, "", seen, incident=seen)
    result = combine(job, {1: fine, 2: stopped}, at, at)
    assert result.state is State.ERROR and result.incident == f"task 2: {seen}"
    assert combine(job, {1: fine, 2: fine}, at, at).incident == ""


def test_a_workers_ungated_report_puts_its_plan_note_in_error_and_stops_it() -> None:
    from vaultops.model import State
    from vaultops.workers.plans import UNGATED, is_news, news
    from vaultops.workers.plans import Heard as Report

    seen = f"{SAID} a call: Bash (touch m) ran without the gate judging it"
    status = Report(1, "STATUS", "s", "approve", "[STATUS:tidying]")
    reports = [status, Report(2, UNGATED, "gate", "deny", seen)]
    said = news("tidy", "running", None, reports)
    assert said is not None and said.state is State.ERROR and said.stop and said.heard == 2
    assert said.reason == f"worker tidy was stopped: {seen}; `- retry: yes` starts a new worker"
    assert is_news(UNGATED, "deny"), "the daemon is woken for it"


def test_a_session_that_ran_without_its_start_reaching_the_gate_fails_closed_at_its_end() -> None:
    end = json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "done"})
    check, _ = proof(start=False)
    assert check.ended() == "", "no session ran (the CLI did not start): no incident"
    assert check.feed(end) == ""
    assert check.ended().startswith(f"{SAID} the session start: Claude Code ran a whole session")
    live, _ = proof()
    live.feed(end)
    assert live.ended() == ""
