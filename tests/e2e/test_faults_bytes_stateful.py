"""The person's bytes under a state machine (issue 25): two machines share one remote; on their own clones the
person saves requests without committing them, obsidian-git commits whenever it likes (also in the middle
of a claim push, through a fault point), and passes are killed around the claim push.  After every step:
no request ran twice, no request stands twice in any version of the inbox, no line the person saved is
lost, and no note holds conflict markers."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from tests.support.clones import INBOX, Fleet, person_push, request_block
from tests.support.helpers import git
from vaultops.base import faults
from vaultops.engine.tick import tick
from vaultops.sync.remote import request_headings
from vaultops.vault import Vault

MACHINES = 2
PUSH_POINTS = ["claim.before_push", "push.before", "claim.after_push"]


def backup(clone: Path) -> None:
    """obsidian-git's commit (not its push) of what the person saved."""
    person = ["-c", "user.name=Person", "-c", "user.email=person@example.invalid"]
    git(clone, *person, "add", "-A", "--", INBOX)
    if git(clone, "diff", "--cached", "--name-only").strip():
        git(clone, *person, "commit", "-qm", "vault backup")


class PersonsBytes(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="vaultops-bytes-"))
        self.fleet = Fleet(self.tmp, MACHINES, "# Inbox\n", extra="[limits]\nmax_concurrent = 2\n")
        self.person = self.fleet.person()
        self.count = 0
        self.typed: list[tuple[int, str]] = []  # (clone, line) saved on a machine's own clone
        self.saved_env = os.environ.get("FAKE_AGENT_LOG")
        os.environ["FAKE_AGENT_LOG"] = str(self.fleet.log)

    def _new(self) -> tuple[str, str]:
        self.count += 1
        return f"REQ-{self.count:03d}", f"Summarise note {self.count}."

    @rule()
    def person_pushes_a_request(self) -> None:
        rid, line = self._new()
        person_push(self.person, lambda text: text + request_block(rid, line))

    @rule(i=st.integers(0, MACHINES - 1))
    def person_saves_a_request_on_a_machines_clone(self, i: int) -> None:
        rid, line = self._new()
        path = self.fleet.clones[i] / INBOX
        path.write_text(path.read_text() + request_block(rid, line))
        self.typed.append((i, line))

    @rule(i=st.integers(0, MACHINES - 1))
    def obsidian_git_commits(self, i: int) -> None:
        backup(self.fleet.clones[i])

    @rule(i=st.integers(0, MACHINES - 1))
    def machine_ticks(self, i: int) -> None:
        tick(Vault.open(self.fleet.clones[i]), wait_settle=False)

    @rule(i=st.integers(0, MACHINES - 1), point=st.sampled_from(PUSH_POINTS))
    def obsidian_git_commits_during_a_push(self, i: int, point: str) -> None:
        clone = self.fleet.clones[i]
        done: list[bool] = []

        def commit_once() -> None:
            if not done:
                done.append(True)
                backup(clone)

        faults.on(point, commit_once)
        try:
            tick(Vault.open(clone), wait_settle=False)
        finally:
            faults.on(point, None)

    @rule(i=st.integers(0, MACHINES - 1), point=st.sampled_from(PUSH_POINTS))
    def kill_around_a_push(self, i: int, point: str) -> None:
        proc = self.fleet.tick(i, {"VAULTOPS_FAULT": point})
        assert proc.returncode in (0, -9), proc.stderr

    @invariant()
    def no_request_ran_twice(self) -> None:
        twice = {rid: n for rid, n in self.fleet.runs().items() if n > 1}
        assert twice == {}, f"ran more than once: {twice}"

    @invariant()
    def no_request_stands_twice_in_any_version(self) -> None:
        versions = {"remote": self.fleet.remote_inbox().encode()}
        versions |= {clone.name: (clone / INBOX).read_bytes() for clone in self.fleet.clones}
        for where, raw in versions.items():
            twice = {rid: n for rid, n in request_headings(raw).items() if n > 1}
            assert twice == {}, f"{where}: {twice}\n{raw.decode()}"
            assert b"\n<<<<<<<" not in raw and b"\n>>>>>>>" not in raw, where

    @invariant()
    def no_saved_line_is_lost(self) -> None:
        remote = set(self.fleet.remote_inbox().splitlines())
        for i, line in self.typed:
            here = (self.fleet.clones[i] / INBOX).read_text().splitlines()
            assert line in remote or line in here, f"lost from machine {i} and the remote: {line}"

    def teardown(self) -> None:
        try:
            for clone in self.fleet.clones:  # obsidian-git's last backup, then each machine once more
                backup(clone)
            for i in range(MACHINES):
                tick(Vault.open(self.fleet.clones[i]), wait_settle=False)
            final = self.fleet.remote_inbox()
            assert max(Counter(request_headings(final.encode())).values(), default=0) <= 1, final
            lines = final.splitlines()
            assert [line for _, line in self.typed if line not in lines] == [], "not on the remote"
            self.fleet.fsck()
        finally:
            if self.saved_env is None:
                os.environ.pop("FAKE_AGENT_LOG", None)
            else:
                os.environ["FAKE_AGENT_LOG"] = self.saved_env
            shutil.rmtree(self.tmp, ignore_errors=True)


PersonsBytes.TestCase.settings = settings(
    max_examples=int(os.environ.get("VAULTOPS_STATEFUL_EXAMPLES", "6")),
    stateful_step_count=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_persons_bytes = PersonsBytes.TestCase
