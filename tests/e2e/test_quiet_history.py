"""A quiet history: a daemon makes one commit per claim and one per result, and the daily note and the
dashboard it draws wait for ``[git] batch`` seconds instead of following each result with a commit of their
own under the same subject (issue 29: 183 commits for about 35 requests)."""

from __future__ import annotations

from functools import partial
from itertools import pairwise
from pathlib import Path

from tests.support.clones import Fleet, person_push, request_block
from tests.support.daemon_helpers import Daemon
from tests.support.helpers import git
from tests.support.waiting import wait_for

FAST = "[daemon]\nreconcile = 1\nfetch = 0.5\ngrace = 10\n"


def done_on_remote(fleet: Fleet, rid: str) -> bool:
    found = fleet.remote_requests().get(rid)
    return found is not None and found.state.value == "done"


def vaultops_subjects(fleet: Fleet, since: str) -> list[str]:
    log = git(fleet.remote, "log", "--reverse", "--format=%s", f"{since}..{fleet.branch}").splitlines()
    return [s for s in log if s.startswith("vaultops:")]


def test_each_claim_and_result_is_one_commit_and_the_drawn_notes_follow_at_the_end(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 1, "# Inbox\n", extra=FAST)
    machine, phone = fleet.clones[0], fleet.person()
    start = git(fleet.remote, "rev-parse", fleet.branch).strip()
    daemon = Daemon(machine, fleet.env)
    ids = [f"REQ-q{i}" for i in range(3)]
    try:
        daemon.wait_ready()
        for rid in ids:
            person_push(phone, lambda t, rid=rid: t + request_block(rid, f"Summarise {rid}."))
            assert wait_for(partial(done_on_remote, fleet, rid)), daemon.explain()
        during = vaultops_subjects(fleet, start)
    finally:
        assert daemon.stop() == 0, daemon.errors()
    assert not [s for s in during if "dashboard" in s or "daily note" in s], during
    assert all(a != b for a, b in pairwise(during)), f"a subject twice in a row: {during}"
    assert len(during) <= 2 * len(ids), during  # at most one claim and one result each
    after = vaultops_subjects(fleet, start)[len(during) :]
    assert after == ["vaultops: daily note and dashboard updated"], after
    assert git(machine, "status", "--porcelain", "--untracked-files=no").strip() == ""


def test_without_a_batch_every_pass_commits_what_it_drew(tmp_path: Path) -> None:
    """The baseline the batch is measured against (benchmarks/commits.py): ``[git] batch = 0``."""
    fleet = Fleet(tmp_path, 1, "# Inbox\n", extra=FAST + "[git]\nbatch = 0\n")
    machine, phone = fleet.clones[0], fleet.person()
    start = git(fleet.remote, "rev-parse", fleet.branch).strip()
    daemon = Daemon(machine, fleet.env)
    try:
        daemon.wait_ready()
        person_push(phone, lambda t: t + request_block("REQ-one", "Summarise one."))
        assert wait_for(lambda: fleet.remote_requests()["REQ-one"].state.value == "done"), daemon.explain()
        assert wait_for(lambda: any("daily note" in s for s in vaultops_subjects(fleet, start)))
    finally:
        assert daemon.stop() == 0, daemon.errors()
