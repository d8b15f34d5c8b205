"""When a scheduled plan note runs next.  Pure: the caller passes every time, the clock included.

Three forms, as a plan note's ``schedule:`` says it: a cron expression (``"0 7 * * 1-5"``), ``every 2h``
(``s``, ``m``, ``h``, ``d``, or words), and ``once 2026-05-04T09:00``.  The next run is computed from the last
run the note records (its last ``### Run`` block), never from memory, so it survives restarts and moves
between machines with the note.  A run missed while nothing was running is caught up once: the next time is
computed from that catch-up run, so a week of missed hourly runs is one run, not 168.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from croniter import CroniterBadCronError, croniter

_EVERY = re.compile(
    r"every\s+(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?)", re.I
)
_ONCE = re.compile(r"once\s+(\S.*)", re.I)
_BARE_DURATION = re.compile(r"\d+(?:\.\d+)?\s*[smhd]\w*", re.I)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MIN_EVERY = 60.0  # seconds: anything more often is a mistake in a note, not a schedule


@dataclass(frozen=True, slots=True)
class Schedule:
    kind: str  # "cron" | "every" | "once"
    text: str  # as the note wrote it
    cron: str = ""
    every: float = 0.0  # seconds
    at: datetime | None = None  # for "once"


class ScheduleError(ValueError):
    """A schedule that cannot be read: the message is one sentence saying how to write it."""


def parse_schedule(text: str, tz: datetime) -> Schedule:
    """``text`` as a Schedule; ``tz`` is any aware datetime whose zone a time without one is read in."""
    said = " ".join(str(text).split())
    if not said:
        raise ScheduleError("the schedule is empty; write a cron line, `every 2h` or `once 2026-05-04T09:00`")
    if m := _EVERY.fullmatch(said):
        seconds = float(m[1]) * _UNIT_SECONDS[m[2][0].lower()]
        if seconds < MIN_EVERY:
            raise ScheduleError(
                f"schedule {said!r} is more often than once a minute; use at least `every 1m`"
            )
        return Schedule("every", said, every=seconds)
    if m := _ONCE.fullmatch(said):
        try:
            at = datetime.fromisoformat(m[1].strip())
        except ValueError:
            raise ScheduleError(
                f"schedule {said!r} has no time vaultops can read; write e.g. `once 2026-05-04T09:00`"
            ) from None
        return Schedule("once", said, at=at if at.tzinfo else at.replace(tzinfo=tz.tzinfo))
    if _BARE_DURATION.fullmatch(said):
        raise ScheduleError(
            f"schedule {said!r} is ambiguous; write `every {said}` to repeat it, or `once <date>T<time>` "
            "to run it once"
        )
    if len(said.split()) == 5:
        try:
            croniter(said, tz)
        except (CroniterBadCronError, ValueError, KeyError) as exc:
            raise ScheduleError(f"schedule {said!r} is not a cron line vaultops can read ({exc})") from None
        return Schedule("cron", said, cron=said)
    raise ScheduleError(
        f'schedule {said!r} is not a cron line (five fields, e.g. "0 7 * * 1-5"), `every 2h` or '
        "`once 2026-05-04T09:00`"
    )


def next_run(schedule: Schedule, last_run: datetime | None, since: datetime) -> datetime | None:
    """When the note runs next: after its last run, or, never run, from ``since`` (when it was first
    seen).  None when it never runs again (a ``once`` that ran)."""
    if schedule.kind == "once":
        return schedule.at if last_run is None else None
    if schedule.kind == "every":
        return since if last_run is None else last_run + timedelta(seconds=schedule.every)
    base = last_run if last_run is not None else since
    return croniter(schedule.cron, base).get_next(datetime)


def due(schedule: Schedule, last_run: datetime | None, since: datetime, now: datetime) -> bool:
    """Whether the note should run now.  One run covers every time missed before ``now``."""
    when = next_run(schedule, last_run, since)
    return when is not None and when <= now
