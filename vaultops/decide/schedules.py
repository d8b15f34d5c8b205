"""When a scheduled plan note runs, which of its times it skips, and when it stops trying.  Pure.

The time comes from the note itself (its last ``- scheduled:``, ``- missed:`` or ``### Run`` line), so it
survives restarts and moves between machines with the note.  A run says the time it is for, and how late
it started; every time that does not run gets a ``- missed:`` line (vaultops.scan.schedule.fire), so
nothing is skipped in silence.  A note whose runs failed ``[limits] pause_after`` times in a row is
paused until the person writes ``- retry: yes``.
"""

from __future__ import annotations

from datetime import datetime

from vaultops import lines as fmt
from vaultops.config import Config
from vaultops.model import MISFIRES, Misfire, Request, State
from vaultops.scan.note import ParsedNote
from vaultops.scan.plan import last_run
from vaultops.scan.schedule import (
    DEFAULT_GRACE,
    Firing,
    ScheduleError,
    due_times,
    fire,
    late_text,
    parse_schedule,
)

# A scheduled plan note runs again from these when its time comes.
SCHEDULABLE = frozenset({State.OPEN, State.WAITING, State.DONE, State.ERROR, State.INTERRUPTED})
MISSED_SAID = 10  # `- missed:` lines written one by one at a pass; the rest in one line


def firing_of(note: ParsedNote, request: Request, since: float, now: datetime) -> Firing | None:
    """What the scheduled ``request`` does now, or None while its time has not come.  ``since``: when
    this clone first saw the schedule (the first time of a note never run).  An escalated or running
    note waits whatever its schedule says."""
    if request.state not in SCHEDULABLE:
        return None
    try:
        schedule = parse_schedule(request.fields["schedule"], now)
    except ScheduleError:
        return None  # said as the note's problem
    first_seen = datetime.fromtimestamp(since, now.tzinfo)
    try:
        times, more = due_times(schedule, last_run(note.lines, now), first_seen, now)
    except (ValueError, OverflowError, ArithmeticError):  # a date no calendar has (30 Feb), or too far
        return None  # said as the note's problem (vaultops.scan.schedule.parse_schedule checks it first)
    grace = float(request.fields.get("grace") or DEFAULT_GRACE)
    return fire(times, more, now, _misfire(request.fields.get("misfire", "")), grace)


def _misfire(said: str) -> Misfire:
    return next((m for m in MISFIRES if m == said), "once")


def slot_lines(firing: Firing) -> list[str]:
    """The lines a pass writes for ``firing``: the times it skips, then the time its run is for."""
    out = []
    missed = list(firing.missed)
    if len(missed) >= MISSED_SAID and len(missed) + firing.more > MISSED_SAID:
        rest = len(missed) - (MISSED_SAID - 1) + firing.more
        first, last = missed[0], missed[-MISSED_SAID]
        why = f"{rest} runs from then to {fmt_time(last)} were missed: {firing.why}"
        out.append(fmt.missed_line(fmt_time(first), why))
        missed = missed[-(MISSED_SAID - 1) :]
    out += [fmt.missed_line(fmt_time(when), firing.why) for when in missed]
    if firing.run is not None:
        out.append(fmt.scheduled_line(fmt_time(firing.run), late_text(firing.late)))
    return out


def fmt_time(when: datetime) -> str:
    return when.isoformat(timespec="seconds")


def failed_in_a_row(request: Request) -> int:
    """How many of the note's last runs failed, one after another, since it last went well or the
    person last wrote ``- retry: yes``."""
    resumed = max((a.line for a in request.answers if a.key == "retry" and a.value == "yes"), default=-1)
    failed = 0
    for status in reversed(request.statuses):
        if status.line < resumed or status.state is State.DONE:
            break
        failed += status.state is State.ERROR
    return failed


def paused(request: Request, config: Config) -> bool:
    """A scheduled note stops after ``[limits] pause_after`` failed runs in a row, until ``- retry: yes``."""
    most = config.limits.pause_after
    return bool(most) and "schedule" in request.fields and failed_in_a_row(request) >= most


def pausing(request: Request, config: Config) -> str:
    """What the status line of a failed scheduled run adds when that failure pauses the note ("" when it
    does not)."""
    most = config.limits.pause_after
    if not most or "schedule" not in request.fields or failed_in_a_row(request) + 1 < most:
        return ""
    return (
        f"schedule paused: {most} runs failed in a row; fix the cause, then write `- retry: yes` "
        "to resume"
    )
