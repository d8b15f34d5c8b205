"""A machine's own note beside the dashboard (``_System/vaultops/<host>.md``): what only that machine knows,
written only by it, so two machines never change one file.  Pure: facts in, text out, and back.

Its frontmatter is the record (another machine reads it); its body says the same for a person.  A
heartbeat rewrites it at most every ``[dashboard] heartbeat`` when nothing else changed, so an idle fleet
makes a bounded number of commits a day; what does change (health, spend, workers) goes in with the pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from vaultops.lines import DOT, line_time

MACHINE_KIND = "vaultops machine"
QUIET_MARGIN = 300.0
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class ProfileFact:
    name: str
    health: str  # online | degraded | offline | unchecked: the state alone, whose detail varies each check


@dataclass(frozen=True, slots=True)
class WorkerFact:
    name: str
    state: str
    started: str  # when it started, as an ISO time


@dataclass(frozen=True, slots=True)
class MachineFacts:
    host: str
    agent: str
    version: str
    last_pass: str  # ISO time with its offset
    day: str  # the machine's own date, YYYY-MM-DD, that spend_usd is for
    spend_usd: float = 0.0
    budget_usd: float = 0.0
    profiles: tuple[ProfileFact, ...] = ()
    workers: tuple[WorkerFact, ...] = ()
    # seconds between its heartbeats when nothing changes ([dashboard] heartbeat): every machine judges
    # from this one figure, the machine's own, whether it went quiet, so all draw the same dashboard
    heartbeat: float = 900.0
    # what the machine cannot do now, each one sentence (its remote cannot be reached, or refuses it)
    problems: tuple[str, ...] = ()
    # it can tell the person (a channel is set up there): the fleet's teller is one of these
    # (``engine.relay``)
    tells: bool = False

    @property
    def quiet_after(self) -> float:
        """Seconds after its last heartbeat that the machine counts as quiet: two missed heartbeats, and
        five minutes for a pass's own delay and the clocks' difference."""
        return 2 * self.heartbeat + QUIET_MARGIN

    def same_but_time(self, other: MachineFacts) -> bool:
        """Everything but the heartbeat's time is the same: only the heartbeat would change."""
        return replace(self, last_pass="") == replace(other, last_pass="")


def machine_rel(folder: str, host: str) -> str:
    return f"{folder}/{_UNSAFE_NAME.sub('-', host).strip('-.') or 'machine'}.md"


def heartbeat_due(old: MachineFacts | None, new: MachineFacts, every: float) -> bool:
    """The note is rewritten when a fact changed, or its heartbeat is ``every`` seconds old."""
    if old is None or not old.same_but_time(new):
        return True
    before, now = line_time(old.last_pass), line_time(new.last_pass)
    return before is None or now is None or now - before >= timedelta(seconds=every) or now < before


def render_machine(facts: MachineFacts) -> str:
    """The note: frontmatter for Dataview, Bases and the other machines, then a few lines for a person."""
    meta: dict[str, Any] = {
        "vaultops": MACHINE_KIND,
        "host": facts.host,
        "agent": facts.agent,
        "version": facts.version,
        "last_pass": facts.last_pass,
        "day": facts.day,
        "spend_today_usd": round(facts.spend_usd, 4),
        "budget_usd": round(facts.budget_usd, 4),
        "heartbeat_s": round(facts.heartbeat),
        "profiles": {p.name: p.health for p in facts.profiles},
        "workers": [{"name": w.name, "state": w.state, "started": w.started} for w in facts.workers],
    }
    if facts.problems:  # only while there are: a machine without problems writes the note it always did
        meta["problems"] = list(facts.problems)
    if facts.tells:
        meta["tells"] = True
    body = [
        f"# {facts.host}",
        "",
        f"vaultops writes this note on {facts.host} alone (its heartbeat); edits here are replaced.",
        "",
        f"- last heartbeat: {shown_time(facts.last_pass, zoned=True)}{DOT}vaultops {facts.version}"
        f"{DOT}agent {facts.agent}",
        f"- spend on {facts.day}: ${facts.spend_usd:.2f} of ${facts.budget_usd:.2f}",
        f"- profiles: {profile_summary(facts.profiles)}",
    ]
    body += [f"- worker {w.name}: {w.state} since {shown_time(w.started)}" for w in facts.workers]
    body += [f"- problem: {p}" for p in facts.problems]
    return "---\n" + frontmatter_text(meta) + "---\n" + "\n".join(body) + "\n"


def read_machine(rel: str, meta: dict[str, Any]) -> MachineFacts | str:
    """A machine note's facts from its frontmatter, or one sentence saying what is wrong with it."""
    if meta.get("vaultops") != MACHINE_KIND:
        return f"{rel}: not a machine note vaultops wrote; delete it, and the machine writes it again"
    try:
        keys = ("host", "agent", "version", "last_pass", "day")
        host, agent, version, last, day = (str(meta[k]) for k in keys)
        profiles = meta.get("profiles") or {}
        workers = meta.get("workers") or []
        problems = meta.get("problems") or []
        if not isinstance(profiles, dict) or not isinstance(workers, list) or not isinstance(problems, list):
            raise TypeError("profiles, workers or problems has the wrong shape")
        return MachineFacts(
            host=host,
            agent=agent,
            version=version,
            last_pass=last,
            day=day,
            spend_usd=float(meta.get("spend_today_usd") or 0.0),
            budget_usd=float(meta.get("budget_usd") or 0.0),
            profiles=tuple(ProfileFact(str(n), str(h)) for n, h in profiles.items()),
            workers=tuple(WorkerFact(str(w["name"]), str(w["state"]), str(w["started"])) for w in workers),
            heartbeat=max(0.0, float(meta.get("heartbeat_s") or 900.0)),
            problems=tuple(str(p) for p in problems),
            tells=meta.get("tells") is True,
        )
    except (KeyError, TypeError, ValueError) as exc:
        return f"{rel}: its frontmatter is not a machine's ({exc}); delete it, and its machine writes it anew"


def profile_summary(profiles: tuple[ProfileFact, ...]) -> str:
    if not profiles:
        return "none"
    return ", ".join(f"{p.name} {p.health}" for p in profiles)


def shown_time(iso: str, *, zoned: bool = False) -> str:
    """An ISO time as a person reads it, in the zone it was written in: every machine shows it alike.
    ``zoned``: with its offset from UTC, for a fleet whose machines live in different zones."""
    at = line_time(iso)
    if at is None:
        return iso
    shown = at.strftime("%Y-%m-%d %H:%M")
    offset = at.strftime("%z")  # +1100 (Python 3.11 has no %:z)
    return f"{shown} {offset[:3]}:{offset[3:5]}" if zoned and offset else shown


def frontmatter_text(meta: dict[str, Any]) -> str:
    """YAML for a note's frontmatter, its keys in the order given."""
    import yaml  # only a pass that writes a machine note or the dashboard needs it

    return str(yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False))
