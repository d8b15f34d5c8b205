"""Many machines, one remote: real clones of a bare repository on disk, real `vaultops tick` processes
racing, a person pushing edits from another clone, kill -9 at named points, a remote that goes away."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.clones import INBOX, Fleet, person_push, request_block, tick_until
from tests.support.helpers import git
from vaultops.base import faults
from vaultops.engine.tick import tick
from vaultops.vault import Vault

MARKERS = ("<<<<<<<", "=======", ">>>>>>>")


def inbox_of(n: int, prefix: str = "REQ") -> str:
    return "# Inbox\n" + "".join(request_block(f"{prefix}-{i:03d}", f"Summarise note {i}.") for i in range(n))


def all_done(fleet: Fleet, n: int):  # type: ignore[no-untyped-def]
    return lambda: sum(r.state.value == "done" for r in fleet.remote_requests().values()) >= n


def race(
    fleet: Fleet, machines: int, done, env: dict[str, str] | None = None, seconds: float = 240
) -> list[str]:  # type: ignore[no-untyped-def]
    stop = threading.Event()
    errors: list[str] = []
    deadline = time.monotonic() + seconds
    threads = [
        threading.Thread(target=lambda i=i: errors.extend(tick_until(fleet, i, done, stop, deadline, env)))
        for i in range(machines)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def no_markers(text: str) -> bool:
    return not any(line.startswith(MARKERS) for line in text.splitlines())


@pytest.mark.slow
def test_three_machines_racing_over_100_requests_run_each_exactly_once(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 3, inbox_of(100), extra="[limits]\nmax_concurrent = 3\n")
    errors = race(fleet, 3, all_done(fleet, 100))
    assert errors == []
    runs = fleet.runs()
    assert sorted(runs) == [f"REQ-{i:03d}" for i in range(100)]
    assert [rid for rid, n in runs.items() if n > 1] == [], "a request ran twice"
    states = {r.id: r.state.value for r in fleet.remote_requests().values()}
    assert set(states.values()) == {"done"}
    assert no_markers(fleet.remote_inbox())
    claimers = {
        r.locks[0].agent for r in fleet.remote_requests().values()
    }  # the work was shared, not taken by one machine
    assert len(claimers) >= 2
    fleet.fsck()


@pytest.mark.slow
def test_control_run_merging_lost_claims_through_is_caught_running_requests_twice(tmp_path: Path) -> None:
    """The race test can fail: resolve rejected claims by pull-and-merge (the wrong way) and it sees
    double runs."""
    fleet = Fleet(tmp_path, 3, inbox_of(30), extra="[limits]\nmax_concurrent = 3\n")
    race(fleet, 3, all_done(fleet, 30), env={"VAULTOPS_FAULT": "claims.merge"})
    twice = [rid for rid, n in fleet.runs().items() if n > 1]
    assert twice, "merging rejected claims through should have run some request twice"


def test_a_claim_that_loses_the_race_leaves_nothing_behind(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 2, inbox_of(1))
    os.environ["FAKE_AGENT_LOG"] = str(fleet.log)
    try:
        # machine 1 claims and finishes the request while machine 0 is between building its claim and
        # pushing it
        faults.on("claim.before_push", lambda: fleet.tick(1))
        report = tick(Vault.open(fleet.clones[0]), wait_settle=False)
    finally:
        faults.on("claim.before_push", None)
        del os.environ["FAKE_AGENT_LOG"]
    assert fleet.runs() == {"REQ-000": 1}
    assert report.outcomes == []
    # machine 0's heartbeat may reach the remote; nothing of it in the inbox may
    touched = git(fleet.remote, "log", "--author=agent0", "--name-only", "--format=", fleet.branch)
    assert INBOX not in touched.split(), "the losing claim reached the remote"
    clone = fleet.clones[0]
    assert git(clone, "rev-parse", "HEAD") == git(fleet.remote, "rev-parse", fleet.branch)
    assert git(clone, "status", "--porcelain", "--", INBOX) == ""
    assert (clone / INBOX).read_text() == fleet.remote_inbox()


@pytest.mark.parametrize("point", ["claim.before_push", "claim.after_push", "push.before"])
def test_kill_nine_around_the_claim_push_runs_nothing_twice(tmp_path: Path, point: str) -> None:
    fleet = Fleet(tmp_path, 2, inbox_of(3))
    killed = fleet.tick(0, {"VAULTOPS_FAULT": point})
    assert killed.returncode == -signal.SIGKILL
    for _ in range(3):
        for i in (1, 0):
            assert fleet.tick(i).returncode == 0
    runs = fleet.runs()
    assert all(n == 1 for n in runs.values()), runs
    states = {r.id: r.state.value for r in fleet.remote_requests().values()}
    # a claim that reached the remote before the kill is interrupted (heavy work is not re-run by
    # itself); anything else was done by one machine
    assert set(states.values()) <= {"done", "interrupted"}
    if point == "claim.after_push":
        assert "interrupted" in states.values()
    else:
        assert set(states.values()) == {"done"}
    for clone in fleet.clones:
        assert (clone / INBOX).read_text() == fleet.remote_inbox()
    fleet.fsck()


def test_kill_nine_while_following_the_remote_leaves_a_clone_that_follows_it_next_time(
    tmp_path: Path,
) -> None:
    """Killed after the files moved and before HEAD did: the index lock is left behind and the files are
    ahead of HEAD.  The next pass clears the lock (no git works behind it) and finishes the move."""
    fleet = Fleet(tmp_path, 2, inbox_of(2))
    assert fleet.tick(1).returncode == 0  # the remote moves: machine 0 must follow it
    killed = fleet.tick(0, {"VAULTOPS_FAULT": "move.before_ref"})
    assert killed.returncode == -signal.SIGKILL
    clone = fleet.clones[0]
    assert (clone / ".git" / "index.lock").exists()
    person_push(fleet.person(), lambda text: text + request_block("REQ-after", "Summarise the last note."))
    proc = fleet.tick(0)
    assert proc.returncode == 0 and "cannot follow" not in proc.stderr, proc.stderr
    assert not (clone / ".git" / "index.lock").exists()
    assert fleet.runs() == {"REQ-000": 1, "REQ-001": 1, "REQ-after": 1}
    assert git(clone, "status", "--porcelain", "--untracked-files=no") == ""
    assert (clone / INBOX).read_text() == fleet.remote_inbox()
    fleet.fsck()


@pytest.mark.slow
def test_a_persons_edits_pushed_while_machines_work_are_never_lost(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 2, inbox_of(5), extra="[limits]\nmax_concurrent = 2\n")
    person = fleet.person()
    written: list[str] = []
    added: list[str] = []
    stop = threading.Event()
    errors: list[str] = []
    machines = [
        threading.Thread(
            target=lambda i=i: errors.extend(tick_until(fleet, i, stop.is_set, stop, time.monotonic() + 120))
        )
        for i in range(2)
    ]
    for t in machines:
        t.start()
    try:
        for n in range(24):
            kind = n % 3
            if kind == 0:  # a new request
                rid = f"REQ-new-{n:02d}"
                line = f"Summarise new note {n}."
                person_push(person, lambda text, rid=rid, line=line: text + request_block(rid, line))
                added.append(rid)
                written.append(line)
            elif kind == 1:  # a line between blocks, under the title
                line = f"A note of the person's, number {n}."
                person_push(
                    person, lambda text, line=line: text.replace("# Inbox\n", f"# Inbox\n{line}\n", 1)
                )
                written.append(line)
            else:  # typing into a request that may already be claimed
                line = f"More detail, typed later ({n})."
                target = f"Summarise note {n % 5}.\n"
                person_push(
                    person,
                    lambda text, line=line, target=target: text.replace(target, target + line + "\n", 1),
                )
                written.append(line)
            time.sleep(0.1)
        want = 5 + len(added)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not all_done(fleet, want)():
            time.sleep(0.3)
    finally:
        stop.set()
        for t in machines:
            t.join()
    assert errors == []
    final = fleet.remote_inbox()
    assert no_markers(final)
    lines = final.splitlines()
    missing = [w for w in written if w not in lines]
    assert missing == [], f"the person's lines are gone: {missing}"
    states = {r.id: r.state.value for r in fleet.remote_requests().values()}
    assert all(states[rid] == "done" for rid in added), states
    assert all(n == 1 for n in fleet.runs().values()), fleet.runs()
    fleet.fsck()


def test_a_remote_that_cannot_be_reached_means_no_claims_until_it_is_back(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 1, inbox_of(2))
    away = tmp_path / "remote-away.git"
    fleet.remote.rename(away)
    offline = fleet.tick(0)
    assert offline.returncode == 69  # EX_UNAVAILABLE: nothing reached the remote
    assert fleet.runs() == {}
    assert "cannot be reached" in offline.stdout and "nothing is claimed" in offline.stdout
    assert "locked-by" not in (fleet.clones[0] / INBOX).read_text()
    away.rename(fleet.remote)
    assert fleet.tick(0).returncode == 0
    assert fleet.runs() == {"REQ-000": 1, "REQ-001": 1}
    assert {r.state.value for r in fleet.remote_requests().values()} == {"done"}


def test_claim_offline_claims_locally_and_pushes_when_the_remote_is_back(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 1, inbox_of(2), extra="[git]\nclaim_offline = true\n")
    away = tmp_path / "remote-away.git"
    fleet.remote.rename(away)
    assert fleet.tick(0).returncode == 69  # claimed and run here, but nothing pushed yet
    assert fleet.runs() == {"REQ-000": 1, "REQ-001": 1}
    away.rename(fleet.remote)
    assert fleet.tick(0).returncode == 0
    assert {r.state.value for r in fleet.remote_requests().values()} == {"done"}
    assert fleet.runs() == {"REQ-000": 1, "REQ-001": 1}


def test_results_pushed_after_the_remote_moved_are_replayed_on_top(tmp_path: Path) -> None:
    """Machine 0's results commit meets a remote where the person added a request and machine 1 wrote the
    daily note: they are replayed, not merged, and nothing of either side is lost."""
    fleet = Fleet(tmp_path, 2, inbox_of(1))
    os.environ["FAKE_AGENT_LOG"] = str(fleet.log)

    def meanwhile() -> None:
        person_push(fleet.person(), lambda text: text + request_block("REQ-late", "Summarise the late note."))
        fleet.tick(1)  # claims REQ-late, runs it, writes today's daily note, pushes

    try:
        faults.on("push.before", lambda: (faults.on("push.before", None), meanwhile()))
        tick(Vault.open(fleet.clones[0]), wait_settle=False)
    finally:
        faults.on("push.before", None)
        del os.environ["FAKE_AGENT_LOG"]
    requests = fleet.remote_requests()
    assert {rid: r.state.value for rid, r in requests.items()} == {"REQ-000": "done", "REQ-late": "done"}
    assert no_markers(fleet.remote_inbox())
    daily = [
        p
        for p in git(fleet.remote, "ls-tree", "-r", "--name-only", fleet.branch).split()
        if p.startswith("Daily/") and p.endswith(".md")
    ]
    assert len(daily) == 1
    text = git(fleet.remote, "show", f"{fleet.branch}:{daily[0]}")
    assert "REQ-000" in text and "REQ-late" in text and no_markers(text)
    log = git(fleet.remote, "log", "--format=%P", fleet.branch).splitlines()
    assert all(len(parents.split()) <= 1 for parents in log), "a merge commit"


def test_a_note_with_conflict_markers_is_left_alone_and_reported(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 1, inbox_of(1))
    path = fleet.clones[0] / INBOX
    broken = path.read_text() + "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> 1234567\n"
    path.write_text(broken)
    proc = fleet.tick(0)
    assert proc.returncode == 0
    assert "conflict markers" in proc.stderr and f"{INBOX}:" in proc.stderr
    assert path.read_text() == broken
    assert fleet.runs() == {}


def test_sync_conflict_copies_are_never_taken_as_requests(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 1, "# Inbox\n")
    copy = fleet.clones[0] / "_System" / "COO-Inbox.sync-conflict-20261129-101010-ABCDEF.md"
    copy.write_text(inbox_of(1))
    before = copy.read_bytes()
    assert fleet.tick(0).returncode == 0
    assert copy.read_bytes() == before
    assert fleet.runs() == {}


@pytest.mark.slow
def test_a_daemon_paused_past_its_lease_is_taken_over_and_its_result_recorded_as_late(tmp_path: Path) -> None:
    # a short lease: a 5 s timeout, one 0.1 s rate-limit wait, 0.5 s margin: 2 * 5 + 0.1 + 0.5 = 10.6 s.  The
    # timeout leaves the 1.5 s agent room to start on a loaded machine: one that timed out would be tried
    # again by machine 0's dispatcher, a second run that this test would rightly count.
    extra = (
        "[retry]\nrate_limit_delays = [0.1]\n\n[git]\nlease_margin = 0.5\n\n"
        "[daemon]\nfetch = 0.3\nreconcile = 1\n"
    )
    fleet = Fleet(tmp_path, 2, inbox_of(1), extra=extra, timeout=5)
    env = {**os.environ, **fleet.env, "FAKE_AGENT_SLEEP": "1.5"}
    first = subprocess.Popen(
        [sys.executable, "-m", "vaultops", "--vault", str(fleet.clones[0]), "run"],
        env=env, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    second = None
    try:
        deadline = time.monotonic() + 30
        while "locked-by: agent0" not in fleet.remote_inbox() or not fleet.runs():
            assert time.monotonic() < deadline, "machine 0 never claimed and started its agent"
            time.sleep(0.05)
        first.send_signal(signal.SIGSTOP)  # its agent runs: paused before it started, it would never run
        second = subprocess.Popen(
            [sys.executable, "-m", "vaultops", "--vault", str(fleet.clones[1]), "run"],
            env=env, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while "locked-by: agent1" not in fleet.remote_inbox():
            assert time.monotonic() < deadline, "machine 1 never took over"
            time.sleep(0.1)
        taken = time.monotonic()
        first.send_signal(signal.SIGCONT)
        deadline = time.monotonic() + 30
        while "### Late result" not in fleet.remote_inbox():
            assert time.monotonic() < deadline, "machine 0's result never arrived"
            time.sleep(0.1)
        assert taken
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.terminate()
                proc.wait(timeout=30)
    request = fleet.remote_requests()["REQ-000"]
    assert request.state.value == "interrupted", "a late result is never the outcome"
    assert "taken over" in request.statuses[-1].reason
    text = fleet.remote_inbox()
    assert text.index("locked-by: agent1") < text.index("### Late result")
    assert "(claim" in text.split("### Late result", 1)[1].splitlines()[0]
    assert fleet.runs() == {"REQ-000": 1}, "heavy work is not run again by the machine that took over"
    assert no_markers(text)
    fleet.fsck()


def obsidian_git(clone: Path, stop: threading.Event, written: list[str], added: list[str]) -> list[str]:
    """What obsidian-git's auto backup does on the clone vaultops works in: the person types, then
    `git add -A`, commit, `git pull --rebase`, push, every few tenths of a second.  A git call that fails
    (a held index.lock, a rejected push) is reported and tried again on the next round, as the plugin does."""
    failures: list[str] = []
    path = clone / INBOX
    journal = clone / "Notes" / "journal.md"
    journal.parent.mkdir(exist_ok=True)
    n = 0
    while not stop.is_set():
        n += 1
        # an editor's save: read, change, write in place (vaultops's writer notices a change under it)
        if n % 3 == 0:
            rid, line = f"REQ-og-{n:03d}", f"Summarise the plugin's note {n}."
            path.write_text(path.read_text(encoding="utf-8") + request_block(rid, line), encoding="utf-8")
            added.append(rid)
        else:
            line = f"Typed in Obsidian, round {n}."
            with journal.open("a", encoding="utf-8") as f:
                f.write(line + "\n")
        written.append(line)
        failures += backup(clone, f"round {n}")
        time.sleep(0.2)
    return failures


def backup(clone: Path, what: str) -> list[str]:
    for step in (["add", "-A"], ["commit", "-q", "-m", f"vault backup: {what}"], ["pull", "-q", "--rebase"]):
        proc = subprocess.run(["git", *step], cwd=clone, capture_output=True, text=True)
        if proc.returncode != 0 and "nothing to commit" not in proc.stdout:
            if step[0] == "pull":
                subprocess.run(["git", "rebase", "--abort"], cwd=clone, capture_output=True)
            return [f"{step[0]}: {(proc.stderr or proc.stdout).strip()}"]
    proc = subprocess.run(["git", "push", "-q"], cwd=clone, capture_output=True, text=True)
    return [] if proc.returncode == 0 else [f"push: {proc.stderr.strip()}"]


def obsidian_git_once(clone: Path, stop: threading.Event) -> list[str]:
    """Auto backups until one goes through to the remote (at most 20)."""
    failures: list[str] = []
    for _ in range(20):
        failed = backup(clone, "final")
        if not failed and not git(clone, "status", "--porcelain", "--untracked-files=no").strip():
            branch = git(clone, "rev-parse", "HEAD").strip()
            if branch == git(clone, "rev-parse", "@{u}").strip():
                return failures
        failures += failed
        time.sleep(0.3)
    return failures


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("VAULTOPS_STRESS"),
    reason="a stress test (half a minute, and it means most on a loaded machine): opt in with "
    "VAULTOPS_STRESS=1",
)
def test_sharing_a_clone_with_obsidian_git_loses_nothing_and_runs_nothing_twice(tmp_path: Path) -> None:
    """Machine 0's clone is also the one Obsidian edits and obsidian-git commits, pulls and pushes; machine
    1 works beside it.  Every line typed survives, every request runs once, no marker, no daemon error."""
    fleet = Fleet(tmp_path, 2, inbox_of(6), extra="[limits]\nmax_concurrent = 2\n")
    shared = fleet.clones[0]
    git(shared, "config", "user.name", "Person")
    git(shared, "config", "user.email", "person@example.invalid")
    typing, stop = threading.Event(), threading.Event()
    errors: list[str] = []
    written: list[str] = []
    added: list[str] = []
    plugin_failures: list[str] = []
    machines = [
        threading.Thread(
            target=lambda i=i: errors.extend(tick_until(fleet, i, stop.is_set, stop, time.monotonic() + 180))
        )
        for i in range(2)
    ]
    plugin = threading.Thread(
        target=lambda: plugin_failures.extend(obsidian_git(shared, typing, written, added))
    )
    for t in [*machines, plugin]:
        t.start()
    try:
        time.sleep(20)
        typing.set()
        plugin.join()
        typing.clear()
        # the plugin's last round, once more until it is through, as its next auto backup would
        plugin_failures.extend(obsidian_git_once(shared, typing))
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not all_done(fleet, 6 + len(added))():
            time.sleep(0.3)
    finally:
        typing.set()
        stop.set()
        for t in [*machines, plugin]:
            t.join()
    assert errors == []
    final = fleet.remote_inbox()
    assert no_markers(final)
    tree = git(fleet.remote, "ls-tree", "-r", "--name-only", fleet.branch).split()
    journal = (
        git(fleet.remote, "show", f"{fleet.branch}:Notes/journal.md") if "Notes/journal.md" in tree else ""
    )
    lines = final.splitlines() + journal.splitlines()
    missing = [w for w in written if w not in lines]
    assert missing == [], f"typed lines are gone: {missing} (plugin failures: {plugin_failures})"
    requests = fleet.remote_requests()
    states = {r.id: r.state.value for r in requests.values()}
    not_done = {
        r.id: final.splitlines()[r.start : r.end] for r in requests.values() if r.state.value != "done"
    }
    assert len(states) == 6 + len(added) and not not_done, not_done
    assert all(n == 1 for n in fleet.runs().values()), fleet.runs()
    assert not (shared / ".git" / "index.lock").exists()
    fleet.fsck()


def test_claims_pulled_in_by_obsidian_git_before_our_own_write_still_run(tmp_path: Path) -> None:
    """obsidian-git's pull brings our pushed claim commit into the note before vaultops writes the same
    lines there: the claims exist all the same (they are on the remote), and each job runs once."""
    fleet = Fleet(tmp_path, 1, inbox_of(2))
    clone = fleet.clones[0]
    git(clone, "config", "user.name", "Person")
    git(clone, "config", "user.email", "person@example.invalid")
    os.environ["FAKE_AGENT_LOG"] = str(fleet.log)
    try:
        faults.on("claim.after_push", lambda: git(clone, "pull", "-q", "--rebase"))
        report = tick(Vault.open(clone), wait_settle=False)
    finally:
        faults.on("claim.after_push", None)
        del os.environ["FAKE_AGENT_LOG"]
    assert not [w for w in report.warnings if "not recorded" in w], report.warnings
    assert fleet.runs() == {"REQ-000": 1, "REQ-001": 1}
    assert {r.state.value for r in fleet.remote_requests().values()} == {"done"}
    text = fleet.remote_inbox()
    assert text.count("- locked-by:") == 2  # each claim once, not written again over the pulled one


def test_a_result_survives_another_tool_resetting_the_working_tree_before_it_is_committed(
    tmp_path: Path,
) -> None:
    """obsidian-git's failed `pull --rebase` ends in `rebase --abort`, a hard reset of the clone vaultops
    works in.  A result written to the note and not yet in a commit was lost so; it must reach the remote."""
    fleet = Fleet(tmp_path, 1, inbox_of(1))
    clone = fleet.clones[0]
    os.environ["FAKE_AGENT_LOG"] = str(fleet.log)
    try:
        faults.on("record.after_write", lambda: git(clone, "reset", "-q", "--hard"))
        tick(Vault.open(clone), wait_settle=False)
    finally:
        faults.on("record.after_write", None)
        del os.environ["FAKE_AGENT_LOG"]
    assert fleet.runs() == {"REQ-000": 1}
    assert {r.state.value for r in fleet.remote_requests().values()} == {"done"}
    tick(Vault.open(clone), wait_settle=False)
    assert {r.state.value for r in fleet.remote_requests().values()} == {"done"}, "and it stays done"
    assert "- status: done" in (clone / INBOX).read_text()


@pytest.mark.parametrize("point", ["result.after_push", "record.after_write"])
def test_a_reset_at_any_point_after_the_result_push_loses_nothing(tmp_path: Path, point: str) -> None:
    """The hard reset lands after the result reached the remote but before (or after) this clone took it
    in: the remote keeps it, and the clone has it again after its next pull."""
    fleet = Fleet(tmp_path, 1, inbox_of(2))
    clone = fleet.clones[0]
    os.environ["FAKE_AGENT_LOG"] = str(fleet.log)
    try:
        faults.on(point, lambda: git(clone, "reset", "-q", "--hard"))
        tick(Vault.open(clone), wait_settle=False)
        faults.on(point, None)
        tick(Vault.open(clone), wait_settle=False)
    finally:
        faults.on(point, None)
        del os.environ["FAKE_AGENT_LOG"]
    assert fleet.runs() == {"REQ-000": 1, "REQ-001": 1}
    assert {r.state.value for r in fleet.remote_requests().values()} == {"done"}
    text = (clone / INBOX).read_text()
    assert text.count("- status: done") == 2 and text.count("### Result") == 2
    assert git(clone, "status", "--porcelain", "--untracked-files=no").strip() == ""


def test_a_request_typed_during_a_job_and_committed_by_obsidian_git_is_not_doubled(tmp_path: Path) -> None:
    """The person appends a request while a job runs; obsidian-git commits it just after vaultops pushed the
    job's result.  vaultops's commits carry only vaultops's lines, so the request is in the inbox once."""
    fleet = Fleet(tmp_path, 1, inbox_of(1))
    clone = fleet.clones[0]
    git(clone, "config", "user.name", "Person")
    git(clone, "config", "user.email", "person@example.invalid")
    path = clone / INBOX
    typed = request_block("REQ-typed", "Summarise the typed note.")
    os.environ["FAKE_AGENT_LOG"] = str(fleet.log)
    try:
        faults.on("claim.after_push", lambda: path.write_text(path.read_text() + typed))
        faults.on("result.after_push", lambda: backup(clone, "typed"))
        tick(Vault.open(clone), wait_settle=False)
        faults.on("claim.after_push", None)
        faults.on("result.after_push", None)
        for _ in range(3):
            tick(Vault.open(clone), wait_settle=False)
            backup(clone, "later")
    finally:
        faults.on("claim.after_push", None)
        faults.on("result.after_push", None)
        del os.environ["FAKE_AGENT_LOG"]
    final = fleet.remote_inbox()
    assert final.count("## REQ-typed") == 1, final
    assert "Late result" not in final and final.count("### Result") == 2, final
    assert {r.id: r.state.value for r in fleet.remote_requests().values()} == {
        "REQ-000": "done",
        "REQ-typed": "done",
    }
    assert fleet.runs() == {"REQ-000": 1, "REQ-typed": 1}


