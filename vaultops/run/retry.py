"""What to do after an attempt: the retry table of the worker-orchestration design.  Pure.

| failure              | action                                                    |
|----------------------|-----------------------------------------------------------|
| rate limit (429)     | same profile after 1 s, 4 s, 16 s; at most 3 retries      |
| a 429 told to wait longer than those | as the account's usage limit             |
| timeout              | once on the fallback profile                              |
| unavailable (503/529)| fallback at once                                          |
| auth (401/403)       | no retry; escalate "auth"                                 |
| the account's usage limit | wait for its reset ([limits] on_quota = "wait"), or fallback at once |
| a cost or turn limit | no retry: the request's limit is spent                    |
| a call the gate did not see | no retry, no fallback: failed closed (run.proof)   |
| anything else        | one retry on the fallback                                 |
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass

from vaultops.run.outcome import Attempt, Failure

RATE_LIMIT_DELAYS = (1.0, 4.0, 16.0)


@dataclass(frozen=True, slots=True)
class Step:
    action: str  # "done" | "retry" | "fallback" | "give-up" | "escalate" | "wait" (for the quota)
    profile: str = ""
    delay: float = 0.0
    reason: str = ""


def fallback_for(route: Sequence[str], tried: Container[str], skip: Container[str] = ()) -> str:
    """The first profile of the route not tried yet and not known to be offline, or ""."""
    return next((p for p in route if p not in tried and p not in skip), "")


def next_step(
    attempts: Sequence[Attempt],
    route: Sequence[str],
    *,
    offline: Container[str] = (),
    delays: Sequence[float] = RATE_LIMIT_DELAYS,
    on_quota: str = "wait",
) -> Step:
    last = attempts[-1]
    if last.failure is None:
        return Step("done", last.profile)
    tried = {a.profile for a in attempts}
    # a limit holds for the request, not one profile; a job its gate did not see is an incident, not bad luck
    if last.failure in (Failure.CANCELLED, Failure.LIMIT, Failure.UNGATED):
        return Step("give-up", last.profile, reason=last.detail)
    if last.failure is Failure.AUTH:
        return Step("escalate", last.profile, reason=f"auth: {last.profile} was refused ({last.detail})")
    if last.failure is Failure.RATE_LIMIT:
        told = last.usage.after if last.usage is not None else None  # the wait its words said, if any
        if on_quota == "wait" and told is not None and told > max(delays, default=0.0):
            return Step("wait", last.profile, reason=last.detail)  # longer than this table waits: the quota
        streak = 0
        for a in reversed(attempts):
            if a.profile != last.profile or a.failure is not Failure.RATE_LIMIT:
                break
            streak += 1
        if streak <= len(delays):
            return Step("retry", last.profile, delays[streak - 1], "rate limited (429)")
        return Step("give-up", last.profile, reason=f"rate limited (429) {streak} times on {last.profile}")
    if last.failure is Failure.QUOTA and on_quota == "wait":  # no retry in seconds lifts it, nor a fallback
        return Step("wait", last.profile, reason=last.detail)
    # unavailable (or the quota, with on_quota = "fallback"): on to the next profile, as far as the route
    # goes; timeout or anything else: the fallback once, not a walk down the whole route
    fallback = fallback_for(route, tried, offline)
    once = (Failure.TIMEOUT, Failure.OTHER)
    if last.failure in once and any(a.failure in once for a in attempts[:-1]):
        fallback = ""
    if fallback:
        return Step("fallback", fallback, reason=f"{last.failure.value} on {last.profile}")
    return Step("give-up", last.profile, reason=last.detail)


def summary(attempts: Sequence[Attempt]) -> str:
    """One line for the result block: ``worker-code rate-limit ×2 → worker-code done``."""
    parts: list[str] = []
    run: tuple[str, str] | None = None
    count = 0
    for a in attempts:
        label = (a.profile, a.failure.value if a.failure else "done")
        if label == run:
            count += 1
            continue
        if run is not None:
            parts.append(f"{run[0]} {run[1]}" + (f" ×{count}" if count > 1 else ""))
        run, count = label, 1
    if run is not None:
        parts.append(f"{run[0]} {run[1]}" + (f" ×{count}" if count > 1 else ""))
    return " → ".join(parts)
