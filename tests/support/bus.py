"""A bus over a state.db file, with a clock the test moves."""

from __future__ import annotations

from pathlib import Path

from vaultops.bus import Bus
from vaultops.store.state import StateDB


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def open_bus(path: Path, clock: Clock | None = None) -> tuple[StateDB, Bus]:
    state = StateDB(path)
    return state, Bus(state, clock or Clock())
