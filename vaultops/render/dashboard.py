"""The dashboard note (``_System/vaultops.md``): the whole fleet at a glance, in the vault.  Pure.

It is a function of what every machine can read, the notes and each machine's own note
(``render.machines``), and of the time only through coarse steps (an hour, a day, a machine going
quiet), so two machines render the same text and the note changes only when what it shows changes.
Times are shown as their lines wrote them, never converted to the rendering machine's zone.

Everything taken from a note is escaped for Markdown: a title cannot start a link, a tag, a comment
(``%%``) or a table cell, and every request is linked with ``[[note#heading|id]]``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from vaultops.base.obsidian import request_heading
from vaultops.base.redact import redact_lines
from vaultops.decide.answers import escalated_since, standing_answer
from vaultops.decide.halt import Halted
from vaultops.lines import DOT, line_time
from vaultops.model import Request, State
from vaultops.render.machines import MachineFacts, frontmatter_text, machine_rel, profile_summary, shown_time
from vaultops.render.results import heading_link
from vaultops.render.shown import title_shown

DASHBOARD_KIND = "vaultops dashboard"
SHOWN = 50  # lines a section lists before it says how many more there are
_WAITING = frozenset({State.OPEN, State.LOCKED, State.WAITING, State.APPROVED})
_FAILED = frozenset({State.ERROR, State.INTERRUPTED})
_FINISHED = frozenset({State.DONE, State.ERROR, State.DENIED, State.CANCELLED, State.INTERRUPTED})
Shown = Callable[[str], str]  # an ISO time as the dashboard shows it
_MARKDOWN = re.compile(r"([\\`*_\[\]<>#|~=$%^&])")  # what could start a link, tag, comment or cell


@dataclass(frozen=True, slots=True)
class Scheduled:
    file: str
    request_id: str
    schedule: str  # as the note wrote it
    when: str  # when it runs next, as a person reads it: "next 2026-05-04 09:00", "does not run again"


@dataclass(frozen=True)
class Fleet:
    now: datetime
    inbox: str
    machine_folder: str
    notes: Sequence[tuple[str, Sequence[Request]]] = ()
    scheduled: Sequence[Scheduled] = ()
    machines: Sequence[MachineFacts] = ()
    problems: Sequence[str] = field(default=())  # machine notes that could not be read
    halt: Halted | None = None  # the fleet is halted (``decide.halt``): said first
    kept: Sequence[str] = ()  # the person's halt lines, kept verbatim at the end of the frontmatter


def render_dashboard(fleet: Fleet) -> str:
    requests = [r for _, rs in fleet.notes for r in rs]
    when = partial(shown_time, zoned=zoned(fleet.machines))
    sections = [
        _escalations(requests, fleet.now, when),
        _active(requests, fleet.now, when),
        _finished(requests, fleet.now, when),
        _schedules(fleet.scheduled),
        _workers(fleet.machines, when),
        _machines(fleet, when),
        _spend(fleet),
    ]
    body = [
        "# vaultops",
        "",
        "> [!info] vaultops writes this note from the notes and from each machine's own note in "
        f"`{_code(fleet.machine_folder)}/`; edits here are replaced on its next pass, except a `halt` "
        "property: `halt: yes` stops every machine, `halt: no` lets them go on.",
    ]
    if fleet.halt is not None:
        body += ["", *_halted(fleet.halt)]
    for section in sections:
        body += ["", *section]
    if fleet.problems:
        body += ["", "## Problems", *(f"- {escape(p)}" for p in fleet.problems)]
    meta = frontmatter_text(properties(fleet, requests)) + "".join(f"{line}\n" for line in fleet.kept)
    return "---\n" + meta + "---\n" + "\n".join(redact_lines(body)) + "\n"


def properties(fleet: Fleet, requests: Sequence[Request]) -> dict[str, Any]:
    """The frontmatter: counts for Obsidian's properties view, Dataview and Bases; every key always there."""
    states = Counter(r.state for r in requests)
    since = _window_start(fleet.now)
    finished = [r for r in requests if r.state in _FINISHED and _after(_last_at(r), since)]
    spent, budget = _spend_totals(fleet)
    return {
        "vaultops": DASHBOARD_KIND,
        "escalations_open": sum(1 for r in requests if escalated_since(r) is not None),
        "reviews_open": sum(1 for r in requests if r.state is State.REVIEW and _waits(r) is not None),
        "waiting": sum(states[s] for s in _WAITING),
        "running": states[State.RUNNING],
        "finished_24h": len(finished),
        "failed_24h": sum(1 for r in finished if r.state in _FAILED),
        **{f"state_{s.value}": states[s] for s in State},
        "spend_today_usd": round(spent, 4),
        "budget_today_usd": round(budget, 4),
        "machines": len(fleet.machines),
        "machines_up": sum(1 for m in fleet.machines if is_up(m, fleet.now)),
    }


