"""A hypothesis state machine over two machines, a person and one remote: requests are added, machines
tick (in this process, or in a process killed at a named point), pushes are rejected, the person edits,
a machine loses the remote, and a machine's clock runs past a lease.  After every step: no request ran
twice, no line of the person's is lost, every note parses without conflict markers; at the end `git fsck`
is clean everywhere."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tests.support.clones import INBOX, Fleet, person_push, request_block
from tests.support.helpers import git
from vaultops.engine.tick import tick
from vaultops.scan.note import parse_note
from vaultops.vault import Vault

MACHINES = 2
KILL_POINTS = ["claim.before_push", "claim.after_push", "push.before", "write.before_replace"]
REJECT_ONCE = """#!/bin/sh
# rejects one push, then lets them through
flag="$(dirname "$0")/../reject-next"
if [ -e "$flag" ]; then rm -f "$flag"; echo "rejected by the test" >&2; exit 1; fi
exit 0
"""


class Machines(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="vaultops-stateful-"))
        extra = "[limits]\nmax_concurrent = 2\n\n[retry]\nrate_limit_delays = [0.1]\n"
        self.fleet = Fleet(self.tmp, MACHINES, "# Inbox\n", extra=extra)
        hook = self.fleet.remote / "hooks" / "pre-receive"
        hook.write_text(REJECT_ONCE)
        hook.chmod(0o755)
        self.person = self.fleet.person()
        self.person_lines: list[str] = []
        self.typed_on: list[tuple[int, str]] = []  # lines the person typed on a machine's own clone
        self.count = 0
        self.away: set[int] = set()
        self.saved_env = os.environ.get("FAKE_AGENT_LOG")
        os.environ["FAKE_AGENT_LOG"] = str(self.fleet.log)

    # --- what happens -----------------------------------------------------------------------------

    @rule()
    def add_request(self) -> None:
        self.count += 1
        line = f"Summarise note {self.count}."
        person_push(self.person, lambda text: text + request_block(f"REQ-{self.count:03d}", line))
        self.person_lines.append(line)

    @rule(i=st.integers(0, MACHINES - 1))
    def tick_machine(self, i: int) -> None:
        tick(Vault.open(self.fleet.clones[i]), wait_settle=False)

    @rule(i=st.integers(0, MACHINES - 1), point=st.sampled_from(KILL_POINTS))
    def kill_mid_tick(self, i: int, point: str) -> None:
        proc = self.fleet.tick(i, {"VAULTOPS_FAULT": f"{point}:kill"})
        # 69: the remote refused a push (reject_next_push) or cannot be reached, and the tick says so
        assert proc.returncode in (0, -9, 69), proc.stderr

    @rule()
    def reject_next_push(self) -> None:
        (self.fleet.remote / "reject-next").touch()

    @precondition(lambda self: self.count > 0)
    @rule(data=st.data())
    def person_edits(self, data: st.DataObject) -> None:
        n = data.draw(st.integers(1, self.count))
        where = data.draw(st.sampled_from(["request", "title"]))
        line = f"The person typed this ({len(self.person_lines)})."
        if where == "request":
            anchor = f"Summarise note {n}.\n"
            person_push(self.person, lambda text: text.replace(anchor, anchor + line + "\n", 1))
        else:
            person_push(self.person, lambda text: text.replace("# Inbox\n", f"# Inbox\n{line}\n", 1))
        self.person_lines.append(line)

    @rule(i=st.integers(0, MACHINES - 1), kind=st.sampled_from(["request", "title"]))
    def obsidian_git_commits_on_a_machines_clone(self, i: int, kind: str) -> None:
        """The person types in the vault on machine ``i`` itself and obsidian-git commits it there, without
        pushing: that machine's vaultops must carry it to the remote."""
        clone = self.fleet.clones[i]
        path = clone / INBOX
        n = len(self.typed_on)
        if kind == "request":
            line = f"Summarise the note typed on machine {i} ({n})."
            path.write_text(path.read_text() + request_block(f"REQ-on{i}-{n:03d}", line))
        else:
            line = f"Typed on machine {i} ({n})."
            path.write_text(path.read_text().replace("# Inbox\n", f"# Inbox\n{line}\n", 1))
        backup = ["git", "-c", "user.name=Person", "-c", "user.email=person@example.invalid"]
        subprocess.run([*backup, "commit", "-qam", "vault backup"], cwd=clone, capture_output=True)
        self.typed_on.append((i, line))

    @rule(i=st.integers(0, MACHINES - 1))
    def remote_unreachable_or_back(self, i: int) -> None:
        clone = self.fleet.clones[i]
        url = str(self.fleet.remote) if i in self.away else str(self.tmp / "nowhere.git")
        git(clone, "remote", "set-url", "origin", url)
        self.away ^= {i}

    @rule(i=st.integers(0, MACHINES - 1))
    def clock_past_the_lease(self, i: int) -> None:
        """As machine ``i`` sees it, every claim it has seen was first seen a day ago."""
        db = self.fleet.clones[i] / ".vaultops" / "state" / "state.db"
        if db.exists():
            with sqlite3.connect(db) as conn:
                conn.execute(
                    "UPDATE seen SET first_seen = first_seen - 86400 WHERE person_hash LIKE 'claim:%'"
                )

    # --- what must always hold --------------------------------------------------------------------

    @invariant()
    def no_request_ran_twice(self) -> None:
        twice = {rid: n for rid, n in self.fleet.runs().items() if n > 1}
        assert twice == {}, f"ran more than once: {twice}"

    @invariant()
    def no_line_of_the_person_is_lost(self) -> None:
        lines = self.fleet.remote_inbox().splitlines()
        missing = [line for line in self.person_lines if line not in lines]
        assert missing == [], f"lost from the remote: {missing}"

    @invariant()
    def no_line_typed_on_a_machines_clone_is_lost(self) -> None:
        remote = set(self.fleet.remote_inbox().splitlines())
        for i, line in self.typed_on:
            here = (self.fleet.clones[i] / INBOX).read_text().splitlines()
            assert line in remote or line in here, f"lost from machine {i} and the remote: {line}"

    @invariant()
    def every_note_parses_without_conflict_markers(self) -> None:
        texts = {"remote": self.fleet.remote_inbox().encode()}
        texts |= {clone.name: (clone / INBOX).read_bytes() for clone in self.fleet.clones}
        for where, raw in texts.items():
            note = parse_note(INBOX, raw)
            assert note.conflict_line is None, f"conflict markers in {where}"
            assert not any(line.startswith(("<<<<<<<", ">>>>>>>")) for line in note.lines), where

    def teardown(self) -> None:
        try:
            (self.fleet.remote / "reject-next").unlink(missing_ok=True)
            self.fleet.fsck()
        finally:
            if self.saved_env is None:
                os.environ.pop("FAKE_AGENT_LOG", None)
            else:
                os.environ["FAKE_AGENT_LOG"] = self.saved_env
            shutil.rmtree(self.tmp, ignore_errors=True)


Machines.TestCase.settings = settings(
    max_examples=int(os.environ.get("VAULTOPS_STATEFUL_EXAMPLES", "15")),
    stateful_step_count=14,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_machines = Machines.TestCase
