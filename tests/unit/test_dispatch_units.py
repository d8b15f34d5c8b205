"""The pure parts of dispatch: reading Claude Code's result, the retry table, the prompt, the budget."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.paths import REPO
from vaultops.base.claude_code import result_object
from vaultops.decide.budget import Budget
from vaultops.run.outcome import Attempt, Failure, from_claude, from_text
from vaultops.run.process import ProcessResult
from vaultops.run.prompt import PromptInput, build_prompt, context, resolve_link
from vaultops.run.retry import next_step, summary

FIXTURES = REPO / "fixtures" / "claude-code"


def proc(
    stdout: str, code: int | None = 0, *, timed_out: bool = False, start_error: str | None = None
) -> ProcessResult:
    return ProcessResult(("claude",), code, timed_out, 1.5, stdout, "", start_error)


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.mark.parametrize(
    ("name", "failure", "status"),
    [
        ("errors/err429_always.result.json", Failure.RATE_LIMIT, 429),
        ("errors/err503_always.result.json", Failure.UNAVAILABLE, 503),
        ("errors/err529_always.result.json", Failure.UNAVAILABLE, 529),
        ("errors/err401_always.result.json", Failure.AUTH, 401),
        ("errors/err400_always.result.json", Failure.OTHER, 400),
        ("errors/connection_refused.result.json", Failure.UNAVAILABLE, None),
    ],
)
def test_api_failures_are_read_from_the_result_not_the_exit_code(
    name: str, failure: Failure, status: int | None
) -> None:
    attempt = from_claude("worker-code", proc(read(name), 1), 600)
    assert attempt.failure is failure
    assert attempt.status_code == status
    if status:
        assert str(status) in attempt.detail


def test_a_success_carries_cost_turns_session_and_text() -> None:
    attempt = from_claude("worker-code", proc(read("result.json"), 0), 600)
    assert attempt.ok and attempt.text == "done"
    assert (attempt.cost_usd, attempt.turns) == (0.018395, 2)
    assert attempt.session_id and len(attempt.session_id) == 36


def test_denied_tool_calls_are_listed() -> None:
    attempt = from_claude("worker-code", proc(read("deny_result.json"), 0), 600)
    assert attempt.ok
    assert attempt.denials == ("Bash: echo hello > out.txt",)


def test_the_verbose_array_and_stream_json_give_the_last_result() -> None:
    lines = read("stream.jsonl").splitlines()
    array = json.dumps([json.loads(line) for line in lines])
    assert result_object(array) == json.loads(lines[-1])
    assert result_object("\n".join(lines)) == json.loads(lines[-1])


@pytest.mark.parametrize(
    "stdout", ["", "not json at all\nsecond line", '{"type": "result", "subt', "[1, 2, 3]"]
)
def test_output_that_is_not_a_result_is_an_error_quoting_it(stdout: str) -> None:
    attempt = from_claude("worker-code", proc(stdout, 1), 600)
    assert attempt.failure is Failure.OTHER
    assert "printed no JSON result" in attempt.detail
    if stdout.strip():
        assert stdout.strip().splitlines()[0][:20] in attempt.detail


def test_subtypes_other_than_success_are_errors() -> None:
    doc = json.loads(read("result.json")) | {"subtype": "error_max_turns", "is_error": True}
    attempt = from_claude("worker-code", proc(json.dumps(doc), 1), 600)
    assert attempt.failure is Failure.OTHER and "error_max_turns" in attempt.detail


def test_timeouts_and_missing_executables_are_shared_by_every_output_kind() -> None:
    assert from_text("p", proc("", None, timed_out=True), 5).failure is Failure.TIMEOUT
    assert from_claude("p", proc("", None, timed_out=True), 5).detail == "timed out after 5 s"
    assert "not found" in from_claude("p", proc("", None, start_error="command not found: x"), 5).detail


def a(profile: str, failure: Failure | None) -> Attempt:
    return Attempt(profile, failure, "", failure.value if failure else "", 1.0)


ROUTE = ("code", "fast", "research")


def test_rate_limits_retry_the_same_profile_after_1_4_16_seconds_then_give_up() -> None:
    attempts = [a("code", Failure.RATE_LIMIT)]
    delays = []
    while (step := next_step(attempts, ROUTE)).action == "retry":
        assert step.profile == "code"
        delays.append(step.delay)
        attempts.append(a("code", Failure.RATE_LIMIT))
    assert delays == [1.0, 4.0, 16.0]
    assert step.action == "give-up" and len(attempts) == 4


def test_unavailable_falls_back_at_once_along_the_route() -> None:
    assert next_step([a("code", Failure.UNAVAILABLE)], ROUTE).profile == "fast"
    step = next_step([a("code", Failure.UNAVAILABLE), a("fast", Failure.UNAVAILABLE)], ROUTE)
    assert (step.action, step.profile) == ("fallback", "research")


def test_timeouts_and_other_errors_get_one_try_on_the_fallback() -> None:
    for failure in (Failure.TIMEOUT, Failure.OTHER):
        step = next_step([a("code", failure)], ROUTE)
        assert (step.action, step.profile) == ("fallback", "fast")
        assert next_step([a("code", failure), a("fast", failure)], ROUTE).action == "give-up"


def test_auth_is_never_retried() -> None:
    step = next_step([a("code", Failure.AUTH)], ROUTE)
    assert step.action == "escalate" and "auth" in step.reason


def test_offline_profiles_are_skipped_and_no_fallback_means_give_up() -> None:
    assert next_step([a("code", Failure.UNAVAILABLE)], ROUTE, offline={"fast"}).profile == "research"
    assert next_step([a("code", Failure.OTHER)], ("code",)).action == "give-up"


@given(st.lists(st.sampled_from([*Failure, None]), min_size=1, max_size=12))
def test_the_table_always_ends(outcomes: list[Failure | None]) -> None:
    """Following the table's own choices, every run of failures ends within a bounded number of attempts."""
    attempts: list[Attempt] = []
    profile = ROUTE[0]
    for outcome in outcomes + [Failure.OTHER] * 20:
        attempts.append(a(profile, outcome))
        step = next_step(attempts, ROUTE)
        if step.action in ("done", "give-up", "escalate"):
            break
        profile = step.profile
    else:
        raise AssertionError("the retry table never stopped")
    assert len(attempts) <= 3 + 4 + len(ROUTE) * 4


