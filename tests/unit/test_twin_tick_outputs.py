"""What a pass writes when it cannot follow the vault's own settings, on the twin: a daily-note format
vaultops cannot follow is said once as a warning and never guessed.  Whole passes of the real driver on
``engine.memory``'s twins (``tests/support/twin.py``).  tests/e2e/test_tick_outputs.py keeps what needs a
real agent process (long output cut and kept whole in its log, secrets redacted from its output, a hung
job killed, a missing executor) or no git at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.twin import TwinFleet, no_processes, said  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_processes")

ONE = "# Inbox\n\n## REQ-job\n- type: research\n- ready: yes\nSummarise the notes.\n"


def test_a_daily_note_format_vaultops_cannot_follow_is_not_guessed(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_tick_outputs.py's test of the same name."""
    fleet = TwinFleet(tmp_path, 1, ONE)
    machine = fleet[0]
    machine.shared = False
    machine.save(".obsidian/daily-notes.json", json.dumps({"folder": "Daily", "format": "YYYY LT"}))
    report = machine.tick()
    assert [w for w in report.warnings if "daily note not written" in w and "LT" in w] != [], report.warnings
    assert [rel for rel in machine.tree if rel.startswith("Daily/") and rel.endswith(".md")] == []
    assert "REQ-job: done" in "\n".join(said(report))
    assert fleet.runs() == {"REQ-job": 1}
