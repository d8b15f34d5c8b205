"""Once per incident: which of a pass's warnings the daemon's log has said already.  Pure.

A warning that comes back pass after pass is one incident, said once; so is one whose only change is a
duration in it (the notifier's "not delivered, retried in 10 s", then "20 s", "40 s": issue 29 saw each
of them, three lines for one channel that was down, before the line saying it is failing)."""

from __future__ import annotations

import re

from vaultops.notify.outbox import RETRY_MAX

# seconds a warning must go unsaid before it is said again: longer than the longest wait between the
# notifier's tries, so a channel down for hours is not said again at each of them
QUIET_FOR = max(600.0, 1.5 * RETRY_MAX)

# a number that is a duration ("10 s", "2.5 s", "40s", "3 minutes"): not what tells incidents apart
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?=(?:ms|s|sec|seconds?|min|minutes?|h|hours?)\b)")


def incident_of(warning: str) -> str:
    """The warning as its incident: the same words, its durations left out."""
    return _DURATION.sub("# ", warning)


def to_say(warnings: list[str], said: dict[str, float], now: float) -> list[str]:
    """The warnings to log now, each incident once; ``said`` (incident -> when last seen) is updated, and
    forgets an incident unseen for ``QUIET_FOR`` seconds, so that it is said again when it comes back."""
    out = []
    for warning in warnings:
        key = incident_of(warning)
        if now - said.get(key, -QUIET_FOR) >= QUIET_FOR:
            out.append(warning)
        said[key] = now
    for key in [k for k, t in said.items() if now - t >= QUIET_FOR]:
        del said[key]
    return out
