"""What one attempt of a profile produced, read from its raw output, then redacted.  Pure.

Plain-text profiles are judged by exit status.  Claude Code (``output = "claude-json"``) is judged by the
result object's ``is_error`` and ``subtype``, never by its exit code: an API failure exits 1 with a
perfectly good result object on stdout, and that object says which failure it was.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from vaultops.base.claude_code import result_object
from vaultops.base.redact import redact
from vaultops.base.usage_limit import UsageLimit, from_words, reported, said_wait
from vaultops.run.process import ProcessResult


class Failure(StrEnum):
    RATE_LIMIT = "rate-limit"
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"
    AUTH = "auth"
    OTHER = "error"
    CANCELLED = "cancelled"  # stopped because the daemon is shutting down
    LIMIT = "limit"  # stopped by vaultops at its max_cost_usd or max_turns (vaultops.run.meter)
    QUOTA = "quota"  # the account's usage limit is reached until a time it said (vaultops.base.usage_limit)
    UNGATED = "ungated"  # a tool call its gate did not see: stopped, failed closed (vaultops.run.proof)


@dataclass(frozen=True, slots=True)
class Attempt:
    profile: str
    failure: Failure | None  # None: it worked
    text: str  # the final text, or the output worth showing
    detail: str  # one line for the status: "exit 2", "API error 429: …", "timed out after 600 s" (timed_out)
    duration: float
    exit_code: int | None = None
    status_code: int | None = None  # the API's HTTP status, when there was one
    cost_usd: float | None = None
    turns: int | None = None
    session_id: str | None = None
    denials: tuple[str, ...] = ()  # tool calls the agent was refused, e.g. "Bash: rm -rf build"
    usage: UsageLimit | None = None  # QUOTA: when the account's limit resets; RATE_LIMIT: a wait it said

    @property
    def ok(self) -> bool:
        return self.failure is None


@dataclass(frozen=True, slots=True)
class Allowed:
    """The time one attempt was given: its own timeout (the profile's, or the request's when shorter),
    cut short when its job's budget, for all its attempts together, had less left."""

    own: float
    budget: float | None = None  # the job's, all attempts together
    left: float | None = None  # what the budget had left when this attempt started

    @property
    def seconds(self) -> float:
        return self.own if self.left is None else max(0.1, min(self.own, self.left))

    @property
    def cut(self) -> bool:
        """Whether the budget, not its own timeout, set this attempt's limit."""
        return self.left is not None and self.left < self.own


def _took(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"


def budget_ran_out(budget: float, spent: float) -> str:
    """A job stopped because all its attempts together took the time it had."""
    return f"timed out: the job's {budget:g} s for all its attempts ran out after {_took(spent)}"


def timed_out(proc: ProcessResult, allowed: Allowed) -> str:
    """The status line of a run stopped by a time limit: the limit that fired, and how long it ran.

    The number after "timed out after" is never a remainder: an attempt cut short by its job's budget
    names the budget and the time all the attempts took."""
    ran = proc.duration
    if proc.limit == "inactivity":
        return f"timed out: no output for {proc.limit_seconds:g} s (it ran {_took(ran)})"
    if allowed.cut and allowed.budget is not None and allowed.left is not None:
        spent = allowed.budget - allowed.left + ran
        return f"{budget_ran_out(allowed.budget, spent)}; the last had {_took(allowed.left)} left"
    limit = proc.limit_seconds or allowed.seconds
    late = f" (it ended after {_took(ran)})" if ran >= limit + 1 else ""
    return f"timed out after {limit:g} s{late}"


def _first_lines(text: str, n: int = 3) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()][:n]
    quoted = " / ".join(line.strip()[:120] for line in lines)
    return quoted or "(nothing)"


def _started(profile: str, proc: ProcessResult, timeout: float | Allowed) -> Attempt | None:
    """The failures every kind of profile shares: it could not start, or it ran out of time."""
    if proc.start_error:
        return Attempt(profile, Failure.OTHER, "", proc.start_error, proc.duration)
    if proc.cancelled:
        return Attempt(
            profile,
            Failure.CANCELLED,
            proc.stdout + proc.stderr,
            "stopped when vaultops shut down",
            proc.duration,
        )
    if proc.timed_out:
        output = proc.stdout + proc.stderr
        allowed = timeout if isinstance(timeout, Allowed) else Allowed(timeout)
        return Attempt(profile, Failure.TIMEOUT, output, timed_out(proc, allowed), proc.duration)
    if proc.stopped and result_object(proc.stdout) is None:  # a run that ended first is judged by its end
        return Attempt(profile, Failure.LIMIT, "", proc.stopped, proc.duration)
    return None