def test_a_persons_commit_that_git_cannot_merge_is_replayed_when_it_only_adds_lines(tmp_path: Path) -> None:
    """On machine 0's clone obsidian-git committed a new request at the end of the inbox; meanwhile machine
    1 pushed a result onto the last block.  git's merge fails on that; vaultops replays the person's
    insertions on top, under the person's name, and pushes them."""
    fleet = Fleet(tmp_path, 2, inbox_of(1))
    shared = fleet.clones[0]
    assert fleet.tick(1).returncode == 0  # machine 1 runs REQ-000: its result ends the inbox
    path = shared / INBOX
    path.write_text(path.read_text() + request_block("REQ-typed", "Summarise the typed note."))
    git(
        shared,
        "-c",
        "user.name=Person",
        "-c",
        "user.email=person@example.invalid",
        "commit",
        "-qam",
        "backup",
    )
    proc = fleet.tick(0)
    assert proc.returncode == 0, proc.stderr
    assert "cannot follow" not in proc.stderr
    requests = fleet.remote_requests()
    assert [rid for rid in requests] == ["REQ-000", "REQ-typed"]
    assert {r.state.value for r in requests.values()} == {"done"}
    assert fleet.runs() == {"REQ-000": 1, "REQ-typed": 1}
    authors = git(fleet.remote, "log", "--format=%an", fleet.branch).splitlines()
    assert "Person" in authors
    assert no_markers(fleet.remote_inbox())