def _halted(halt: Halted) -> list[str]:
    return [
        f"> [!danger] {escape(halt.sentence())}",
        "> No machine claims, fires a schedule or starts a job; running jobs were stopped, their work kept "
        "(each is `interrupted`: `- retry: yes` under it runs it again). Set `halt: no` in this note's "
        "properties to resume.",
    ]


def zoned(machines: Sequence[MachineFacts]) -> bool:
    """Whether the machines live in different zones: then every time shown says its offset from UTC, or
    08:41 on one machine and 21:41 on another would read as hours apart."""
    return len({at.utcoffset() for m in machines if (at := line_time(m.last_pass)) is not None}) > 1


def is_up(machine: MachineFacts, now: datetime) -> bool:
    """Heard from within its own ``quiet_after``: judged from its note alone, so every machine agrees."""
    at = line_time(machine.last_pass)
    return at is not None and at >= now - timedelta(seconds=machine.quiet_after)


# --- sections --------------------------------------------------------------------------------------


def _escalations(requests: Sequence[Request], now: datetime, when: Shown) -> list[str]:
    waiting = sorted(((at, r) for r in requests if (at := _waits(r)) is not None), key=lambda pair: pair[0])
    lines = [f"## Waiting for you ({len(waiting)})"]
    if not waiting:
        return [*lines, "Nothing waits for your answer."]
    for at, r in waiting[:SHOWN]:
        last = r.statuses[-1]
        reason = escape(last.reason) or "escalated"
        lines.append(f"- {_request(r)}{DOT}{reason}{DOT}since {when(last.at)}{_age(at, now)}")
    return lines + _more(len(waiting))


def _active(requests: Sequence[Request], now: datetime, when: Shown) -> list[str]:
    active = [r for r in requests if r.state in _WAITING or r.state is State.RUNNING]
    lines = [f"## Waiting and running ({len(active)})"]
    if not active:
        return [*lines, "Nothing is queued or running."]
    for r in active[:SHOWN]:
        lock = r.lock
        where = f"on {escape(lock.host)}" if lock is not None else "not claimed yet"
        profile = r.fields.get("profile") or (r.outcomes[-1].route if r.outcomes else "")
        at = _last_at(r)
        since = f"since {when(r.statuses[-1].at)}{_age(at, now)}" if at is not None else ""
        # what it waits for, and until when: "usage limit of worker-code; resumes at …" (docs/quota.md)
        waits = escape(r.statuses[-1].reason) if r.state is State.WAITING and r.statuses else ""
        parts = [_request(r), r.state.value, waits, where, escape(profile) if profile else "", since]
        lines.append("- " + DOT.join(p for p in parts if p))
    return lines + _more(len(active))


def _finished(requests: Sequence[Request], now: datetime, when: Shown) -> list[str]:
    since = _window_start(now)
    done = sorted(
        ((at, r) for r in requests if r.state in _FINISHED and (at := _last_at(r)) and at >= since),
        key=lambda pair: pair[0],
        reverse=True,
    )
    lines = [f"## Finished in the last 24 h ({len(done)})"]
    if not done:
        return [*lines, "Nothing finished."]
    for _, r in done[:SHOWN]:
        last = r.statuses[-1]
        mark = "**failed**" if r.state in _FAILED else r.state.value
        said = last.reason or _outcome(r)
        reason = f"{DOT}{escape(said)}" if said else ""
        lines.append(f"- {_request(r)}{DOT}{mark}{reason}{DOT}{when(last.at)}")
    return lines + _more(len(done))


def _schedules(scheduled: Sequence[Scheduled]) -> list[str]:
    lines = [f"## Schedules ({len(scheduled)})"]
    if not scheduled:
        return [*lines, "No plan note has a schedule."]
    for s in scheduled[:SHOWN]:
        lines.append(f"- {_link(s.file, s.request_id, '')}{DOT}`{_code(s.schedule)}`{DOT}{escape(s.when)}")
    return lines + _more(len(scheduled))


