"""A time read from a note's line is always aware, whatever was typed: the pass compares it with its own
clock (reminders, leases, answers), and a naive one raised TypeError there, stopping every pass before it
committed (found by the engine's twin: tests/unit/test_twin_forged_answers.py)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from vaultops.lines import line_time

WHEN = st.datetimes(min_value=datetime(1971, 1, 2), max_value=datetime(2200, 1, 1))
OFFSET = st.none() | st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))


@given(WHEN, OFFSET)
def test_a_line_time_is_aware_and_comparable_with_the_clock(when: datetime, offset: timezone | None) -> None:
    typed = (when if offset is None else when.replace(tzinfo=offset)).isoformat(timespec="minutes")
    read = line_time(typed)
    assert read is not None and read.tzinfo is not None
    assert isinstance(read < datetime.now().astimezone(), bool)  # never raises
    if offset is not None:  # an offset written is kept exactly
        assert read == when.replace(tzinfo=offset, second=0, microsecond=0)
    else:  # none written: this machine's local time
        assert read.replace(tzinfo=None) == when.replace(second=0, microsecond=0)


def test_a_line_that_is_no_time_is_none() -> None:
    assert line_time("yesterday") is None
