"""From a request to an action: run it here, hand it to a profile, escalate it, or report an error.  Pure.

Blocked and unknown requests are escalated whatever else is said about them (model triage, passed in as
a value, can only make a request stricter, or say what an unknown one is); light routine checks run
in a built-in check; everything else goes to the first profile that ``[routing]`` names for its type.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from vaultops import lines as fmt
from vaultops.base.durations import parse_duration
from vaultops.classifier.rules import TYPES, Classification, classify
from vaultops.classifier.triage import SecondOpinion, combine
from vaultops.config import Config, ProfileConfig
from vaultops.decide.checks import commands_of, request_check_problem
from vaultops.model import ApprovalScope, Limits, Request, Ruling

DIRECT = "direct"


# How a pass handles a request: run a built-in check, hand it to a profile, escalate it, say why it cannot
# run, wait (no profile, or the budget), take another machine's expired claim over, or do what the person
# answered (deny, cancel), or say the times a schedule skipped (missed).
HandlingKind = Literal[
    "builtin", "profile", "escalate", "error", "wait", "deny", "cancel", "takeover", "missed", "cleanup",
    "accept", "misanswered",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Handling:
    kind: HandlingKind
    ruling: Ruling
    reason: str = ""
    profile: str = ""
    timeout: float | None = None
    tools: tuple[str, ...] | None = None  # the request's narrower tool list, if it gave one
    approved: str = ""  # the person's approval this run stands on ("" when none was needed)
    scope: ApprovalScope = "once"  # what the person's approval lets through of the calls it answers
    # what its run may spend: the request's and its profile's, the tighter of each
    limits: Limits = field(default_factory=Limits)
    review: bool = False  # a code job goes to review when its agent is done, after its checks
    checks: tuple[tuple[str, ...], ...] = ()


def no_ruling() -> Ruling:
    """The ruling of a request that was not classified (an input error, a takeover)."""
    return Ruling("unknown", "heavy", "unknown")


def ruling_of(c: Classification, route: tuple[str, ...]) -> Ruling:
    return Ruling(c.type, c.complexity, c.safety_class, c.reasons, route, c.blocked)


def decide_text(
    text: str, explicit_type: str | None, config: Config, second_opinion: SecondOpinion | None = None
) -> Ruling:
    """The rules' classification, made stricter by a model's ``second_opinion`` when there is one."""
    c = classify(text, explicit_type)
    if second_opinion is not None:
        c = combine(c, second_opinion.opinion, second_opinion.failure, second_opinion.profile, text)
    if c.safety_class in ("blocked", "unknown"):
        return ruling_of(c, ())
    if c.complexity == "light" and c.safety_class == "routine":
        return ruling_of(c, (c.type,))
    return ruling_of(c, config.route_for(c.type))


def decide(request: Request, config: Config, second_opinion: SecondOpinion | None = None) -> Handling:
    """``second_opinion``: what model triage said of this version of the request (None: not asked)."""
    fields = request.fields
    explicit = fields.get("type", "").strip().lower() or None
    if explicit is not None and explicit not in TYPES:
        ruling = Ruling(explicit, "heavy", "unknown", (f"unknown type {explicit!r}",))
        return Handling("error", ruling, f"unknown type {explicit!r}; use one of: {', '.join(TYPES)}")
    ruling = decide_text(request.asked, explicit, config, second_opinion)
    if ruling.safety_class == "blocked":
        found = [r for r in ruling.reasons if r.startswith("blocked")]
        why = "; ".join(found) or f"blocked: {', '.join(ruling.blocked)}"
        return Handling("escalate", ruling, f"{why}; it runs only if you approve: {fmt.ESCALATION_ANSWERS}")
    if ruling.safety_class == "unknown":
        unsure = "; ".join(ruling.reasons) or "could not tell what kind of request this is"
        why = f"unknown: {unsure}; say in the text what to do, or answer: {fmt.ESCALATION_ANSWERS}"
        return Handling("escalate", ruling, why)
    if ruling.complexity == "light" and ruling.safety_class == "routine" and "profile" not in fields:
        return Handling("builtin", ruling, "", DIRECT, _duration(fields))
    return to_profile(ruling, fields, config)


def _duration(fields: Mapping[str, str]) -> float | None:
    return parse_duration(fields["timeout"]) if "timeout" in fields else None


def to_profile(
    ruling: Ruling, fields: Mapping[str, str], config: Config, route: tuple[str, ...] | None = None
) -> Handling:
    """The first profile of the route (or the one the request names from it), narrowed, never widened."""
    route = config.route_for(ruling.type) if route is None else route
    wanted = fields.get("profile", "").strip()
    if wanted:
        if wanted not in route:
            shown = ", ".join(route) or "none is configured"
            return Handling(
                "error", ruling, f"profile {wanted!r} is not in the route for {ruling.type} ({shown})"
            )
        route = (wanted, *(p for p in route if p != wanted))
    if not route:
        return Handling(
            "wait",
            ruling,
            f"no executor profile for type {ruling.type}; add one under [profiles] and [routing] "
            "in .vaultops/config.toml",
        )
    name = route[0]
    profile = config.profiles[name]
    timeout = None
    if "timeout" in fields:
        timeout = parse_duration(fields["timeout"])
        if timeout is None or timeout <= 0:
            return Handling(
                "error",
                ruling,
                f"timeout {fields['timeout']!r} is not a duration; write e.g. 90, 90s or 5m",
            )
        # a worker is a long-lived session: its limit is [workers] timeout, not a one-shot run's
        most = config.workers.timeout if fields.get("worker") else profile.timeout
        if timeout > most:
            where = "[workers] timeout" if fields.get("worker") else f"[profiles.{name}]"
            limit = f"{where} allows ({most:g} s)"
            why = f"asks for a timeout of {timeout:g} s, more than {limit}"
            return Handling("error", ruling, why)
    tools = None
    if fields.get("tools", "").strip():
        tools = tuple(t.strip() for t in fields["tools"].replace(" ", ",").split(",") if t.strip())
        allowed = profile.allowed_tools()
        if allowed is None:
            return Handling(
                "error", ruling, f"[profiles.{name}] lists no tools, so `- tools:` cannot narrow them"
            )
        extra = [t for t in tools if t not in allowed]
        if extra:
            why = (
                f"asks for tools [profiles.{name}] does not allow: {', '.join(extra)} "
                f"(it allows {', '.join(allowed)})"
            )
            return Handling("error", ruling, why)
    limits = asked_limits(fields, profile, name)
    if isinstance(limits, str):
        return Handling("error", ruling, limits)
    review = asked_review(fields, profile)
    if isinstance(review, str):
        return Handling("error", ruling, review)
    ruling = Ruling(ruling.type, ruling.complexity, ruling.safety_class, ruling.reasons, route,
                        ruling.blocked)  # fmt: skip
    return Handling("profile", ruling, "", name, timeout, tools, limits=limits, review=review is not None,
                    checks=review or ())  # fmt: skip


def asked_review(
    fields: Mapping[str, str], profile: ProfileConfig
) -> tuple[tuple[str, ...], ...] | str | None:
    """The checks of a job that goes to review (its profile's, then its own; maybe none), None for one that
    does not, or why it cannot.  A review needs the job's worktree: its checks run there.  As with its
    limits, a request may only add to what its profile asks: never skip the review or its checks."""
    said = fields.get("review", "").strip().lower()
    if said not in ("", "yes", "true", "no", "false"):
        return f"review {fields['review']!r} is yes or no"
    if profile.review and said in ("no", "false"):
        return "asks for no review, but its profile reviews every job; remove `review: no`"
    wanted = said in ("yes", "true") or profile.review
    if not wanted:
        return None
    if not fields.get("repo", "").strip():
        return "review needs repo: (its checks run in the job's worktree); name the repository"
    for fanned in ("tasks", "worker"):  # neither ends as one run whose work the checks could review
        if fields.get(fanned, "").strip():
            where = "its profile reviews every job" if profile.review else "it asks for review"
            return (
                f"{where}, which a {fanned}: plan cannot have (it does not end as one run); remove "
                f"{fanned}: or route it to a profile without review"
            )
    checks: list[tuple[str, ...]] = []
    for line in filter(str.strip, fields.get("checks", "").split("\n")):
        try:
            checks += commands_of(line)
        except ValueError as exc:
            return f"check {line!r} cannot be read as a command ({exc}); quote it as a shell would"
    added = [c for c in checks if c not in profile.checks]
    for argv in added:
        if problem := request_check_problem(argv):
            return (
                f"check `{shlex.join(argv)}` is not a plain test command: {problem}; a request may add "
                "those only, so put this one in its profile's checks"
            )
    return (*profile.checks, *added)


def asked_limits(fields: Mapping[str, str], profile: ProfileConfig, name: str) -> Limits | str:
    """The request's ``max_cost_usd`` and ``max_turns`` within its profile's, or why they cannot be used.
    A request may only tighten its profile's limits, as with its timeout."""
    cost = turns = None
    if raw := fields.get("max_cost_usd", "").strip():
        try:
            cost = float(raw.removeprefix("$").strip())
        except ValueError:
            cost = None
        if cost is None or not 0 < cost < float("inf"):
            return f"max_cost_usd {raw!r} is not an amount of dollars; write e.g. 2 or 0.50"
    if raw := fields.get("max_turns", "").strip():
        turns = int(raw) if raw.isascii() and raw.isdigit() else 0
        if turns < 1:
            return f"max_turns {raw!r} is not a number of turns; write a whole number, e.g. 20"
    asked = Limits(cost, turns)
    if asked and (problem := profile.metering_problem()):
        return f"[profiles.{name}] {problem}"
    most = profile.limits
    if cost is not None and most.max_cost_usd is not None and cost > most.max_cost_usd:
        return f"asks for max_cost_usd ${cost:g}, more than [profiles.{name}] allows (${most.max_cost_usd:g})"
    if turns is not None and most.max_turns is not None and turns > most.max_turns:
        return f"asks for max_turns {turns}, more than [profiles.{name}] allows ({most.max_turns})"
    return asked.within(most)
