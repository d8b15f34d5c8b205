"""Claims across machines on the twin: the remote's compare-and-swap decides between two machines racing for
one request, so it runs once, whichever wins.  Whole passes of the real driver on ``engine.memory``'s twins
(``tests/support/twin.py``); the same race on real git stays in tests/e2e/test_sync.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.clones import request_block, statuses
from tests.support.twin import TwinFleet, no_processes  # noqa: F401
from vaultops.base import faults

pytestmark = pytest.mark.usefixtures("no_processes")


@pytest.fixture
def hooks() -> Iterator[None]:
    yield
    for point in ("claim.before_push", "result.before_push"):
        faults.on(point, None)


@pytest.mark.usefixtures("hooks")
def test_two_machines_racing_for_one_request_run_it_once(tmp_path: Path) -> None:
    """Machine 1 plans its claim on the tip both machines read; machine 0 claims, runs and records the
    request in between.  Machine 1's push is behind: it follows the remote and claims nothing."""
    fleet = TwinFleet(tmp_path, 2, "# Inbox\n" + request_block("REQ-sum", "Summarise the week."))

    def other_machine_first() -> None:
        faults.on("claim.before_push", None)
        fleet.tick(0)

    faults.on("claim.before_push", other_machine_first)
    fleet.tick(1)
    assert fleet.runs() == {"REQ-sum": 1}
    assert [j.request_id for j in fleet[0].runner.jobs] == ["REQ-sum"], "the first to push runs it"
    said = statuses(fleet.remote_text(), "REQ-sum")
    assert [s.split()[0] for s in said] == ["running", "done"], said
    fleet.tick(1)
    fleet.tick(0)
    assert fleet.runs() == {"REQ-sum": 1}
    assert statuses(fleet[1].text(), "REQ-sum") == said, "machine 1 follows the remote"


def test_many_requests_over_two_machines_each_run_once(tmp_path: Path) -> None:
    blocks = "".join(request_block(f"REQ-{n}", f"Summarise note {n}.") for n in range(6))
    fleet = TwinFleet(tmp_path, 2, f"# Inbox\n{blocks}")
    for _ in range(3):
        fleet.tick(0)
        fleet.tick(1)
    assert fleet.runs() == {f"REQ-{n}": 1 for n in range(6)}
    assert all(r.state.value == "done" for r in fleet.remote_requests().values())
