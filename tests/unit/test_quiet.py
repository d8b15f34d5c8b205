"""Once per incident (vaultops.daemon.quiet): a warning that only changes a duration is the same incident;
one about another request is another."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vaultops.daemon.quiet import QUIET_FOR, incident_of, to_say
from vaultops.notify.outbox import RETRY_MAX

NOT_DELIVERED = "notify: esc#REQ-2026-05-04-0900-merge not delivered, retried in {} s: connection refused"


@given(st.integers(1, 10**6), st.integers(1, 10**6))
def test_a_warning_whose_only_change_is_a_duration_is_one_incident(a: int, b: int) -> None:
    assert incident_of(NOT_DELIVERED.format(a)) == incident_of(NOT_DELIVERED.format(b))


def test_warnings_about_other_requests_or_remotes_stay_apart() -> None:
    assert incident_of("REQ-2026-05-04-0900 is not committed yet") != incident_of(
        "REQ-2026-05-04-0901 is not committed yet"
    )
    assert incident_of("REQ-10 sleeps") != incident_of("REQ-11 sleeps")
    assert incident_of("origin cannot be reached (it did not answer within 30 s)") == incident_of(
        "origin cannot be reached (it did not answer within 2.5s)"
    )


def test_said_once_while_it_lasts_and_again_once_it_came_back() -> None:
    said: dict[str, float] = {}
    waits = [10, 20, 40, 80, 160, 320, 600, 600, 600]  # the notifier's tries of one message, as they grow
    now, logged = 0.0, []
    for wait in waits:
        logged += to_say([NOT_DELIVERED.format(wait)], said, now)
        now += wait
    assert logged == [NOT_DELIVERED.format(10)], logged
    assert QUIET_FOR > RETRY_MAX
    now += QUIET_FOR  # quiet that long: over; when it comes back it is a new incident
    assert to_say(["x"], said, now) == ["x"]
    assert to_say([NOT_DELIVERED.format(10)], said, now) == [NOT_DELIVERED.format(10)]
