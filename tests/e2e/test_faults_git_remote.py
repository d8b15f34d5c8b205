"""Remote problems reach the person: a remote that refuses a push (a hook, in its own words) or cannot be
reached is one clean sentence that names it and says what to do, said once per incident; ``tick`` exits
69 (EX_UNAVAILABLE) and ``status`` shows it.  Losing a push race to another machine is none of these.

Real git: a bare repository on disk as the remote, with a real pre-receive hook.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.support.clones import Fleet, person_push, request_block
from tests.support.helpers import INBOX, git, vaultops
from vaultops.base import faults
from vaultops.engine.publish import Publisher, remote_problem
from vaultops.store.state import StateDB
from vaultops.vault import Vault

EX_UNAVAILABLE = 69
REASON = "pushes to main are frozen until the audit ends (ask ops)"


def refuse_pushes(remote: Path, reason: str = REASON) -> Path:
    """A pre-receive hook in the bare remote that prints a reason and refuses every push."""
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\necho 'policy check:'\necho '{reason}' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    return hook


def said(proc_out: str, err: str, text: str) -> int:
    return (proc_out + err).count(text)


def status(clone: Path) -> tuple[str, str]:
    proc = vaultops("--vault", str(clone), "status")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def my_row(out: str, host: str = "host0") -> str:
    rows = [line for line in out.splitlines() if line.startswith(host + " ")]
    assert rows, f"no machine row for {host}:\n{out}"
    return rows[0]


def test_a_refused_push_says_the_hooks_reason_exits_69_and_status_shows_it(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 1, "# Inbox\n" + request_block("REQ-a", "Summarise a."))
    clone = fleet.clones[0]
    hook = refuse_pushes(fleet.remote)
    tip = git(fleet.remote, "rev-parse", fleet.branch)

    proc = fleet.tick(0)
    expected = f"origin refused the push (pre-receive hook declined): policy check: {REASON}"
    assert proc.returncode == EX_UNAVAILABLE, proc.stdout + proc.stderr
    assert expected in proc.stdout, proc.stdout
    assert "nothing to do" not in proc.stdout
    assert said(proc.stdout, proc.stderr, expected) == 1, "said more than once in one tick"
    assert "until it takes the push" in proc.stdout and "ask whoever runs origin" in proc.stdout
    assert git(fleet.remote, "rev-parse", fleet.branch) == tip, "the hook let something through"

    out, err = status(clone)
    assert "remote refused" in my_row(out), out
    assert REASON in err, err
    doctor = vaultops("--vault", str(clone), "doctor")
    assert doctor.returncode == 1 and f"problem: git: {expected}" in doctor.stdout, doctor.stdout

    again = fleet.tick(0)  # each tick says it: a person ran it to see what happens
    assert again.returncode == EX_UNAVAILABLE and expected in again.stdout

    hook.unlink()  # whoever runs the remote lets it through
    fixed = fleet.tick(0)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "refused" not in fixed.stdout + fixed.stderr
    assert "- status: done" in fleet.remote_inbox(), "the claim and the result went through"
    out, err = status(clone)
    assert "remote" not in my_row(out) and REASON not in err
    assert REASON not in vaultops("--vault", str(clone), "doctor").stdout


@pytest.mark.parametrize("where", ["missing.git", "not-a-repo"])
def test_an_unreachable_remote_is_one_clean_sentence(tmp_path: Path, where: str) -> None:
    fleet = Fleet(tmp_path, 1, "# Inbox\n" + request_block("REQ-a", "Summarise a."))
    clone = fleet.clones[0]
    missing = tmp_path / where
    if where == "not-a-repo":
        missing.mkdir()
    git(clone, "remote", "set-url", "origin", str(missing))

    proc = fleet.tick(0)
    text = proc.stdout + proc.stderr
    assert proc.returncode == EX_UNAVAILABLE, text
    sentence = (
        f"origin cannot be reached ('{missing}' does not appear to be a git repository): nothing is "
        "claimed or pushed until it answers; check that `git fetch origin` works in this clone"
    )
    assert sentence in proc.stdout.splitlines(), text
    assert text.count("cannot be reached") == 1, text
    for garble in ("and the repository exists", "Please make sure", "Could not read from remote"):
        assert garble not in text

    out, err = status(clone)
    assert "remote unreachable" in my_row(out), out
    assert sentence in err


def test_each_remote_incident_is_said_once_and_its_end_once(tmp_path: Path) -> None:
    """Pass after pass against a remote that cannot be reached, then refuses, then takes pushes: each
    incident is said when it begins and when it ends, never once per pass."""
    fleet = Fleet(tmp_path, 1, "# Inbox\n")
    clone = fleet.clones[0]
    vault = Vault.open(clone)
    publisher = Publisher.open(vault)
    warnings: list[str] = []
    gone = tmp_path / "gone.git"
    git(clone, "remote", "set-url", "origin", str(gone))
    for _ in range(4):
        publisher.pull(warnings)
        publisher.fetched_at = float("-inf")  # as if the retry wait were over
    assert [w for w in warnings if "cannot be reached" in w] == [warnings[0]], warnings
    assert len(warnings) == 1

    git(clone, "remote", "set-url", "origin", str(fleet.remote))
    refuse_pushes(fleet.remote)
    (clone / "note.md").write_text("a line\n")
    git(clone, "add", "note.md")
    git(clone, "commit", "-qm", "person: a note")  # something to push
    for _ in range(4):
        publisher.pull(warnings)
        publisher.fetched_at = float("-inf")
    assert warnings[1] == "origin answers again; claims and pushes go through it"
    assert [w for w in warnings if "refused the push" in w] == [warnings[2]], warnings
    assert len(warnings) == 3
    state = StateDB(vault.state_dir / "state.db")
    try:
        kept = remote_problem(state)
        assert kept is not None and kept.kind == "refused" and REASON in kept.sentence

        (fleet.remote / "hooks" / "pre-receive").unlink()
        publisher.pull(warnings)
        publisher.pull(warnings)
        assert warnings[3:] == ["origin takes this machine's pushes again"]
        assert remote_problem(state) is None
    finally:
        state.close()
    assert "note.md" in git(fleet.remote, "ls-tree", "--name-only", fleet.branch)


def test_a_push_race_is_not_a_remote_problem(tmp_path: Path) -> None:
    """Another machine pushes between this clone's fetch and its push: the push is behind, this clone
    follows and pushes again, and nothing says the remote is down or refusing."""
    fleet = Fleet(tmp_path, 1, "# Inbox\n")
    clone = fleet.clones[0]
    publisher = Publisher.open(Vault.open(clone))
    warnings: list[str] = []
    publisher.pull(warnings)
    (clone / "note.md").write_text("a line\n")
    git(clone, "add", "note.md")
    git(clone, "commit", "-qm", "person: a note")
    publisher.ahead = True
    raced = []

    def another_machine_pushes_first() -> None:
        if not raced:
            raced.append(1)
            person_push(fleet.person(), lambda text: text + request_block("REQ-b", "Summarise b."))

    faults.on("push.before", another_machine_pushes_first)
    try:
        publisher.push(warnings)
    finally:
        faults.on("push.before", None)
    assert raced
    assert warnings == [], warnings
    assert publisher.problem is None and not publisher.ahead
    inbox = git(fleet.remote, "show", f"{fleet.branch}:{INBOX}")
    assert "REQ-b" in inbox and "note.md" in git(fleet.remote, "ls-tree", "--name-only", fleet.branch)


def test_doctor_says_why_the_remote_cannot_be_reached_not_gits_boilerplate(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 1, "# Inbox\n")
    clone = fleet.clones[0]
    git(clone, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    proc = vaultops("--vault", str(clone), "doctor")
    [line] = [ln for ln in proc.stdout.splitlines() if "cannot reach the remote origin" in ln]
    assert "does not appear to be a git repository" in line, line
    assert "and the repository exists" not in line
