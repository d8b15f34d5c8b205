"""The kill switch stops this machine's long-lived workers too (``worker:`` plan notes): they are agents
that outlive the daemon, so a halt stops each one, its folder kept; its plan note says it ended once the
halt is lifted, and nothing starts it again by itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.e2e.test_plan_workers import QUEUE, last_status, plan, run_tick, worker_vault
from tests.support.halt import set_halt
from tests.support.worker_helpers import listed


def test_a_halt_stops_the_machines_workers_and_the_resume_starts_none(make: Callable[..., Path]) -> None:
    vault = worker_vault(make, {"tabs.md": plan("worker: yes\n")})
    run_tick(vault)
    assert listed(vault)["tabs"]["state"] == "running"
    set_halt(vault, "halt: yes")
    run_tick(vault)
    assert listed(vault)["tabs"]["state"] != "running"
    set_halt(vault, "halt: no")
    run_tick(vault)
    run_tick(vault)
    assert listed(vault)["tabs"]["state"] != "running"  # not started again by itself
    status = last_status(vault / QUEUE / "tabs.md")
    assert status.startswith("- status: error") and "`- retry: yes` starts it again" in status, status