def test_a_persons_commit_that_changes_lines_and_does_not_merge_blocks_claims_and_says_so(
    tmp_path: Path,
) -> None:
    fleet = Fleet(tmp_path, 2, inbox_of(1))
    shared = fleet.clones[0]
    assert fleet.tick(1).returncode == 0
    path = shared / INBOX
    path.write_text(path.read_text().replace("Summarise note 0.", "Summarise note 0, briefly.") + "tail\n")
    git(shared, "-c", "user.name=Person", "-c", "user.email=person@example.invalid", "commit", "-qam", "edit")
    person_push(fleet.person(), lambda text: text + request_block("REQ-other", "Summarise another."))
    proc = fleet.tick(0)
    assert proc.returncode == 0
    assert "do not merge" in proc.stderr and "nothing is claimed" in proc.stderr
    assert fleet.runs() == {"REQ-000": 1}
    assert "Summarise note 0, briefly." in path.read_text()  # the person's work is left as it is


def test_a_rebase_under_way_in_the_clone_means_no_claims_and_no_commits_until_it_ends(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 1, inbox_of(1))
    shared = fleet.clones[0]
    head = git(shared, "rev-parse", "HEAD").strip()
    (git_dir := shared / ".git" / "rebase-merge").mkdir()
    (git_dir / "head-name").write_text(f"refs/heads/{fleet.branch}\n")
    git(shared, "checkout", "-q", "--detach")  # as a rebase leaves it
    proc = fleet.tick(0)
    assert proc.returncode == 0
    assert "a rebase is in progress" in proc.stderr and "nothing is claimed" in proc.stderr
    assert fleet.runs() == {}
    assert git(shared, "rev-parse", "HEAD").strip() == head
    shutil.rmtree(git_dir)
    git(shared, "checkout", "-q", fleet.branch)  # the rebase ended
    assert fleet.tick(0).returncode == 0
    assert fleet.runs() == {"REQ-000": 1}
    assert fleet.remote_requests()["REQ-000"].state.value == "done"


