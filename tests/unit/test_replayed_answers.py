"""A state.db from before the records of vaultops's own lines keeps them and records their use, with two
StateDBs open on it at once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vaultops.store.state import OwnLine, StateDB, _line_digest


def test_a_state_db_from_before_these_records_keeps_its_lines_and_records_their_use(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE own_lines (digest TEXT PRIMARY KEY, written REAL NOT NULL)")
    line = "- status: escalated @ 2026-05-04T09:00:00+10:00 — blocked"
    old.execute("INSERT INTO own_lines VALUES (?, 0)", (_line_digest("inbox.md", "REQ-x", line),))
    old.commit()
    old.close()
    state, other = StateDB(path), StateDB(path)  # a second process opens it too: nothing to add twice
    assert state.own_line("inbox.md", "REQ-x", line) == OwnLine(None, consumed=False)
    state.consume("inbox.md", "REQ-x", line)
    assert other.own_line("inbox.md", "REQ-x", line) == OwnLine(None, consumed=True)
    other.remember_lines("inbox.md", [("REQ-y", line, "abc")])
    assert state.own_line("inbox.md", "REQ-y", line) == OwnLine("abc", consumed=False)
    assert state.own_line("inbox.md", "REQ-z", line) is None
