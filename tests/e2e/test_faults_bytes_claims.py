"""The person's bytes and the claim push (issue 25, "The person's bytes"): a claim commit carries vaultops's
lines and nothing of the person's that was not committed yet, so obsidian-git committing the inbox while a
claim is on its way to the remote (a slow remote), or after a kill -9 during the push, never leaves a
request in the inbox twice.  Real clones of a bare remote, real git, the person's commit made at the exact
moment by a fault point (a handshake, no sleep)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.clones import INBOX, Fleet, request_block
from tests.support.helpers import git
from vaultops.base import faults
from vaultops.engine.tick import tick
from vaultops.vault import Vault

TYPED = request_block("REQ-typed", "Summarise the typed note.")


def inbox_of(n: int) -> str:
    return "# Inbox\n" + "".join(request_block(f"REQ-{i:03d}", f"Summarise note {i}.") for i in range(n))


def backup(clone: Path) -> None:
    """obsidian-git's commit of everything the person saved, under the person's name."""
    person = ["-c", "user.name=Person", "-c", "user.email=person@example.invalid"]
    git(clone, *person, "add", "-A")
    if git(clone, "status", "--porcelain", "--untracked-files=no").strip():
        git(clone, *person, "commit", "-qm", "vault backup")


def once(action: Callable[[], None]) -> Callable[[], None]:
    done: list[bool] = []

    def hook() -> None:
        if not done:
            done.append(True)
            action()

    return hook


@pytest.fixture
def agent_log() -> Iterator[None]:
    yield
    os.environ.pop("FAKE_AGENT_LOG", None)
    for point in ("push.before", "claim.before_push", "claim.after_push"):
        faults.on(point, None)


def settle(fleet: Fleet, clone: Path, passes: int = 3) -> None:
    """Later passes, with obsidian-git committing after each, until everything reached the remote."""
    for _ in range(passes):
        tick(Vault.open(clone), wait_settle=False)
        backup(clone)
    tick(Vault.open(clone), wait_settle=False)


def assert_once_each(fleet: Fleet) -> None:
    final = fleet.remote_inbox()
    assert final.count("## REQ-typed") == 1, final
    assert final.count("## REQ-000") == 1, final
    states = {r.id: r.state.value for r in fleet.remote_requests().values()}
    assert states == {"REQ-000": "done", "REQ-typed": "done"}, final
    assert fleet.runs() == {"REQ-000": 1, "REQ-typed": 1}
    assert final.count("### Result") == 2 and "Late result" not in final, final


@pytest.mark.parametrize("point", ["push.before", "claim.before_push", "claim.after_push"])
def test_obsidian_git_committing_during_the_claim_push_never_doubles_a_request(
    tmp_path: Path, point: str, agent_log: None
) -> None:
    """The person saved a new request; obsidian-git commits it while vaultops's claim push is under way."""
    fleet = Fleet(tmp_path, 1, inbox_of(1))
    clone = fleet.clones[0]
    os.environ["FAKE_AGENT_LOG"] = str(fleet.log)
    path = clone / INBOX
    path.write_text(path.read_text() + TYPED)
    faults.on(point, once(lambda: backup(clone)))
    report = tick(Vault.open(clone), wait_settle=False)
    faults.on(point, None)
    claim_commits = git(
        fleet.remote, "log", "--author=agent0", "-p", "--format=%s", fleet.branch, "--", INBOX
    )
    assert "+## REQ-typed" not in claim_commits, "a commit of vaultops carried the person's uncommitted block"
    assert "REQ-typed" in " ".join(report.settling), report.settling  # it waits, and the pass says so
    settle(fleet, clone)
    assert_once_each(fleet)
    assert path.read_text() == fleet.remote_inbox()


def test_a_kill_nine_during_the_claim_push_then_the_persons_commit_never_doubles_a_request(
    tmp_path: Path, agent_log: None
) -> None:
    fleet = Fleet(tmp_path, 1, inbox_of(1))
    clone = fleet.clones[0]
    os.environ["FAKE_AGENT_LOG"] = str(fleet.log)
    path = clone / INBOX
    path.write_text(path.read_text() + TYPED)
    killed = fleet.tick(0, {"VAULTOPS_FAULT": "claim.after_push"})
    assert killed.returncode == -signal.SIGKILL
    backup(clone)
    settle(fleet, clone)
    final = fleet.remote_inbox()
    assert final.count("## REQ-typed") == 1, final
    states = {r.id: r.state.value for r in fleet.remote_requests().values()}
    # the claim that reached the remote before the kill is interrupted (heavy work is not re-run by itself)
    assert states == {"REQ-000": "interrupted", "REQ-typed": "done"}, final
    assert fleet.runs() == {"REQ-typed": 1}


def test_a_request_saved_but_not_committed_waits_and_is_claimed_once_committed(
    tmp_path: Path, agent_log: None
) -> None:
    """With a remote, vaultops claims only what the person committed: the pass says the request waits."""
    fleet = Fleet(tmp_path, 1, inbox_of(0))
    clone = fleet.clones[0]
    path = clone / INBOX
    path.write_text(path.read_text() + TYPED)
    first = fleet.tick(0)
    assert first.returncode == 0, first.stderr
    assert "REQ-typed" in first.stdout and "not committed" in first.stdout, first.stdout
    assert fleet.runs() == {}
    assert "REQ-typed" not in fleet.remote_inbox()
    assert path.read_text().endswith(TYPED), "the person's bytes are left as they are"
    backup(clone)
    second = fleet.tick(0)
    assert second.returncode == 0, second.stderr
    assert fleet.runs() == {"REQ-typed": 1}
    final = fleet.remote_inbox()
    assert final.count("## REQ-typed") == 1 and fleet.remote_requests()["REQ-typed"].state.value == "done"


