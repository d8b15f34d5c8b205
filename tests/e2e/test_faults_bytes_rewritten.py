"""A remote whose history is rewritten behind a claim (issue 25, "At most once"): the person force-pushes
the branch back to before a claim.  A machine that saw the claim or made it puts vaultops's lines back
(never the person's dropped commits), nothing runs twice, nobody is told "taken over", and the warning
says the remote's history was rewritten.  Real clones of a bare remote, real `vaultops tick` processes,
the force push made at an exact moment by a fault point (a handshake, no sleep)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.clones import INBOX, Fleet, request_block
from tests.support.helpers import git
from vaultops.base import faults
from vaultops.engine.tick import tick
from vaultops.vault import Vault


def inbox_of(n: int) -> str:
    return "# Inbox\n" + "".join(request_block(f"REQ-{i:03d}", f"Summarise note {i}.") for i in range(n))


def force_push_back(fleet: Fleet, to: str, *, typed: str = "") -> None:
    """The person resets the branch to ``to`` (before the claim), maybe adds a commit, and force-pushes."""
    person = fleet.person()
    git(person, "fetch", "-q")
    git(person, "reset", "-q", "--hard", to)
    if typed:
        (person / INBOX).write_text((person / INBOX).read_text() + typed)
        (person / "Notes").mkdir(exist_ok=True)
        (person / "Notes" / "dropped.md").unlink(missing_ok=True)
        git(person, "add", "-A")
        git(person, "commit", "-qm", "person: after the rewrite")
    git(person, "push", "-q", "--force", "origin", f"HEAD:{fleet.branch}")


@pytest.fixture
def agent_log() -> Iterator[None]:
    yield
    os.environ.pop("FAKE_AGENT_LOG", None)
    faults.on("claim.after_push", None)


def start_of(fleet: Fleet) -> str:
    return git(fleet.remote, "rev-parse", fleet.branch).strip()


def assert_ran_once_and_said_rewritten(fleet: Fleet, said: str) -> None:
    final = fleet.remote_inbox()
    assert fleet.runs()["REQ-000"] == 1, fleet.runs()
    assert fleet.remote_requests()["REQ-000"].state.value == "done", final
    assert final.count("## REQ-000") == 1 and "Late result" not in final, final
    assert final.count("### Result") == sum(fleet.runs().values()), final
    assert "taken over" not in said, said
    assert "history was rewritten" in said, said


def test_a_machine_that_saw_the_claim_puts_it_back_and_the_other_is_not_told_taken_over(
    tmp_path: Path,
) -> None:
    fleet = Fleet(tmp_path, 2, inbox_of(1))
    start = start_of(fleet)
    assert fleet.tick(0).returncode == 0  # machine 0 claims and runs REQ-000
    assert fleet.tick(1).returncode == 0  # machine 1 sees it done
    force_push_back(fleet, start, typed=request_block("REQ-new", "Summarise the new note."))
    first = fleet.tick(1)
    second = fleet.tick(0)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert fleet.runs() == {"REQ-000": 1, "REQ-new": 1}
    assert_ran_once_and_said_rewritten(fleet, first.stderr)
    assert "taken over" not in second.stderr, second.stderr


def test_the_machine_that_ran_it_puts_its_lines_back_before_another_claims_it(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 2, inbox_of(1))
    start = start_of(fleet)
    assert fleet.tick(0).returncode == 0
    force_push_back(fleet, start)  # a pure roll-back: the remote is an ancestor of machine 0's clone
    first = fleet.tick(0)
    second = fleet.tick(1)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert fleet.runs() == {"REQ-000": 1}
    assert_ran_once_and_said_rewritten(fleet, first.stderr)


def test_the_persons_dropped_commits_are_not_pushed_back(tmp_path: Path) -> None:
    """The person rewrote the history to drop a commit of theirs: vaultops puts back its own lines only."""
    fleet = Fleet(tmp_path, 1, inbox_of(1))
    person = fleet.person()
    (person / "Notes").mkdir(exist_ok=True)
    (person / "Notes" / "dropped.md").write_text("a note the person regrets\n")
    git(person, "add", "-A")
    git(person, "commit", "-qm", "person: a commit to drop")
    git(person, "push", "-q")
    before = start_of(fleet)
    start = git(fleet.remote, "rev-parse", f"{fleet.branch}~1").strip()
    assert fleet.tick(0).returncode == 0
    assert before != start
    force_push_back(fleet, start, typed=request_block("REQ-new", "Summarise the new note."))
    proc = fleet.tick(0)
    assert proc.returncode == 0, proc.stderr
    tree = git(fleet.remote, "ls-tree", "-r", "--name-only", fleet.branch).split()
    assert "Notes/dropped.md" not in tree, "the person's dropped commit was pushed back"
    assert not (fleet.clones[0] / "Notes" / "dropped.md").exists()
    assert fleet.runs() == {"REQ-000": 1, "REQ-new": 1}
    assert_ran_once_and_said_rewritten(fleet, proc.stderr)


def test_a_rewrite_while_the_job_runs_neither_runs_it_twice_nor_says_taken_over(
    tmp_path: Path, agent_log: None
) -> None:
    """Machine 0 claimed REQ-000 and its job is under way; machine 1 has seen the claim.  The remote is
    force-pushed back to before it, and machine 1 ticks: it puts the claim back rather than run it."""
    fleet = Fleet(tmp_path, 2, inbox_of(1))
    start = start_of(fleet)
    os.environ["FAKE_AGENT_LOG"] = str(fleet.log)
    seen: list[str] = []

    def meanwhile() -> None:
        assert fleet.tick(1).returncode == 0  # machine 1 sees the claim
        force_push_back(fleet, start, typed=request_block("REQ-new", "Summarise the new note."))
        proc = fleet.tick(1)
        seen.append(proc.stderr)

    faults.on("claim.after_push", meanwhile)
    report = tick(Vault.open(fleet.clones[0]), wait_settle=False)
    faults.on("claim.after_push", None)
    later = tick(Vault.open(fleet.clones[0]), wait_settle=False)
    said = "\n".join([*seen, *report.warnings, *later.warnings])
    assert fleet.runs() == {"REQ-000": 1, "REQ-new": 1}, said
    assert_ran_once_and_said_rewritten(fleet, said)


@pytest.mark.parametrize("point", ["move.before_ref", "push.before"])
def test_a_kill_nine_while_putting_the_lines_back_still_runs_nothing_twice(
    tmp_path: Path, point: str
) -> None:
    """Machine 1 notices the rewrite and is killed while it follows it (after the files moved, before HEAD
    did) or before its push: its next pass finishes the job, and nothing runs twice."""
    fleet = Fleet(tmp_path, 2, inbox_of(1))
    start = start_of(fleet)
    assert fleet.tick(0).returncode == 0
    assert fleet.tick(1).returncode == 0
    force_push_back(fleet, start, typed=request_block("REQ-new", "Summarise the new note."))
    killed = fleet.tick(1, {"VAULTOPS_FAULT": point})
    assert killed.returncode == -9, killed.stderr
    said = [fleet.tick(i) for i in (1, 0, 1)]
    assert all(p.returncode == 0 for p in said), [p.stderr for p in said]
    assert fleet.runs() == {"REQ-000": 1, "REQ-new": 1}
    assert_ran_once_and_said_rewritten(fleet, killed.stderr + "".join(p.stderr for p in said))
    for clone in fleet.clones:
        assert (clone / INBOX).read_text() == fleet.remote_inbox()
    fleet.fsck()


def test_a_remote_with_no_history_in_common_is_not_taken_for_a_rewrite(tmp_path: Path) -> None:
    """origin re-pointed at another repository: nothing of this clone's history is pushed there."""
    fleet = Fleet(tmp_path, 1, inbox_of(1))
    assert fleet.tick(0).returncode == 0
    other = Fleet(tmp_path / "other", 0, inbox_of(2))
    clone = fleet.clones[0]
    git(clone, "remote", "set-url", "origin", str(other.remote))
    before = git(other.remote, "rev-parse", other.branch)
    proc = fleet.tick(0)
    assert "shares no history with this clone" in proc.stderr, proc.stderr
    assert git(other.remote, "rev-parse", other.branch) == before
    assert fleet.runs() == {"REQ-000": 1}
