"""A request's attempts as its next retry reads them.  Pure.

Three things follow from the rows of state.db's ``attempts`` table (``store/attempts_table.py``):

- the **failure signature** of a failed attempt: its error class and its failing check, normalised so
  that two runs that failed the same way have the same one (times, pids, paths, ids, durations and
  amounts are taken out: they differ on every run and say nothing about the cause);
- the **streak**: how many of the request's latest failures in a row share the latest one's signature.
  At ``[retry] same_failure_limit`` vaultops stops retrying and asks the person, since a retry that
  meets the same failure again only spends more (one user's agent spent $313 in 8.5 h retrying one item);
- what the request has **spent** since it last finished (cost and turns of every attempt, across runs):
  its ``max_cost_usd`` and ``max_turns`` hold for the request, so a retry gets only what is left.

A rate limit, an unavailable API, or a shutdown says nothing of the request: such rows neither count in
a streak nor break it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vaultops.model import Limits

FAILED = "failed"  # the attempt failed, or its checks did: it has a signature
DONE = "done"  # it finished (and its checks passed): a streak and the spending start again after it
ASIDE = "aside"  # rate limited, unavailable, stopped by a shutdown or a crash: not the request's doing

SIGNATURE_CHARS = 240  # a signature is a key, not a report
TAIL_LINES = 15  # of a failing check's output, or of the agent's last words, carried to the next attempt
TAIL_CHARS = 2000

# Noise, in this order, over lower-case text: each replacement holds no digit and no slash (normalise
# repeats them until nothing changes, so that a cut to length cannot leave a match behind).
_NOISE: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"\d{4}-\d{2}-\d{2}(?:[t ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?(?:z|[+-]\d{2}:?\d{2})?"),
        "<time>",
    ),
    (re.compile(r"\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\b"), "<time>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:~|\.{1,2})?(?:[/\\][^\s/\\:'\"(),;\[\]<>]+)+[/\\]?"), "<path>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<id>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{7,}\b"), "<id>"),
    (re.compile(r"\b(pid|process|port|thread)\s*[=:#]?\s*\d+", re.IGNORECASE), r"\1 <n>"),
    (re.compile(r"\$\s?\d+(?:[.,]\d+)?"), "$<n>"),
    (re.compile(r"\b\d+(?:[.,]\d+)?\s?(?:ms|s|sec|secs|seconds?|min|mins|minutes?|h|hours?)\b"), "<n> s"),
    (re.compile(r"\b\d+[.,]\d+\b"), "<n>"),
    (re.compile(r"\b\d{4,}\b"), "<n>"),
    (re.compile(r"\s+"), " "),
)


def normalise(text: str) -> str:
    """``text`` as a key: its first line only, lower case, without what differs from run to run.  Again
    until nothing changes: cutting it to length can end a word where a pattern then matches."""
    key = next((line for line in text.splitlines() if line.strip()), "").lower()
    for _ in range(4):
        before = key
        for pattern, replacement in _NOISE:
            key = pattern.sub(replacement, key)
        key = key.strip()[:SIGNATURE_CHARS]
        if key == before:
            break
    return key


def signature(error_class: str, detail: str, checks: Sequence[str] = ()) -> str:
    """``other: exit 2``, ``review: exit 1 · check: pytest -q``: what failed, and which check did."""
    said = f"{normalise(error_class)}: {normalise(detail)}"
    if checks:
        said += " · check: " + ", ".join(normalise(c) for c in checks)
    return said[:SIGNATURE_CHARS]


def tail(text: str, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
    """The end of an output, bounded in lines and characters (the end of a failing test says why)."""
    kept = "\n".join(text.rstrip().splitlines()[-lines:])
    return kept[-chars:]


@dataclass(frozen=True, slots=True)
class Tried:
    """One row of the ``attempts`` table."""

    profile: str
    kind: str
    signature: str = ""
    detail: str = ""
    tail: str = ""
    cost_usd: float | None = None
    turns: int | None = None
    claim: str = ""


def reported_cost(value: object) -> float | None:
    """A cost as an agent CLI reported it: below zero counts as nothing; one that is no number at all
    (infinite, not a number) as everything, since what cannot be counted cannot be held to a limit."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return max(0.0, float(value)) if math.isfinite(value) else math.inf


def tried(row: Mapping[str, Any]) -> Tried:
    turns = row.get("turns")
    return Tried(
        str(row.get("profile") or ""),
        str(row.get("kind") or ""),
        str(row.get("signature") or ""),
        str(row.get("detail") or ""),
        str(row.get("tail") or ""),
        reported_cost(row.get("cost_usd")),
        max(0, turns) if isinstance(turns, int) and not isinstance(turns, bool) else None,
        str(row.get("claim") or ""),
    )


