"""``scripts/demo``, one of the README's two commands, runs the main job end to end and exits 0 (a config
rule once stopped its daemon from starting, and no test noticed)."""

from __future__ import annotations

import subprocess

from tests.support.paths import REPO


def test_the_demo_claims_and_finishes_its_request() -> None:
    proc = subprocess.run([str(REPO / "scripts" / "demo")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "claimed " in proc.stdout and "- status: done" in proc.stdout, proc.stdout[-2000:]