def from_text(profile: str, proc: ProcessResult, timeout: float | Allowed) -> Attempt:
    early = _started(profile, proc, timeout)
    if early is not None:
        return early
    if proc.exit_code == 0:
        return Attempt(profile, None, proc.stdout, "", proc.duration, 0)
    output = proc.stdout + ("\n" if proc.stdout and proc.stderr else "") + proc.stderr
    if (usage := from_words(output)) is not None:
        detail = f"usage limit: {usage.said}"
        return Attempt(profile, Failure.QUOTA, output, detail, proc.duration, proc.exit_code, usage=usage)
    if _RATE_LIMITED.search(output) and (wait := said_wait(output)) is not None:  # the retry table weighs it
        detail = f"rate limited: {wait.said}"
        return Attempt(profile, Failure.RATE_LIMIT, output, detail, proc.duration, proc.exit_code, usage=wait)
    return Attempt(profile, Failure.OTHER, output, f"exit {proc.exit_code}", proc.duration, proc.exit_code)


_RATE_LIMITED = re.compile(r"\b429\b|rate.?limit", re.I)  # a plain agent's words for a refused call


def _denials(result: dict[str, Any]) -> tuple[str, ...]:
    out = []
    for denial in result.get("permission_denials") or []:
        if not isinstance(denial, dict):
            continue
        tool = str(denial.get("tool_name", "?"))
        given = denial.get("tool_input")
        what = ""
        if isinstance(given, dict):
            what = str(
                given.get("command") or given.get("file_path") or given.get("path") or given.get("url") or ""
            )
        out.append(f"{tool}: {what}"[:200] if what else tool)
    return tuple(out)


def _api_failure(status: object, message: str) -> Failure:
    if status == 429:
        return Failure.RATE_LIMIT
    if status in (503, 529) or (status is None and "connection" in message.lower()):
        return Failure.UNAVAILABLE
    if status in (401, 403):
        return Failure.AUTH
    return Failure.OTHER


def from_claude(profile: str, proc: ProcessResult, timeout: float | Allowed) -> Attempt:
    early = _started(profile, proc, timeout)
    if early is not None:
        return early
    result = result_object(proc.stdout)
    if result is None:
        shown = proc.stdout if proc.stdout.strip() else proc.stderr
        detail = f"Claude Code printed no JSON result (exit {proc.exit_code}): {_first_lines(shown)}"
        return Attempt(profile, Failure.OTHER, shown, detail, proc.duration, proc.exit_code)
    text = str(result.get("result") or "")
    cost = result.get("total_cost_usd")
    turns = result.get("num_turns")
    common: dict[str, Any] = {
        "exit_code": proc.exit_code,
        "cost_usd": float(cost) if isinstance(cost, int | float) else None,
        "turns": int(turns) if isinstance(turns, int) else None,
        "session_id": str(result.get("session_id") or "") or None,
        "denials": _denials(result),
    }
    status = result.get("api_error_status")
    subtype = str(result.get("subtype") or "success")
    if subtype != "success":  # error_max_turns, error_during_execution, error_max_budget_usd, …
        stopped = f"Claude Code stopped: {subtype}"
        return Attempt(profile, Failure.OTHER, text, stopped, proc.duration, **common)
    if result.get("is_error"):
        status_code = status if isinstance(status, int) else None
        if (usage := reported(proc.stdout, text)) is not None:  # not a 429 to retry in seconds
            detail = f"usage limit: {usage.said}"
            quota = Failure.QUOTA
            return Attempt(
                profile, quota, text, detail, proc.duration, status_code=status_code, usage=usage, **common
            )
        failure = _api_failure(status, text)
        label = f"API error {status_code}" if status_code else "error"
        detail = f"{label}: {_first_lines(text, 1)}"
        wait = said_wait(text) if failure is Failure.RATE_LIMIT else None  # how long, when its words say
        return Attempt(
            profile, failure, text, detail, proc.duration, status_code=status_code, usage=wait, **common
        )
    return Attempt(profile, None, text, "", proc.duration, **common)


def redacted(attempt: Attempt, secrets: tuple[str, ...] = ()) -> Attempt:
    """``attempt`` with every text it keeps redacted: its text, its detail and its denials."""
    return dataclasses.replace(
        attempt,
        text=redact(attempt.text, secrets),
        detail=redact(attempt.detail, secrets),
        denials=tuple(redact(d, secrets) for d in attempt.denials),
        usage=attempt.usage and dataclasses.replace(attempt.usage, said=redact(attempt.usage.said, secrets)),
    )


def read_attempt(output: str, profile: str, proc: ProcessResult, timeout: float | Allowed) -> Attempt:
    """What the attempt produced: parsed from the raw output first, so that a secret in it never breaks
    the parse (cost, turns and session stay), then redacted.  ``timeout``: what it was allowed."""
    read = from_claude if output == "claude-json" else from_text
    return redacted(read(profile, proc, timeout), proc.secrets)
