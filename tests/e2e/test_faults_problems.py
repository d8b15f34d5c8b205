"""A machine's own problem (its remote refuses its pushes, or cannot be reached) reaches the person
beyond the log: on the dashboard and its machine note, and through the notifiers, once when it begins
and once when it is over.

Real git (a bare remote with a real pre-receive hook), real ticks, a real HTTP sink for the notifier.
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_faults_git_remote import REASON, refuse_pushes
from tests.support.clones import Fleet, request_block
from tests.support.fake_servers import JsonSink

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
        over = [m for m in sink.messages() if "is over" in m]
        assert len(over) == 1, sink.messages()
        assert "problem:" not in (clone / MACHINE).read_text()
        assert "problem:" not in (clone / DASHBOARD).read_text()