def test_a_merge_that_would_put_a_request_in_twice_stops_keeps_both_versions_and_says_so(
    tmp_path: Path, agent_log: None
) -> None:
    """The remote already holds the person's block (a claim commit built from the bytes on disk, as older
    versions made them) and the person's own commit of it waits on this clone: no merge keeps the block
    once, so the clone stops following, keeps both versions, claims nothing, and says so in one sentence."""
    fleet = Fleet(tmp_path, 1, inbox_of(1))
    clone = fleet.clones[0]
    os.environ["FAKE_AGENT_LOG"] = str(fleet.log)
    claim = "- locked-by: agent9 @ 2026-01-01T00:00:00+00:00 (host9, claim abc123, lease 60 s)\n"
    other = fleet.person()
    (other / INBOX).write_text((other / INBOX).read_text() + claim + TYPED + claim)
    git(other, "commit", "-qam", "vaultops: claimed REQ-000 (as older versions built it)")
    git(other, "push", "-q")
    path = clone / INBOX
    path.write_text(path.read_text() + TYPED)
    backup(clone)
    mine = git(clone, "rev-parse", "HEAD").strip()
    proc = fleet.tick(0)
    assert proc.returncode == 0, proc.stderr
    assert "REQ-typed in it twice" in proc.stderr and "nothing is claimed" in proc.stderr, proc.stderr
    assert fleet.remote_inbox().count("## REQ-typed") == 1
    # the clone keeps the person's commit and version as they were (a pass may commit its dashboard)
    git(clone, "merge-base", "--is-ancestor", mine, "HEAD")
    assert git(clone, "show", f"HEAD:{INBOX}") == git(clone, "show", f"{mine}:{INBOX}") == path.read_text()
    assert path.read_text().count("## REQ-typed") == 1
    saved = clone / ".vaultops" / "state" / "conflicts" / f"_System__COO-Inbox.md.{mine[:8]}"
    assert saved.read_text() == path.read_text()
    assert fleet.runs() == {}
    # the person keeps the remote's version (theirs is in it already): vaultops goes on by itself
    git(clone, "reset", "-q", "--hard", "@{u}")
    again = fleet.tick(0)
    assert again.returncode == 0 and "cannot follow" not in again.stderr, again.stderr
    assert fleet.remote_inbox().count("## REQ-typed") == 1


def test_a_plan_note_saved_but_not_committed_waits_and_nothing_of_it_reaches_the_remote(
    tmp_path: Path, agent_log: None
) -> None:
    """The same for a new plan note in the queue folder: it is not vaultops's to commit (it would carry the
    person's whole note), so it waits until the person's commit."""
    fleet = Fleet(tmp_path, 1, inbox_of(0))
    clone = fleet.clones[0]
    queue = clone / "executor-queue"
    for old in queue.glob("*.md"):  # the template's own plan note (paused) is not this test's
        old.unlink()
    backup(clone)
    git(clone, "push", "-q")
    (queue / "summary.md").write_text("---\ntype: research\n---\nSummarise the open threads in this vault.\n")
    first = fleet.tick(0)
    assert first.returncode == 0, first.stderr
    assert "not committed" in first.stdout, first.stdout
    assert fleet.runs() == {}
    tree = git(fleet.remote, "ls-tree", "-r", "--name-only", fleet.branch).split()
    assert "executor-queue/summary.md" not in tree
    backup(clone)
    second = fleet.tick(0)
    assert second.returncode == 0, second.stderr
    assert fleet.runs() == {"PLAN-summary": 1}
    text = git(fleet.remote, "show", f"{fleet.branch}:executor-queue/summary.md")
    assert text.splitlines().count("Summarise the open threads in this vault.") == 1, text
    assert text.count("- locked-by:") == 1 and "- status: done" in text, text


def test_a_request_edited_and_not_committed_is_claimed_as_committed_never_half_and_half(
    tmp_path: Path, agent_log: None
) -> None:
    """The person rewrites the text of a committed request; obsidian-git commits it while the claim is on its
    way.  A claim built on the old text would run what the person no longer asks, and its lines would
    clash with the person's commit; the request waits for the commit and then runs the new text once."""
    fleet = Fleet(tmp_path, 1, inbox_of(1))
    clone = fleet.clones[0]
    os.environ["FAKE_AGENT_LOG"] = str(fleet.log)
    path = clone / INBOX
    path.write_text(path.read_text().replace("Summarise note 0.", "Summarise note 0, in one line."))
    faults.on("claim.before_push", once(lambda: backup(clone)))
    first = tick(Vault.open(clone), wait_settle=False)
    faults.on("claim.before_push", None)
    backup(clone)
    settle(fleet, clone, passes=1)
    said = "\n".join(first.warnings)
    assert "do not merge" not in said and "cannot follow" not in said, said
    assert fleet.runs() == {"REQ-000": 1}
    final = fleet.remote_inbox()
    assert "Looked into it: Summarise note 0, in one line." in final, final
    assert final.count("- locked-by:") == 1 and fleet.remote_requests()["REQ-000"].state.value == "done"