def test_the_summary_counts_repeats() -> None:
    attempts = [a("code", Failure.RATE_LIMIT), a("code", Failure.RATE_LIMIT), a("fast", None)]
    assert summary(attempts) == "code rate-limit ×2 → fast done"


def test_the_prompt_puts_the_text_first_then_the_seed_shaped_context_then_how_to_report() -> None:
    given = PromptInput(
        "REQ-1", "_System/COO-Inbox.md", "Fix tabs", "code",
        "Fix the stuck tab preview, see [[Tab spec]] and [[missing note|alias]].\n"
        "- [ ] a failing test first\n"
        "Decision: use the existing TabBar\n- [x] reproduced it",
        "/code/app", ("Read", "Edit"), ("src/tabs/**",), 600, ("error: exit 2",), ("code: rate limited",),
    )  # fmt: skip
    text = build_prompt(given, ["notes/specs/Tab spec.md", "other.md"])
    assert text.startswith("Fix the stuck tab preview")
    assert text.rstrip().endswith("do not do anything the request does not ask for.")
    ctx = context(given, ["notes/specs/Tab spec.md"])["context"]
    assert isinstance(ctx, dict)
    assert ctx["artifact_refs"] == ["notes/specs/Tab spec.md", "missing note (no such note in the vault)"]
    assert ctx["acceptance_criteria"] == ["a failing test first"]
    assert ctx["decisions"] == ["use the existing TabBar"]
    assert ctx["completed_work"] == ["error: exit 2", "reproduced it"]
    assert ctx["errors"] == ["code: rate limited"]
    assert ctx["constraints"] == {
        "workdir": "/code/app", "request": "REQ-1", "note": "_System/COO-Inbox.md", "tools": ["Read", "Edit"],
        "files": ["src/tabs/**"], "timeout_seconds": 600,
    }  # fmt: skip


def test_a_profile_template_replaces_the_default_and_keeps_unknown_braces() -> None:
    given = PromptInput("REQ-1", "i.md", "T", "research", "Summarise {this}.", "/v")
    assert build_prompt(given, [], "Task {id}: {text} {unknown}") == "Task REQ-1: Summarise {this}. {unknown}"


def test_links_resolve_like_obsidian() -> None:
    notes = ["a/Plan.md", "Plan.md", "b/c/Plan.md", "img/diagram.png"]
    assert resolve_link("Plan", notes) == "Plan.md"
    assert resolve_link("b/c/Plan", notes) == "b/c/Plan.md"
    assert resolve_link("diagram.png", notes) == "img/diagram.png"
    assert resolve_link("nowhere", notes) is None


def test_the_budget_warns_at_80_percent_and_stops_at_100() -> None:
    assert not Budget(10, 7.9).past_warning
    assert Budget(10, 8.0).past_warning and not Budget(10, 8.0).exhausted
    assert Budget(10, 10.0).exhausted
    assert not Budget(0, 1000).exhausted
    assert "80%" in Budget(10, 8.0).warning()
    assert datetime.now()  # the day boundary is local; see test_dispatch for the state.db side
