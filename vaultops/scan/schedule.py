"""When a scheduled plan note runs next.  Pure: the caller passes every time, the clock included.

Three forms, as a plan note's ``schedule:`` says it: a cron expression (``"0 7 * * 1-5"``), ``every 2h``
(``s``, ``m``, ``h``, ``d``, or words), and ``once 2026-05-04T09:00``.  The next run is computed from the last
run the note records (its last ``### Run`` block), never from memory, so it survives restarts and moves
between machines with the note.  A run missed while nothing was running is caught up once: the next time is
computed from that catch-up run, so a week of missed hourly runs is one run, not 168.

``misfire:`` says what happens to runs whose time passed while nothing ran (``fire``): ``once``
(the default) runs the latest and skips the rest, ``skip`` runs only a time less than ``grace`` ago,
and ``all`` runs each in turn, the last ``REPLAY_MOST`` at most.  Every time that is not run is
returned, so that the note can say so: nothing is skipped in silence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from croniter import CroniterBadCronError, CroniterBadDateError, croniter

from vaultops.model import Misfire

_EVERY = re.compile(
    r"every\s+(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?)", re.I
)
_ONCE = re.compile(r"once\s+(\S.*)", re.I)
_BARE_DURATION = re.compile(r"\d+(?:\.\d+)?\s*[smhd]\w*", re.I)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MIN_EVERY = 60.0  # seconds: anything more often is a mistake in a note, not a schedule
MAX_EVERY = 366 * 86400.0  # and anything rarer is a date, not a repetition
DEFAULT_GRACE = 600.0  # seconds a run may start after its time and still count as on time
REPLAY_MOST = 10  # `misfire: all` replays at most this many missed runs
_COUNTED = 1000  # missed times listed one by one; beyond this they are only counted


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
        if seconds > MAX_EVERY:
            raise ScheduleError(f"schedule {said!r} is less often than once a year; use `once …` instead")
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
            croniter(said, tz).get_next(datetime)  # a day no month has (30 Feb) fails only when asked
        except (CroniterBadCronError, CroniterBadDateError, ValueError, KeyError, OverflowError) as exc:
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


def due_times(
    schedule: Schedule, last: datetime | None, since: datetime, now: datetime
) -> tuple[list[datetime], int]:
    """The times the note was due at after ``last`` (never run: from ``since``) up to ``now``, oldest
    first, and how many more fell between the listed ones and the last (a long outage of a frequent
    schedule is counted, not listed)."""
    first = next_run(schedule, last, since)
    if first is None or first > now:
        return [], 0
    if schedule.kind == "once":
        return [first], 0
    if schedule.kind == "every":
        step = timedelta(seconds=schedule.every)
        total = int((now - first) / step) + 1
        shown = [first + i * step for i in range(min(total, _COUNTED))]
        if total > _COUNTED:
            shown.append(first + (total - 1) * step)
        return shown, max(0, total - len(shown))
    times = [first]
    it = croniter(schedule.cron, first)
    while len(times) < _COUNTED and (t := it.get_next(datetime)) <= now:
        times.append(t)
    if len(times) < _COUNTED:
        return times, 0
    latest = croniter(schedule.cron, now + timedelta(microseconds=1)).get_prev(datetime)
    if latest <= times[-1]:
        return times, 0
    return [*times, latest], 1  # at least one more between them; how many is not worth counting


@dataclass(frozen=True, slots=True)
class Firing:
    """What a scheduled note does at a pass: the time it runs for now (None: none), and the times it
    skips, with why."""

    run: datetime | None
    late: float  # seconds after its time that the run starts
    missed: tuple[datetime, ...] = ()
    more: int = 0  # skipped times besides ``missed``
    why: str = ""


def fire(
    times: list[datetime], more: int, now: datetime, misfire: Misfire = "once", grace: float = DEFAULT_GRACE
) -> Firing | None:
    """What to do with the due ``times`` (from ``due_times``) under the note's ``misfire`` policy."""
    if not times:
        return None
    latest = times[-1]
    if misfire == "all":
        if len(times) + more <= REPLAY_MOST:
            return Firing(times[0], _late(times[0], now))
        keep = times[-REPLAY_MOST:]
        why = f"more than {REPLAY_MOST} missed runs to replay (misfire: all runs the last {REPLAY_MOST})"
        return Firing(keep[0], _late(keep[0], now), tuple(times[:-REPLAY_MOST]), more, why)
    if misfire == "skip" and _late(latest, now) > grace:
        why = f"more than {_span(grace)} late (misfire: skip)"
        return Firing(None, 0.0, tuple(times), more, why)
    why = "one run catches up on it (misfire: once)" if misfire == "once" else "a later time runs instead"
    return Firing(latest, _late(latest, now), tuple(times[:-1]), more, why)


def _late(when: datetime, now: datetime) -> float:
    return max(0.0, (now - when).total_seconds())


def _span(seconds: float) -> str:
    """``2 h 13 min``, ``45 s``: how late, as a person reads it."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    parts = [f"{n} {unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "min")) if n]
    return " ".join(parts[:2]) if parts else f"{secs} s"


def late_text(seconds: float) -> str:
    """How late a run starts, or "" when it is on time (within a minute: a pass's own delay)."""
    return _span(seconds) if seconds >= 60 else ""