def _workers(machines: Sequence[MachineFacts], when: Shown) -> list[str]:
    workers = [(m.host, w) for m in machines for w in m.workers]
    lines = [f"## Workers ({len(workers)})"]
    if not workers:
        return [*lines, "No worker is alive."]
    for host, w in workers[:SHOWN]:
        where = f"on {escape(host)}{DOT}since {when(w.started)}"
        lines.append(f"- {escape(w.name)}{DOT}{escape(w.state)}{DOT}{where}")
    return lines + _more(len(workers))


def _machines(fleet: Fleet, when: Shown) -> list[str]:
    up = sum(1 for m in fleet.machines if is_up(m, fleet.now))
    lines = [f"## Machines ({up} of {len(fleet.machines)} up)"]
    if not fleet.machines:
        return [*lines, "No machine has written its note yet."]
    for m in fleet.machines:
        state = "up" if is_up(m, fleet.now) else "**quiet**"
        link = f"[[{machine_rel(fleet.machine_folder, m.host).removesuffix('.md')}|{escape(m.host)}]]"
        lines.append(
            f"- {link}{DOT}{state}{DOT}last heartbeat {when(m.last_pass)}"
            f"{DOT}vaultops {escape(m.version)}{DOT}profiles: {escape(profile_summary(m.profiles))}"
        )
        lines += [f"  - problem: {escape(p)}" for p in m.problems]
    return lines


def _spend(fleet: Fleet) -> list[str]:
    spent, budget = _spend_totals(fleet)
    lines = ["## Spend today", f"${spent:.2f} of ${budget:.2f}"]
    for m in fleet.machines:
        if _today(m, fleet.now):
            lines.append(f"- {escape(m.host)}: ${m.spend_usd:.2f} of ${m.budget_usd:.2f}")
    return lines


# --- pieces ----------------------------------------------------------------------------------------


def escape(text: str) -> str:
    """Text from a note, on one line, with every Markdown mark escaped: it reads as itself."""
    return _MARKDOWN.sub(r"\\\1", " ".join(text.split()))


def _code(text: str) -> str:
    return " ".join(text.replace("`", "'").split())


def _request(r: Request) -> str:
    return _link(r.file, r.id, r.title)


def _link(file: str, request_id: str, title: str) -> str:
    """``[[note#heading|id]]`` and the title; a plan note is its whole note."""
    link = heading_link(file, request_heading(request_id, title), request_id)
    shown = escape(title_shown(title)) if title and title != request_id else ""  # redacted, then escaped
    return f"{link} {shown}".rstrip()


def _outcome(r: Request) -> str:
    """What a finished request's outcome line says: its type, route and time."""
    if not r.outcomes:
        return ""
    o = r.outcomes[-1]
    return ", ".join(part for part in (o.type, o.route, o.duration) if part)


def _more(count: int) -> list[str]:
    return [f"- … and {count - SHOWN} more"] if count > SHOWN else []


def _window_start(now: datetime) -> datetime:
    """24 hours back from the hour, in UTC: the list changes at most once an hour as it ages, and at the
    same moment for machines in zones half an hour apart."""
    return now.astimezone(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=24)


def _waits(r: Request) -> datetime | None:
    """Since when a request waits for the person's answer: an escalation, or a code job's review."""
    if r.state is State.REVIEW and r.statuses and standing_answer(r) is None:
        return line_time(r.statuses[-1].at)
    return escalated_since(r)


def _last_at(r: Request) -> datetime | None:
    return line_time(r.statuses[-1].at) if r.statuses else None


def _age(at: datetime | None, now: datetime) -> str:
    """Whole days only: an age that ticked by the minute would rewrite the note all day."""
    days = (now - at).days if at is not None else 0
    return f" ({days} d)" if days >= 1 else ""


def _after(at: datetime | None, since: datetime) -> bool:
    return at is not None and at >= since


def _today(machine: MachineFacts, now: datetime) -> bool:
    """The machine's spend is today's, in its own zone."""
    at = line_time(machine.last_pass)
    if at is None or at.tzinfo is None:
        return False
    return now.astimezone(at.tzinfo).strftime("%Y-%m-%d") == machine.day


def _spend_totals(fleet: Fleet) -> tuple[float, float]:
    today = [m for m in fleet.machines if _today(m, fleet.now)]
    return sum(m.spend_usd for m in today), sum(m.budget_usd for m in fleet.machines)
