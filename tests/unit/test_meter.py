"""The meter over Claude Code's stream-json (vaultops.run.meter), the request's limits
(vaultops.decide.route), and the flags that make Claude Code stream: pure, as values."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.paths import REPO
from vaultops.base.claude_code import streaming_argv
from vaultops.base.errors import ConfigError
from vaultops.config import ProfileConfig
from vaultops.decide.route import asked_limits, asked_review
from vaultops.model import Limits
from vaultops.run.meter import DEAREST, Meter, price_of
from vaultops.run.outcome import Failure, from_claude
from vaultops.run.process import ProcessResult, run_process
from vaultops.run.retry import next_step
from vaultops.vault import Vault

STREAM = (REPO / "fixtures" / "claude-code" / "stream.jsonl").read_text().splitlines()
CLAUDE = ProfileConfig(command=("claude", "-p", "{prompt}", "--output-format", "json"), output="claude-json")


def assistant(ident: str, tokens: int, *, tool: bool = True, parent: str | None = None, **usage: int) -> str:
    content: list[dict[str, Any]] = (
        [{"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}}]
        if tool
        else [{"type": "text", "text": "thinking out loud"}]
    )
    message = {
        "id": ident,
        "model": "claude-opus-4-8",
        "content": content,
        "usage": {"input_tokens": tokens, "output_tokens": 1, **usage},
    }
    return json.dumps({"type": "assistant", "message": message, "parent_tool_use_id": parent})


def tool_result(parent: str | None = None) -> str:
    content = [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]
    return json.dumps({"type": "user", "message": {"content": content}, "parent_tool_use_id": parent})


def test_the_captured_stream_counts_as_the_cli_did() -> None:
    meter = Meter(Limits())
    for line in STREAM[:-1]:  # all but the result line: what is known while it runs
        assert meter.feed(line) == ""
    assert meter.turns == 2
    result = json.loads(STREAM[-1])
    # the input is exact; the output is estimated from what the messages hold, never below the stream's
    assert meter.cost_usd == pytest.approx(result["total_cost_usd"], rel=0.1)
    assert meter.session_id == result["session_id"]
    meter.feed(STREAM[-1])
    assert meter.cost_usd == result["total_cost_usd"] and meter.turns == result["num_turns"]


def test_the_cost_limit_is_crossed_at_the_turn_that_reaches_it() -> None:
    meter = Meter(Limits(max_cost_usd=1.2))
    said = [meter.feed(line) for i in range(1, 6) for line in (assistant(f"m{i}", 100_000), tool_result())]
    assert said[:4] == ["", "", "", ""]
    assert said[4] == "cost limit $1.2 reached after 3 turns ($1.50 spent)"
    assert said[5:] == ["", "", "", "", ""]  # said once


def test_the_turn_limit_waits_for_the_last_turns_tool_then_stops_before_the_next_call() -> None:
    meter = Meter(Limits(max_turns=2))
    assert meter.feed(assistant("m1", 10)) == "" and meter.feed(tool_result()) == ""
    assert meter.feed(assistant("m2", 10)) == ""
    assert meter.feed(tool_result()).startswith("turn limit 2 reached after 2 turns")


def test_a_turn_that_got_past_the_turn_limit_stops_the_run_at_once() -> None:
    meter = Meter(Limits(max_turns=1))
    meter.feed(assistant("m1", 10, tool=False))  # a text turn: no tool result follows
    assert meter.feed(assistant("m2", 10)).startswith("turn limit 1 reached after 2 turns")


def test_a_subagents_calls_cost_but_are_not_turns_and_its_tool_results_stop_nothing() -> None:
    meter = Meter(Limits(max_turns=1))
    meter.feed(assistant("m1", 10))
    assert meter.feed(assistant("s1", 1_000_000, parent="t")) == ""
    assert meter.feed(tool_result(parent="t")) == ""  # the Task tool of turn 1 still runs
    assert meter.turns == 1 and meter.cost_usd > 5
    assert meter.feed(tool_result()).startswith("turn limit 1")


def test_one_message_in_several_lines_is_one_turn_counted_once() -> None:
    meter = Meter(Limits())
    meter.feed(assistant("m1", 100_000))
    meter.feed(assistant("m1", 100_000, tool=False))
    assert meter.turns == 1 and meter.cost_usd == pytest.approx(0.5, rel=0.01)


def test_cache_tokens_are_priced_as_writes_and_reads() -> None:
    meter = Meter(Limits())
    meter.feed(assistant("m1", 0, cache_creation_input_tokens=1_000_000, cache_read_input_tokens=1_000_000))
    assert meter.cost_usd == pytest.approx(5 * 1.25 + 5 * 0.1, rel=0.01)


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("claude-opus-4-8", (5.0, 25.0)),
        ("claude-opus-4-5-20251101", (5.0, 25.0)),
        ("claude-opus-4-1-20250805", (15.0, 75.0)),
        ("claude-sonnet-4-5[1m]", (3.0, 15.0)),
        ("claude-haiku-4-5", (1.0, 5.0)),
        ("claude-3-5-haiku-20241022", (0.8, 4.0)),
        # a snapshot's date is no minor version (Opus 4 once read as 4.20250514: a third of its price)
        ("claude-opus-4-20250514", (15.0, 75.0)),
        ("claude-opus-4", (15.0, 75.0)),
        ("claude-3-opus-20240229", (15.0, 75.0)),
        ("claude-haiku-4-20250514", DEAREST),
        ("claude-3-haiku-20240307", (0.25, 1.25)),
        ("claude-haiku-4-5-20251001", (1.0, 5.0)),
        ("claude-opus-20991231", (15.0, 75.0)),
        ("some-new-model", DEAREST),
        ("", DEAREST),
    ],
)
def test_list_prices_and_the_dearest_for_a_model_nobody_priced(
    model: str, price: tuple[float, float]
) -> None:
    assert price_of(model) == price


def test_configured_prices_win_by_their_longest_key() -> None:
    prices = {"opus": (1.0, 1.0), "opus-4-8": (2.0, 2.0)}
    assert price_of("claude-opus-4-8", prices) == (2.0, 2.0)
    assert price_of("claude-opus-4-1", prices) == (1.0, 1.0)


_LINE = st.one_of(
    st.builds(assistant, st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 400_000), tool=st.booleans()),
    st.just(tool_result()),
    st.text(max_size=40),
    st.just('{"type": "assistant", "message": {"usage": {"input_tokens": -5, "output_tokens": true}}}'),
    st.just('["not", "an", "event"]'),
)


@given(st.lists(_LINE, max_size=40), st.floats(0.01, 5), st.integers(1, 6))
def test_the_meter_never_goes_back_and_says_its_limit_once_and_only_past_it(
    lines: list[str], cost: float, turns: int
) -> None:
    meter = Meter(Limits(cost, turns))
    seen, said = 0.0, []
    for line in lines:
        before_turns = meter.turns
        reason = meter.feed(line)
        assert meter.cost_usd >= seen and meter.turns >= before_turns
        seen = meter.cost_usd
        if reason:
            said.append(reason)
            assert meter.cost_usd >= cost or meter.turns >= turns
    assert len(said) <= 1


def test_a_run_stopped_at_its_limit_is_a_limit_failure_and_is_not_tried_again() -> None:
    why = "cost limit $1 reached"
    stopped = ProcessResult(("claude",), -15, False, 3.0, STREAM[0], "", None, stopped=why)
    attempt = from_claude("worker-code", stopped, 60)
    assert attempt.failure is Failure.LIMIT and attempt.detail == "cost limit $1 reached"
    assert next_step([attempt], ("worker-code", "fallback")).action == "give-up"


def test_a_run_that_printed_its_result_before_the_stop_is_judged_by_it() -> None:
    ended = ProcessResult(("claude",), 0, False, 3.0, "\n".join(STREAM), "", None, stopped="turn limit 2")
    assert from_claude("worker-code", ended, 60).ok


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["claude", "-p", "{prompt}", "--output-format", "json"],
            ["claude", "--verbose", "-p", "{prompt}", "--output-format", "stream-json"],
        ),
        (
            ["claude", "-p", "x", "--output-format=json"],
            ["claude", "--verbose", "-p", "x", "--output-format=stream-json"],
        ),
        (["claude", "-p", "x"], ["claude", "--verbose", "--output-format", "stream-json", "-p", "x"]),
        (
            ["claude", "--verbose", "--output-format", "stream-json"],
            ["claude", "--verbose", "--output-format", "stream-json"],
        ),
    ],
)  # fmt: skip
def test_a_metered_command_prints_stream_json(argv: list[str], expected: list[str]) -> None:
    assert streaming_argv(argv) == expected


@pytest.mark.parametrize(
    ("fields", "profile_limits", "expected"),
    [
        ({}, {}, Limits()),
        ({"max_cost_usd": "$2"}, {}, Limits(2.0)),
        ({"max_turns": "7"}, {"max_cost_usd": 3.0}, Limits(3.0, 7)),
        ({"max_cost_usd": "0.5"}, {"max_cost_usd": 3.0, "max_turns": 9}, Limits(0.5, 9)),
        ({"max_cost_usd": "5"}, {"max_cost_usd": 3.0}, "asks for max_cost_usd $5, more than"),
        ({"max_turns": "10"}, {"max_turns": 9}, "asks for max_turns 10, more than"),
        ({"max_cost_usd": "lots"}, {}, "max_cost_usd 'lots' is not an amount"),
        ({"max_cost_usd": "nan"}, {}, "max_cost_usd 'nan' is not an amount"),
        ({"max_cost_usd": "-1"}, {}, "max_cost_usd '-1' is not an amount"),
        ({"max_turns": "2.5"}, {}, "max_turns '2.5' is not a number"),
        ({"max_turns": "٣"}, {}, "max_turns '٣' is not a number"),  # an Arabic-Indic digit
        ({"max_turns": "0"}, {}, "max_turns '0' is not a number"),
    ],
)
def test_a_request_may_tighten_its_profiles_limits_and_never_loosen_them(
    fields: dict[str, str], profile_limits: dict[str, Any], expected: Limits | str
) -> None:
    profile = CLAUDE.model_copy(update=profile_limits)
    got = asked_limits(fields, profile, "worker-code")
    if isinstance(expected, str):
        assert isinstance(got, str) and got.startswith(expected)
    else:
        assert got == expected


def test_a_text_profile_cannot_be_held_to_a_limit(tmp_path: Path) -> None:
    text = ProfileConfig(command=("my-agent", "{prompt}"))
    assert "only a Claude Code profile" in str(asked_limits({"max_turns": "3"}, text, "mine"))
    (tmp_path / ".vaultops").mkdir()
    config = '[profiles.mine]\ncommand = ["my-agent", "{prompt}"]\nmax_turns = 3\n'
    (tmp_path / ".vaultops" / "config.toml").write_text(config)
    with pytest.raises(ConfigError, match=r"\[profiles.mine\] only a Claude Code profile"):
        Vault.open(tmp_path).config  # noqa: B018


def test_an_early_result_line_never_freezes_the_count() -> None:
    meter = Meter(Limits(max_cost_usd=1.0, max_turns=5))
    meter.feed(json.dumps({"type": "result", "total_cost_usd": 0, "num_turns": 0}))
    meter.feed(json.dumps({"type": "result", "total_cost_usd": float("-inf"), "num_turns": -5}))
    said = [meter.feed(assistant(f"m{i}", 100_000)) for i in range(3)]
    assert said[1] == "cost limit $1 reached after 2 turns ($1.00 spent)", said


@pytest.mark.parametrize(
    "line",
    [
        '{"type": "assistant", "message": {"id": "m", "content": 5, "usage": {"input_tokens": 9}}}',
        '{"type": "assistant", "message": {"id": "m", "content": true}}',
        '{"type": "assistant", "message": {"id": "m", "usage": {"input_tokens": ' + "9" * 400 + "}}}",
        '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
)
def test_a_line_the_meter_cannot_count_stops_the_run_and_never_raises(line: str) -> None:
    meter = Meter(Limits(max_cost_usd=1.0))
    said = meter.feed(line)
    assert said == "" or said.startswith(("stopped: vaultops could not count", "cost limit"))
    if "9" * 400 in line:
        assert said.startswith("cost limit"), "a count past any model's is counted as huge, not dropped"


def test_a_watch_that_fails_stops_the_run_instead_of_its_reader(tmp_path: Path) -> None:
    def judge(line: str) -> str:
        raise RuntimeError("a bug")

    script = "import time\nprint('one', flush=True)\ntime.sleep(60)\n"
    proc = run_process([sys.executable, "-c", script], cwd=tmp_path, timeout=120, watch=judge)
    assert proc.stopped == "stopped: its output could not be read (RuntimeError)" and not proc.timed_out


def test_a_request_adds_to_its_profiles_review_and_never_skips_it() -> None:
    reviewing = CLAUDE.model_copy(update={"review": True, "checks": (("pytest", "-q"),)})
    repo = {"repo": "~/code/app"}
    assert asked_review({**repo, "review": "no"}, reviewing) == (
        "asks for no review, but its profile reviews every job; remove `review: no`"
    )
    assert asked_review({**repo, "checks": "true"}, reviewing) == (("pytest", "-q"), ("true",))
    assert asked_review({**repo, "checks": "pytest -q"}, reviewing) == (("pytest", "-q"),)
    assert asked_review({**repo, "review": "no"}, CLAUDE) is None
    assert asked_review({"review": "yes"}, CLAUDE) == (
        "review needs repo: (its checks run in the job's worktree); name the repository"
    )
