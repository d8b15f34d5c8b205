"""Schedules of plan notes, with a clock the test controls: due when their time comes, caught up once after
a gap, never replayed, and a form that could mean two things is an error that says how to write it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultops.decide.schedules import slot_lines
from vaultops.scan.schedule import (
    REPLAY_MOST,
    ScheduleError,
    due,
    due_times,
    fire,
    next_run,
    parse_schedule,
)

T0 = datetime(2026, 5, 4, 6, 0, tzinfo=UTC)


def test_the_three_forms_are_read() -> None:
    cron = parse_schedule("0 7 * * 1-5", T0)
    assert (cron.kind, cron.cron) == ("cron", "0 7 * * 1-5")
    assert parse_schedule("every 2h", T0).every == 7200
    assert parse_schedule("every 90 minutes", T0).every == 5400
    once = parse_schedule("once 2026-05-04T09:00", T0)
    assert once.at == datetime(2026, 5, 4, 9, 0, tzinfo=UTC)  # a time without a zone is read in the vault's


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("30m", "write `every 30m` to repeat it, or `once <date>T<time>`"),
        ("2h", "ambiguous"),
        ("every 10s", "more often than once a minute"),
        ("once tomorrow", "e.g. `once 2026-05-04T09:00`"),
        ("61 7 * * *", "not a cron line vaultops can read"),
        ("at dawn", "not a cron line (five fields"),
        ("", "empty"),
    ],
)
def test_a_schedule_that_cannot_be_read_says_how_to_write_it(text: str, said: str) -> None:
    with pytest.raises(ScheduleError, match=None) as caught:
        parse_schedule(text, T0)
    assert said in str(caught.value)


def test_every_runs_at_once_then_after_its_interval() -> None:
    s = parse_schedule("every 2h", T0)
    assert due(s, None, T0, T0)
    ran = T0 + timedelta(minutes=1)
    assert not due(s, ran, T0, ran + timedelta(hours=1, minutes=59))
    assert due(s, ran, T0, ran + timedelta(hours=2))


def test_cron_waits_for_its_first_time_after_the_note_was_first_seen() -> None:
    s = parse_schedule("0 7 * * *", T0)
    assert not due(s, None, T0, T0 + timedelta(minutes=59))
    assert due(s, None, T0, T0 + timedelta(hours=1))


def test_a_week_of_missed_hourly_runs_is_caught_up_once() -> None:
    s = parse_schedule("0 * * * *", T0)
    now = T0 + timedelta(days=7, minutes=30)
    assert due(s, T0, T0, now)  # missed 168 runs: one run now
    assert not due(s, now, T0, now)  # ...and not again: the next is computed from that run
    assert next_run(s, now, T0) == (now + timedelta(hours=1)).replace(minute=0)


def test_once_runs_at_its_time_and_never_again() -> None:
    s = parse_schedule("once 2026-05-04T09:00", T0)
    assert not due(s, None, T0, T0 + timedelta(hours=2, minutes=59))
    assert due(s, None, T0, T0 + timedelta(hours=3))
    assert due(s, None, T0, T0 + timedelta(days=30))  # missed: caught up once
    assert next_run(s, T0 + timedelta(days=30), T0) is None


CRONS = ["*/5 * * * *", "0 * * * *", "0 7 * * 1-5", "30 2 1 * *", "15 9 * * 0"]


@given(
    st.sampled_from([*CRONS, "every 1m", "every 2h", "every 1d"]),
    st.integers(0, 60 * 24 * 60),  # minutes between the first sight and the last run
    st.integers(0, 60 * 24 * 60),  # minutes between the last run and now
)
def test_running_when_due_is_never_due_again_at_once(text: str, last_after: int, now_after: int) -> None:
    s = parse_schedule(text, T0)
    last = T0 + timedelta(minutes=last_after)
    now = last + timedelta(minutes=now_after)
    if due(s, last, T0, now):
        after = next_run(s, now, T0)  # the run happened now
        assert after is not None and after > now
        assert not due(s, now, T0, now)


_SCHEDULES = st.sampled_from(["every 1h", "every 7m", "*/5 * * * *", "0 7 * * 1-5", "once 2026-05-05T00:00"])


@given(
    _SCHEDULES,
    st.sampled_from(["once", "skip", "all"]),
    st.floats(0, 7200),
    st.integers(0, 60 * 24 * 30),
    st.one_of(st.none(), st.integers(0, 60 * 24 * 3)),
)
def test_every_due_time_is_run_or_said_missed_exactly_once(
    text: str, misfire: str, grace: float, minutes: int, last_minutes: int | None
) -> None:
    schedule = parse_schedule(text, T0)
    now = T0 + timedelta(minutes=minutes)
    last = None if last_minutes is None else min(now, T0 + timedelta(minutes=last_minutes))
    times, more = due_times(schedule, last, T0, now)
    assert times == sorted(set(times)) and all(t <= now for t in times)
    assert all(t > last for t in times) if last is not None else True
    firing = fire(times, more, now, misfire, grace)  # type: ignore[arg-type]
    if not times:
        assert firing is None
        return
    assert firing is not None
    accounted = [*firing.missed, *([firing.run] if firing.run is not None else [])]
    if misfire == "all":  # the oldest it keeps runs now, the ones after it on the next passes
        assert sorted(accounted) == times[: len(accounted)]
    else:
        assert sorted(accounted) == times, "each listed time is run or said, once"
    assert firing.more == more
    if firing.run is not None:
        assert firing.late == (now - firing.run).total_seconds()
        if misfire == "skip":
            assert firing.late <= grace, "skip never runs a time more than the grace late"
        if misfire == "once":
            assert firing.run == times[-1], "once runs the latest"
        if misfire == "all":
            assert len(times) - len(firing.missed) <= REPLAY_MOST
    else:
        assert misfire == "skip" and firing.why.endswith("(misfire: skip)")


def test_a_long_outage_of_a_frequent_schedule_is_counted_not_listed() -> None:
    schedule = parse_schedule("every 1m", T0)
    times, more = due_times(schedule, T0, T0, T0 + timedelta(days=30))
    assert len(times) == 1001 and more == 30 * 24 * 60 - 1001
    assert times[-1] == T0 + timedelta(days=30)
    lines = slot_lines(fire(times, more, T0 + timedelta(days=30)))  # type: ignore[arg-type]
    assert len(lines) == 11 and lines[0].startswith("- missed: 2026-05-04T06:01:00+00:00 — 43190 runs from")
    assert lines[-1] == "- scheduled: 2026-06-03T06:00:00+00:00"
