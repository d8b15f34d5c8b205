"""A machine's own problem (its remote refuses its pushes, or cannot be reached) reaches the person
beyond the log: on the dashboard and its machine note, and through the notifiers, once when it begins
and once when it is over.

Real git (a bare remote with a real pre-receive hook), real ticks, a real HTTP sink for the notifier.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_faults_git_remote import REASON, refuse_pushes
from tests.support.clones import Fleet, request_block
from tests.support.fake_servers import JsonSink
from tests.support.helpers import make_vault, vaultops

DASHBOARD = "_System/vaultops.md"
MACHINE = "_System/vaultops/host0.md"


def test_a_refused_push_is_on_the_dashboard_and_told_once_then_its_end_once(tmp_path: Path) -> None:
    with JsonSink() as sink:
        notify = f'[notify]\nurls = ["{sink.url()}"]\n'
        fleet = Fleet(tmp_path, 1, "# Inbox\n" + request_block("REQ-a", "Summarise a."), extra=notify)
        clone = fleet.clones[0]
        hook = refuse_pushes(fleet.remote)

        first = fleet.tick(0)
        assert first.returncode == 69, first.stdout + first.stderr
        told = [m for m in sink.messages() if "needs you" in m or REASON in m]
        assert len(told) == 1 and REASON in told[0], sink.messages()
        assert "- problem: origin refused the push" in (clone / MACHINE).read_text()
        dashboard = (clone / DASHBOARD).read_text()
        assert "  - problem: origin refused the push" in dashboard and REASON in dashboard

        fleet.tick(0)  # the same incident: not told again
        assert len([m for m in sink.messages() if REASON in m]) == 1, sink.messages()

        hook.unlink()
        fixed = fleet.tick(0)
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        over = [m for m in sink.messages() if "remote problem since" in m and "is over" in m]
        assert len(over) == 1, sink.messages()
        assert "problem:" not in (clone / MACHINE).read_text()
        assert "problem:" not in (clone / DASHBOARD).read_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root (CI is root)")
def test_a_nearly_full_state_disk_is_said_before_writes_fail_and_its_end_too(tmp_path: Path) -> None:
    from tests.e2e.test_faults_disk_mounts import small_disk

    with JsonSink() as sink:
        vault = make_vault(tmp_path / "v")
        with (vault / ".vaultops" / "local.toml").open("a") as fh:
            fh.write(f'\n[notify]\nurls = ["{sink.url()}"]\n')
        state = vault / ".vaultops" / "state"
        with small_disk(state, "40m"):  # room to work, but under the 50 MB vaultops wants to have spare
            first = vaultops("--vault", str(vault), "tick", "--no-wait")
            assert first.returncode == 0, first.stderr
            told = [m for m in sink.messages() if "less than 50.0 MB free" in m]
            assert len(told) == 1, sink.messages()
            machine = (vault / "_System" / "vaultops").glob("*.md")
            assert any("- problem: the disk holding" in p.read_text() for p in machine)
            assert "  - problem: the disk holding" in (vault / DASHBOARD).read_text()
            assert vaultops("--vault", str(vault), "tick", "--no-wait").returncode == 0
            assert len([m for m in sink.messages() if "less than 50.0 MB free" in m]) == 1
            status = vaultops("--vault", str(vault), "status")
            assert "less than 50.0 MB free" in status.stdout + status.stderr
            subprocess.run(["mount", "-o", "remount,size=200m", str(state)], check=True)
            assert vaultops("--vault", str(vault), "tick", "--no-wait").returncode == 0
            over = [m for m in sink.messages() if "disk problem since" in m and "is over" in m]
            assert len(over) == 1, sink.messages()
            assert "problem:" not in (vault / DASHBOARD).read_text()