def test_an_index_lock_held_by_a_working_git_is_waited_for_not_removed(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 1, inbox_of(1))
    shared = fleet.clones[0]
    lock = shared / ".git" / "index.lock"
    lock.write_text("")
    # a git process working in the clone (it waits on stdin) stands for obsidian-git mid-commit
    working = subprocess.Popen(["git", "cat-file", "--batch"], cwd=shared, stdin=subprocess.PIPE)
    seen_while_working: list[bool] = []

    def release() -> None:
        time.sleep(1.5)
        seen_while_working.append(lock.exists())
        lock.unlink()
        assert working.stdin is not None
        working.stdin.close()
        working.wait()

    releaser = threading.Thread(target=release)
    releaser.start()
    started = time.monotonic()
    try:
        proc = fleet.tick(0)
    finally:
        releaser.join()
    assert time.monotonic() - started >= 1.4, "the tick never met the lock"
    assert seen_while_working == [True], "vaultops removed a lock that a working git held"
    assert proc.returncode == 0, proc.stderr
    assert fleet.runs() == {"REQ-000": 1}
    assert fleet.remote_requests()["REQ-000"].state.value == "done"


def test_a_file_that_only_looks_changed_does_not_stop_the_clone_following_the_remote(tmp_path: Path) -> None:
    """Another tool rewrote the inbox with the same bytes (a new inode, new times): the index's stat data is
    stale, and the move must not take that for the person's change."""
    fleet = Fleet(tmp_path, 2, inbox_of(1))
    clone = fleet.clones[0]
    path = clone / INBOX
    same = path.read_bytes()
    path.unlink()
    path.write_bytes(same)
    os.utime(path, (1_000_000_000, 1_000_000_000))
    person_push(fleet.person(), lambda text: text + request_block("REQ-new", "Summarise the new note."))
    proc = fleet.tick(0)
    assert proc.returncode == 0 and "cannot follow" not in proc.stderr, proc.stderr
    assert fleet.runs() == {"REQ-000": 1, "REQ-new": 1}


