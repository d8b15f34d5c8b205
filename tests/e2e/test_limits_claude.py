"""vaultops holds the real Claude Code CLI to ``max_cost_usd`` and ``max_turns`` itself, from the
stream-json it prints as it runs, against a scripted fake of the Messages API on 127.0.0.1 that makes
every turn cost what the test says.  Each script ends in a turn that never answers: a run vaultops
failed to stop would hang there until its timeout, and fail the test as a timeout, not a limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.claude_cli import profile, requires_claude
from tests.support.fake_anthropic import FakeAnthropic, Hang, Text, ToolUse
from tests.support.helpers import inbox_text, routed, vault_with, vaultops
from vaultops.scan.note import parse_note

pytestmark = requires_claude

TURN_TOKENS = 100_000  # a turn's input: $0.50 at the list price of the model the CLI asks for (opus 4.5+)
TURN_USD = 0.5


def request(fields: str = "") -> str:
    return (
        "# Inbox\n\n## REQ-steps Take steps\n- type: code\n- ready: yes\n"
        f"{fields}Fix the failing build step by step, and log each step in the steps file.\n"
    )


def step_turns(n: int) -> list[ToolUse]:
    return [ToolUse("Bash", {"command": f"echo step {i} >> steps.txt"}) for i in range(1, n + 1)]


def run(tmp: Path, api: FakeAnthropic, inbox: str, limits: str = "") -> tuple[Path, str]:
    work = tmp / "v" / "work"
    table = profile("worker-code", api.start(), tmp / "cc", workdir="work", timeout=120) + limits
    vault = vault_with(tmp / "v", inbox, routed(table, 'code = ["worker-code"]', "[0.1]"))
    work.mkdir()
    proc = vaultops("--vault", str(vault), "tick", timeout=180)
    return work, proc.stdout + proc.stderr


def last_status(vault: Path) -> str:
    note = parse_note("i", (vault / "_System" / "COO-Inbox.md").read_bytes())
    status = note.requests[0].statuses[-1]
    return f"{status.state.value} — {status.reason}"


def steps(work: Path) -> list[str]:
    path = work / "steps.txt"
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture
def priced(api: FakeAnthropic) -> FakeAnthropic:
    api.input_tokens = TURN_TOKENS
    return api


def test_a_profiles_cost_limit_stops_the_job_at_the_crossing_and_keeps_its_work(
    tmp_path: Path, priced: FakeAnthropic
) -> None:
    priced.script(*step_turns(5), Hang(600))
    work, out = run(tmp_path, priced, request(), "max_cost_usd = 1.2\n")
    vault = tmp_path / "v"
    status = last_status(vault)
    # $0.50 a turn: the third turn takes the spend to $1.50, past $1.20, and the run stops there
    assert status.startswith("error — cost limit $1.2 reached after 3 turns ($1.50 spent)"), status + out
    assert len(priced.requests) == 3, "no fourth model call: the run was stopped at the crossing"
    assert steps(work)[:2] == ["step 1", "step 2"]  # the work done so far is kept
    assert len(steps(work)) <= 3
    text = inbox_text(vault)
    assert "- cost: $1.50" in text, text
    # the figure for the note: how far past the limit the job got
    print(f"\ncost limit $1.20: stopped after 3 turns, $1.50 counted; {len(steps(work))} of 3 tools ran")


def test_a_requests_turn_limit_lets_its_turns_finish_and_runs_no_tool_after_them(
    tmp_path: Path, priced: FakeAnthropic
) -> None:
    # a turn the run should never get to hangs: a missed limit is a timeout, not a pass
    priced.script(*step_turns(2), Hang(600), Text("never"))
    work, out = run(tmp_path, priced, request("- max_turns: 2\n"))
    status = last_status(tmp_path / "v")
    assert status.startswith("error — turn limit 2 reached after 2 turns"), status + out
    assert steps(work) == ["step 1", "step 2"]  # both allowed turns ran their tools
    # the third call may be under way when the run is stopped (Claude Code asks at once), never a fourth
    assert len(priced.requests) <= 3


def test_a_request_may_not_raise_its_profiles_limit(tmp_path: Path, priced: FakeAnthropic) -> None:
    work, out = run(tmp_path, priced, request("- max_cost_usd: $5\n"), "max_cost_usd = 1\n")
    status = last_status(tmp_path / "v")
    assert status == "error — asks for max_cost_usd $5, more than [profiles.worker-code] allows ($1)", out
    assert priced.requests == [] and steps(work) == []


def test_a_run_that_ends_within_its_limit_is_done_as_ever(tmp_path: Path, priced: FakeAnthropic) -> None:
    priced.script(*step_turns(1), Text("DONE: one step taken."))
    work, out = run(tmp_path, priced, request("- max_cost_usd: 2\n- max_turns: 5\n"))
    vault = tmp_path / "v"
    assert last_status(vault).startswith("done"), out
    assert steps(work) == ["step 1"]
    assert "DONE: one step taken." in inbox_text(vault)
