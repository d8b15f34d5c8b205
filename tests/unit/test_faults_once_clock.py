"""The clock leases are judged on (vaultops.base.steady) and how long a claim has been seen on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultops.base import steady
from vaultops.engine.decide import held_for
from vaultops.store.state import StateDB

REL, RID, KEY = "_System/COO-Inbox.md", "REQ-1", "claim:abcdef"


@pytest.fixture
def state(tmp_path: Path) -> StateDB:
    return StateDB(tmp_path / ".vaultops" / "state" / "state.db")


def test_a_claim_is_held_for_the_seconds_since_first_seen_in_this_boot(state: StateDB) -> None:
    assert held_for(state, REL, RID, KEY, steady.Reading("boot-1", 100.0)) == 0.0
    assert held_for(state, REL, RID, KEY, steady.Reading("boot-1", 160.5)) == 60.5


def test_after_a_reboot_the_count_starts_again_and_never_ends_a_lease_early(state: StateDB) -> None:
    held_for(state, REL, RID, KEY, steady.Reading("boot-1", 5000.0))
    # the new boot's clock starts near 0; compared with the old stamp it would say "never", or, with a
    # long-running old boot, "long ago": neither, it starts again
    assert held_for(state, REL, RID, KEY, steady.Reading("boot-2", 12.0)) == 0.0
    assert held_for(state, REL, RID, KEY, steady.Reading("boot-2", 40.0)) == 28.0


def test_a_wall_clock_stamp_from_before_this_clock_is_not_read(state: StateDB) -> None:
    state.first_seen(REL, RID, KEY, 1.0)  # what an older vaultops stamped: a wall-clock time
    assert held_for(state, REL, RID, KEY, steady.Reading("boot-1", 3600.0)) == 0.0


@given(st.lists(st.floats(0, 1e9), min_size=1, max_size=6))
def test_the_time_held_is_never_negative_nor_more_than_the_clock_moved(readings: list[float]) -> None:
    db = StateDB(Path(":memory:"))
    try:
        for seconds in readings:
            held = held_for(db, REL, RID, KEY, steady.Reading("b", seconds))
            assert 0.0 <= held <= max(0.0, seconds - readings[0])
    finally:
        db.close()


def test_the_clock_reads_this_boot_and_does_not_go_back() -> None:
    first, second = steady.now(), steady.now()
    assert first.boot == second.boot and second.seconds >= first.seconds
    if steady.BOOT_ID.exists():
        assert first.boot == steady.BOOT_ID.read_text().strip()
