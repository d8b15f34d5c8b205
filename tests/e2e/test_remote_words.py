"""The remote's troubles in plain words, and races that are no trouble at all (issue 29).

Real git: a bare repository on disk as the remote, clones as machines.  A push that met another machine's
push holding the remote's ref lock, and a fetch that met obsidian-git's fetch holding this clone's tracking
ref, are races: the pass follows and pushes, and nothing says the remote is down.  An ssh that fails without
a word is told in plain words, never as a fragment of git's boilerplate.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.clones import Fleet, person_push, request_block
from tests.support.helpers import INBOX, git
from vaultops.base import faults
from vaultops.engine.publish import Publisher
from vaultops.vault import Vault


def _a_commit_to_push(clone: Path) -> None:
    (clone / "note.md").write_text("a line\n")
    git(clone, "add", "note.md")
    git(clone, "commit", "-qm", "person: a note")


def test_a_push_that_met_another_push_holding_the_remotes_lock_is_a_race(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 1, "# Inbox\n")
    clone = fleet.clones[0]
    publisher = Publisher.open(Vault.open(clone))
    warnings: list[str] = []
    publisher.pull(warnings)
    _a_commit_to_push(clone)
    publisher.ahead = True
    lock = fleet.remote / "refs" / "heads" / f"{fleet.branch}.lock"
    pushes: list[int] = []

    def another_push_holds_the_lock() -> None:  # as git receive-pack holds it while it updates the ref
        pushes.append(1)
        if len(pushes) == 1:
            lock.parent.mkdir(parents=True, exist_ok=True)
            lock.write_text("")
        else:
            lock.unlink()

    faults.on("push.before", another_push_holds_the_lock)
    try:
        publisher.push(warnings)
    finally:
        faults.on("push.before", None)
    assert len(pushes) == 2, pushes  # rejected once, followed, pushed again
    assert warnings == [], warnings
    assert publisher.problem is None and not publisher.ahead
    assert "note.md" in git(fleet.remote, "ls-tree", "--name-only", fleet.branch)


def test_a_fetch_that_met_another_fetch_on_this_clone_is_no_outage(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 1, "# Inbox\n")
    clone = fleet.clones[0]
    publisher = Publisher.open(Vault.open(clone))
    warnings: list[str] = []
    publisher.pull(warnings)
    person_push(fleet.person(), lambda text: text + request_block("REQ-b", "Summarise b."))
    # obsidian-git's own fetch holds the tracking ref at this moment
    lock = clone / ".git" / "refs" / "remotes" / "origin" / f"{fleet.branch}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    publisher.pull(warnings)
    assert warnings == [], warnings
    assert publisher.problem is None and publisher.online
    lock.unlink()
    publisher.fetched_at = float("-inf")
    publisher.pull(warnings)
    assert warnings == [] and "REQ-b" in (clone / INBOX).read_text()


def test_an_ssh_that_fails_without_a_word_is_said_in_plain_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet = Fleet(tmp_path, 1, "# Inbox\n")
    clone = fleet.clones[0]
    ssh = tmp_path / "silent-ssh"
    ssh.write_text("#!/bin/sh\nexit 255\n")
    ssh.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(ssh))
    git(clone, "remote", "set-url", "origin", "ssh://git.example.invalid/vault.git")
    publisher = Publisher.open(Vault.open(clone))
    warnings: list[str] = []
    publisher.pull(warnings)
    assert warnings == [
        "origin cannot be reached (git says only that it could not read from it): nothing is claimed or "
        "pushed until it answers; check that `git fetch origin` works in this clone"
    ], warnings
    for garble in ("repository exists", "access rights", "gave no reason"):
        assert garble not in warnings[0]


def test_a_clone_that_cannot_follow_nor_commit_says_each_once(tmp_path: Path) -> None:
    """Issue 29's warnings said again and again: a pass that could not follow said so, its commit said it
    could not commit, and the publisher, remembering only the last line, said both again next pass."""
    fleet = Fleet(tmp_path, 1, "# Inbox\n")
    clone = fleet.clones[0]
    git(clone, "checkout", "-q", "--detach")  # as a rebase that stopped halfway leaves it
    publisher = Publisher.open(Vault.open(clone))
    warnings: list[str] = []
    for _ in range(3):
        (clone / "note.md").write_text(f"a line {len(warnings)}\n")
        publisher.pull(warnings)
        publisher.commit(["note.md"], [], warnings)
        publisher.fetched_at = float("-inf")
    assert len(warnings) == 2, warnings
    assert warnings[0].startswith("cannot follow origin: HEAD is not on a branch"), warnings
    assert warnings[1].startswith("not committing yet: HEAD is not on a branch"), warnings
    git(clone, "checkout", "-q", fleet.branch)
    publisher.pull(warnings)
    assert warnings[2:] == ["vaultops follows origin again; claims go through it"], warnings
