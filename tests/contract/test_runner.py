"""The runner's contract: one call, one run of the agent, recorded in the ledger under its claim (so that
the clone knows the claim and what it cost).  The dispatcher running ``fixtures/bin/fake-agent``, and the
twin."""

from __future__ import annotations

from datetime import datetime

from tests.contract.conftest import RunnerSide
from tests.support.helpers import INBOX
from vaultops.model import State
from vaultops.run.jobs import Job


def job(rid: str, claim: str) -> Job:
    return Job(INBOX, rid, "Summarise", "Summarise the week.", "research", claim, "worker-code")


def test_each_claim_runs_once(runners: RunnerSide) -> None:
    started = datetime.now().astimezone()
    one = runners.runner.run(job("REQ-a", "aaaaaa"), started)
    assert one.result.state is State.DONE and one.result.profile == "worker-code"
    assert runners.runs() == ["REQ-a"]
    assert runners.ledger.knows_claim("aaaaaa") and not runners.ledger.knows_claim("bbbbbb")
    last = runners.ledger.last_heavy_run(INBOX, "REQ-a")
    assert last is not None and last["claim"] == "aaaaaa" and last["outcome"] == "done"
    runners.runner.run(job("REQ-b", "bbbbbb"), started)
    assert runners.runs() == ["REQ-a", "REQ-b"]
    assert runners.ledger.unfinished_runs("host0") == []
