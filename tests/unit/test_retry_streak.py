"""Retries that carry the reason, loops that stop (issue 28, part 4): the failure signature and its
normaliser, the streak that stops the retries, what is left of a request's limits, and the note a retry's
prompt carries.  Pure."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from vaultops.model import Limits
from vaultops.run import streak
from vaultops.run.prompt import PromptInput, build_prompt
from vaultops.run.streak import ASIDE, DONE, FAILED, Tried

# what differs between two runs that failed for the same cause
times = st.builds(
    "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}+10:00".format,
    st.integers(2000, 2099), st.integers(1, 12), st.integers(1, 28),
    st.integers(0, 23), st.integers(0, 59), st.integers(0, 59),
)  # fmt: skip
pids = st.integers(2, 4_194_304)
paths = st.lists(st.from_regex(r"[a-z0-9_.-]{1,12}", fullmatch=True), min_size=1, max_size=5).map(
    lambda parts: "/" + "/".join(parts)
)
hexes = st.from_regex(r"[0-9a-f]{12,40}", fullmatch=True).filter(
    lambda h: any(c.isdigit() for c in h) and any(c.isalpha() for c in h)
)
seconds = st.floats(0.1, 9999, allow_nan=False).map(lambda f: f"{f:.1f} s")


def noisy(at: str, pid: int, path: str, commit: str, took: str) -> str:
    return f"exit 2: {at} pid {pid} could not open {path} at {commit} after {took}"


@given(times, times, pids, pids, paths, paths, hexes, hexes, seconds, seconds)
def test_two_runs_that_failed_the_same_way_have_one_signature(
    t1: str, t2: str, p1: int, p2: int, f1: str, f2: str, h1: str, h2: str, s1: str, s2: str
) -> None:
    first = streak.signature("error", noisy(t1, p1, f1, h1, s1), ["pytest -q"])
    second = streak.signature("error", noisy(t2, p2, f2, h2, s2), ["pytest -q"])
    assert first == second
    assert (
        first == "error: exit 2: <time> pid <n> could not open <path> at <id> after <n> s · check: pytest -q"
    )


# text made of the pieces the noise patterns look for, besides any text
noise_like = st.lists(
    st.sampled_from([*"0123456789abcdefABCDEFTZ:.-/ $~\\,_x", "pid ", " s", "sec", "min", "2026-01-01T"]),
    max_size=80,
).map("".join)


@example("0H")  # found by it: upper case, then lowered, matched only the second time
@example("y" + "x " * 118 + "0 sx")  # cut to length after "0 s", which is a duration then
@given(noise_like | st.text(max_size=400))
def test_normalising_twice_changes_nothing_and_a_signature_is_bounded(text: str) -> None:
    once = streak.normalise(text)
    assert streak.normalise(once) == once
    assert len(streak.signature("error", text, [text, text])) <= streak.SIGNATURE_CHARS
    assert "\n" not in once


def test_what_tells_failures_apart_is_kept() -> None:
    """An exit code, an HTTP status, the failing check and the error class are the cause: never noise."""
    sig = streak.signature
    assert sig("error", "exit 1") != sig("error", "exit 2")
    assert sig("error", "API error 500") != sig("error", "API error 400")
    assert sig("review", "exit 1", ["pytest -q"]) != sig("review", "exit 1", ["ruff check ."])
    assert sig("timeout", "timed out after 600 s") != sig("error", "timed out after 600 s")
    assert sig("error", "ValueError: bad") == sig("error", "valueerror: bad  ")


def rows(*specs: str) -> list[Tried]:
    """``f:a`` a failure with signature a, ``d`` done, ``x`` set aside (a 429, a shutdown)."""
    kinds = {"f": FAILED, "d": DONE, "x": ASIDE}
    return [Tried("worker-code", kinds[s[0]], s[2:] if s.startswith("f:") else "") for s in specs]


def test_the_streak_is_the_latest_failures_with_one_signature() -> None:
    assert len(streak.streak(rows("f:a", "f:a", "f:a"))) == 3
    assert len(streak.streak(rows("f:a", "f:b", "f:b"))) == 2
    assert len(streak.streak(rows("f:b", "d", "f:b"))) == 1, "a finished run starts it again"
    assert streak.streak(rows("f:a", "f:a", "d")) == []
    assert len(streak.streak(rows("f:a", "x", "f:a", "x"))) == 2, "a rate limit neither counts nor breaks"


specs = st.lists(st.sampled_from(["f:a", "f:b", "d", "x"]), max_size=30)


@given(specs, st.integers(1, 10))
def test_the_streak_decision(spec: list[str], limit: int) -> None:
    history = rows(*spec)
    run = streak.streak(history)
    assert len({t.signature for t in run}) <= 1
    assert all(t.kind == FAILED for t in run)
    assert streak.looping(history, limit) == (len(run) >= limit)
    # the streak is the tail of the failures since the last finished run, asides left out
    counted = [t for t in streak.since_done(history) if t.kind != ASIDE]
    assert counted[len(counted) - len(run) :] == run
    # an attempt set aside changes nothing; one more of the same failure adds one; a done ends it
    assert streak.streak([*history, *rows("x")]) == run
    if run:
        assert len(streak.streak([*history, *rows("f:" + run[0].signature)])) == len(run) + 1
    assert streak.streak([*history, *rows("d")]) == []


def spend(*costs: tuple[float, int]) -> list[Tried]:
    return [Tried("worker-code", FAILED, "s", cost_usd=c, turns=t) for c, t in costs]


def test_a_retry_gets_only_what_is_left_of_the_requests_limits() -> None:
    history = spend((0.6, 4), (0.15, 3))
    assert streak.left(Limits(1.0, 10), history) == Limits(0.25, 3)
    assert streak.left(Limits(None, 10), history) == Limits(None, 3)
    assert streak.left(Limits(1.0, 10), [*history, Tried("p", DONE)]) == Limits(1.0, 10), "a finished run"
    assert streak.spent_out(Limits(1.0, 10), history) == ""
    said = streak.spent_out(Limits(0.5, None), history)
    assert said.startswith("the request's cost limit $0.5 is spent ($0.75 over 2 attempts)"), said
    assert "`- retry: yes`" in said
    assert streak.spent_out(Limits(None, 7), history).startswith("the request's turn limit 7 is spent")


@example([], 1.9999999999999982, 1)  # found by it: rounded to the cent, above the limit
@given(
    st.lists(st.tuples(st.floats(0, 5), st.integers(0, 50)), max_size=10),
    st.floats(0.01, 10),
    st.integers(1, 99),
)
def test_what_is_left_is_never_negative_and_never_more_than_the_limit(
    costs: list[tuple[float, int]], cost: float, turns: int
) -> None:
    rest = streak.left(Limits(cost, turns), spend(*costs))
    assert rest.max_cost_usd is not None and 0 <= rest.max_cost_usd <= cost
    assert rest.max_turns is not None and 0 <= rest.max_turns <= turns
    assert bool(streak.spent_out(Limits(cost, turns), spend(*costs))) == (
        rest.max_cost_usd <= 0 or rest.max_turns <= 0
    )


def test_the_history_and_the_reason_name_each_attempts_signature() -> None:
    run = streak.streak(rows("f:error: exit 2", "f:error: exit 2"))
    assert streak.history_lines(run) == ["1. worker-code: error: exit 2", "2. worker-code: error: exit 2"]
    assert streak.loop_reason(run).startswith("failed the same way 2 times in a row (error: exit 2)")


def test_a_retrys_prompt_carries_the_failing_checks_tail_as_data() -> None:
    tail = (
        'E   assert preview() == 3\nE   "`rm -rf /`" $(touch pwned)\nFAILED tests/test_tab.py::test_preview'
    )
    last = Tried(
        "check", FAILED, "review: exit 1 · check: pytest -q", "1 of 2 checks failed: pytest -q (exit 1)", tail
    )
    note = streak.carried(streak.last_failure([*rows("f:a"), last]), "handle the empty tab too")
    given_ = PromptInput(
        "REQ-1", "Inbox.md", "Fix", "code", "Fix the tab preview.", "/w", last_attempt=tuple(note.items())
    )
    prompt = build_prompt(given_)
    block = json.loads(prompt[prompt.index("```json") + 7 : prompt.rindex("```")])
    carried = block["context"]["last_attempt"]
    assert carried["failing_check_output"] == tail, "the tail whole, as a JSON string"
    assert carried["error"] == "1 of 2 checks failed: pytest -q (exit 1)"
    assert carried["the_person_asks"] == "handle the empty tab too"
    assert "it said done, and its checks failed" in carried["attempt"]


def test_nothing_is_carried_after_a_finished_run() -> None:
    assert streak.last_failure(rows("f:a", "d")) is None
    assert streak.carried(None) == {}
    assert "last_attempt" not in build_prompt(PromptInput("R", "n.md", "t", "code", "x", "/w"))
    stopped = Tried("worker-code", ASIDE, detail="interrupted: vaultops stopped before this attempt finished")
    assert streak.last_failure([*rows("d"), stopped]) == stopped, "an interrupted attempt is said"


def test_a_tail_is_bounded() -> None:
    long = "\n".join(f"line {n} " + "x" * 300 for n in range(100))
    cut = streak.tail(long)
    assert len(cut) <= streak.TAIL_CHARS and cut.endswith("line 99 " + "x" * 300)


def test_a_cost_a_cli_misreports_never_gives_a_request_more() -> None:
    """Below zero counts as nothing; a cost that is no number spends the whole limit (fail closed)."""
    assert streak.tried({"kind": FAILED, "cost_usd": -5.0, "turns": -3}).cost_usd == 0.0
    assert streak.reported_cost(float("nan")) == float("inf") == streak.reported_cost(float("inf"))
    lying = [streak.tried({"kind": FAILED, "cost_usd": -5.0, "turns": -3}), *spend((0.5, 1))]
    assert streak.left(Limits(1.0, 5), lying) == Limits(0.5, 4)
    unknown = [streak.tried({"kind": FAILED, "cost_usd": float("inf")})]
    assert streak.left(Limits(1.0, None), unknown) == Limits(0.0, None)
    assert streak.spent_out(Limits(1.0, None), unknown).startswith("the request's cost limit $1 is spent")