def streak(history: Sequence[Tried]) -> list[Tried]:
    """The latest failures in a row with the latest one's signature, oldest first ([] when the latest
    attempt that counts did not fail)."""
    out: list[Tried] = []
    for t in reversed(history):
        if t.kind == ASIDE:
            continue
        if t.kind != FAILED or (out and t.signature != out[0].signature):
            break
        out.append(t)
    return out[::-1]


def looping(history: Sequence[Tried], limit: int) -> bool:
    """The request has failed the same way ``limit`` times in a row: no more retries without the person."""
    return limit > 0 and len(streak(history)) >= limit


def since_done(history: Sequence[Tried]) -> list[Tried]:
    """The attempts since the request last finished: what its limits are counted over."""
    last = max((i for i, t in enumerate(history) if t.kind == DONE), default=-1)
    return list(history[last + 1 :])


def spent(history: Sequence[Tried]) -> tuple[float, int]:
    """Cost and turns of every attempt since the request last finished."""
    rows = since_done(history)
    return sum(t.cost_usd or 0.0 for t in rows), sum(t.turns or 0 for t in rows)


def left(limits: Limits, history: Sequence[Tried]) -> Limits:
    """What the request's limits leave for its next attempt (a limit it does not have stays None); dollars
    to the cent below, as a person reads them ("$0.19 left", not "$0.19955")."""
    cost, turns = spent(history)
    most_cost = None
    if limits.max_cost_usd is not None:
        rest = limits.max_cost_usd - cost
        # never above what is left: the margin is for a sum such as 1 - 0.6 that lands just below a cent
        most_cost = min(rest, math.floor(rest * 100 + 1e-9) / 100) if rest > 0 else 0.0
    most_turns = None if limits.max_turns is None else max(0, limits.max_turns - turns)
    return Limits(most_cost, most_turns)


def spent_out(limits: Limits, history: Sequence[Tried]) -> str:
    """Why no attempt may start (the request's limit is spent), or ""."""
    cost, turns = spent(history)
    runs = len([t for t in since_done(history) if t.cost_usd or t.turns])
    over = f"over {runs} attempt{'s' if runs != 1 else ''}"
    fix = "raise it in the request and write `- retry: yes` to give it more"
    rest = left(limits, history)
    if rest.max_cost_usd is not None and rest.max_cost_usd <= 0:
        return f"the request's cost limit ${limits.max_cost_usd:g} is spent (${cost:.2f} {over}); {fix}"
    if rest.max_turns is not None and rest.max_turns <= 0:
        return f"the request's turn limit {limits.max_turns} is spent ({turns} turns {over}); {fix}"
    return ""


def history_lines(rows: Sequence[Tried]) -> list[str]:
    """Each attempt of a streak, numbered, for the result block the person reads."""
    return [f"{n}. {t.profile}: {t.signature}" for n, t in enumerate(rows, 1)]


def loop_reason(rows: Sequence[Tried]) -> str:
    """The status line of a request stopped for failing the same way again and again."""
    return (
        f"failed the same way {len(rows)} times in a row ({rows[-1].signature}); vaultops stopped retrying. "
        "Write `- retry: yes — what to change` to run it again"
    )


def last_failure(history: Sequence[Tried]) -> Tried | None:
    """What the next attempt's prompt says went wrong: the latest failure since the request last finished,
    else the latest attempt set aside with a reason (a shutdown, a crash); None when it finished."""
    rows = since_done(history)
    failed = [t for t in rows if t.kind == FAILED]
    if failed:
        return failed[-1]
    aside = [t for t in rows if t.detail]
    return aside[-1] if aside else None


REVIEW = "review"  # the error class of a code job whose agent said done and whose checks failed


def carried(last: Tried | None, feedback: str = "") -> dict[str, str]:
    """The note a retry's prompt carries, as data for its JSON context: what the last attempt did, why it
    failed (its error, the tail of its failing check or of its output), and what the person asks."""
    out: dict[str, str] = {}
    if last is not None:
        review = last.signature.startswith(REVIEW)
        out["attempt"] = f"{last.profile}: " + (
            "it said done, and its checks failed" if review else last.kind
        )
        if last.detail:
            out["error"] = last.detail
        if last.tail:
            out["failing_check_output" if review else "its_last_output"] = last.tail
    if feedback:
        out["the_person_asks"] = feedback
    return out
