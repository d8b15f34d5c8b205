"""Lease lines, as values: a lock's lease and claim round-trip, and locks from before leases still parse."""

from __future__ import annotations

from tests.support.clones import INBOX
from vaultops.scan.note import parse_note


def test_lease_lines_round_trip_and_old_locks_still_parse() -> None:
    text = (
        "## REQ-a\nDo it.\n- locked-by: a @ 2026-05-04T08:31:02+10:00 (vps1, claim 7f3a9c, lease 1320 s)\n"
        "- status: running @ 2026-05-04T08:31:02+10:00\n\n"
        "## REQ-b\nDo it.\n- locked-by: a @ 2026-05-04T08:31:02+10:00 (vps1, claim 7f3a9d)\n"
    )
    a, b = parse_note(INBOX, text.encode()).requests
    assert a.lock is not None and a.lock.lease == 1320 and a.lock.claim == "7f3a9c"
    assert b.lock is not None and b.lock.lease is None and b.lock.claim == "7f3a9d"
