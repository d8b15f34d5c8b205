"""From a request to an action: run it here, hand it to a profile, escalate it, or report an error.  Pure.

Blocked and unknown requests are escalated whatever else is said about them; light routine checks run
in a built-in handler; everything else goes to the first profile that ``[routing]`` names for its type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultops.config import Config
from vaultops.decide.classify import TYPES, Classification, classify
from vaultops.model import Decision, Request

DIRECT = "direct"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)?\s*$", re.I)


@dataclass(frozen=True, slots=True)
class Action:
    kind: str  # "builtin" | "profile" | "escalate" | "error" | "wait"
    decision: Decision
    reason: str = ""
    profile: str = ""
    timeout: float | None = None


def parse_duration(text: str) -> float | None:
    m = _DURATION.match(text)
    if not m:
        return None
    value = float(m.group(1))
    unit = (m.group(2) or "s").lower()
    return value * (3600 if unit.startswith("h") else 60 if unit.startswith("m") else 1)


def decision_of(c: Classification, route: tuple[str, ...]) -> Decision:
    return Decision(c.type, c.complexity, c.safety_class, c.reasons, route, c.blocked)


def decide_text(text: str, explicit_type: str | None, config: Config) -> Decision:
    c = classify(text, explicit_type)
    if c.safety_class in ("blocked", "unknown"):
        return decision_of(c, ())
    if c.complexity == "light" and c.safety_class == "routine":
        return decision_of(c, (c.type,))
    return decision_of(c, config.route_for(c.type))


def decide(request: Request, config: Config) -> Action:
    fields = request.fields
    explicit = fields.get("type", "").strip().lower() or None
    if explicit is not None and explicit not in TYPES:
        decision = Decision(explicit, "heavy", "unknown", (f"unknown type {explicit!r}",))
        return Action("error", decision, f"unknown type {explicit!r}; use one of: {', '.join(TYPES)}")
    decision = decide_text(request.text or "", explicit, config)
    if decision.safety_class == "blocked":
        found = [r for r in decision.reasons if r.startswith("blocked")]
        why = "; ".join(found) or f"blocked: {', '.join(decision.blocked)}"
        return Action("escalate", decision, f"{why}; vaultops will not run it")
    if decision.safety_class == "unknown":
        unsure = "; ".join(decision.reasons) or "could not tell what kind of request this is"
        return Action("escalate", decision, f"unknown: {unsure}; add a `- type:` line to say what it is")
    timeout = None
    if "timeout" in fields:
        timeout = parse_duration(fields["timeout"])
        if timeout is None or timeout <= 0:
            return Action(
                "error",
                decision,
                f"timeout {fields['timeout']!r} is not a duration; write e.g. 90, 90s or 5m",
            )
    if decision.complexity == "light" and decision.safety_class == "routine" and "profile" not in fields:
        return Action("builtin", decision, "", DIRECT, timeout)
    wanted = fields.get("profile", "").strip()
    if wanted:
        if wanted not in config.profiles:
            known = ", ".join(sorted(config.profiles)) or "none are configured"
            return Action("error", decision, f"profile {wanted!r} is not under [profiles] ({known})")
        route: tuple[str, ...] = (wanted,)
    else:
        route = decision.route
    if not route:
        return Action(
            "wait",
            decision,
            f"no executor profile for type {decision.type}; add one under [profiles] and [routing] "
            "in .vaultops/config.toml",
        )
    decision = Decision(decision.type, decision.complexity, decision.safety_class, decision.reasons, route,
                        decision.blocked)  # fmt: skip
    limit = config.profiles[route[0]].timeout
    return Action("profile", decision, "", route[0], min(timeout, limit) if timeout else limit)