def test_a_persons_commit_that_created_todays_daily_note_is_replayed_onto_the_remotes(tmp_path: Path) -> None:
    """obsidian-git committed today's daily note on machine 0 (with lines in it) while machine 1 pushed its
    own daily note for the same day: created on both sides, the person's lines are inserted into the
    remote's version."""
    fleet = Fleet(tmp_path, 2, inbox_of(1))
    shared = fleet.clones[0]
    assert fleet.tick(1).returncode == 0  # machine 1 writes and pushes today's daily note
    tree = git(fleet.remote, "ls-tree", "-r", "--name-only", fleet.branch).split()
    [daily] = [p for p in tree if p.startswith("Daily/") and p.endswith(".md")]
    theirs = git(fleet.remote, "show", f"{fleet.branch}:{daily}")
    mine = shared / daily
    mine.parent.mkdir(exist_ok=True)
    mine.write_text(theirs.split("\n", 1)[0] + "\n\n- 09:00 typed in Obsidian on machine 0\n")
    git(shared, "add", daily)
    git(
        shared, "-c", "user.name=Person", "-c", "user.email=person@example.invalid", "commit", "-qm", "backup"
    )
    proc = fleet.tick(0)
    assert proc.returncode == 0 and "cannot follow" not in proc.stderr, proc.stderr
    text = git(fleet.remote, "show", f"{fleet.branch}:{daily}")
    assert "typed in Obsidian on machine 0" in text and "REQ-000" in text
    assert no_markers(text)


def test_results_wait_for_a_rebase_under_way_before_they_are_written(tmp_path: Path) -> None:
    """obsidian-git's rebase rewrites the notes as it goes: lines written into one meanwhile are lost.
    A result waits until the rebase has ended (here, one that starts just before the result is written)."""
    fleet = Fleet(tmp_path, 1, inbox_of(1))
    clone = fleet.clones[0]
    marker = clone / ".git" / "rebase-merge"

    def rebase_starts() -> None:
        marker.mkdir()
        threading.Timer(1.0, marker.rmdir).start()

    os.environ["FAKE_AGENT_LOG"] = str(fleet.log)
    try:
        faults.on("claim.after_push", rebase_starts)
        started = time.monotonic()
        tick(Vault.open(clone), wait_settle=False)
    finally:
        faults.on("claim.after_push", None)
        del os.environ["FAKE_AGENT_LOG"]
    assert time.monotonic() - started >= 0.9, "the result did not wait for the rebase"
    assert fleet.remote_requests()["REQ-000"].state.value == "done"
    assert fleet.runs() == {"REQ-000": 1}
