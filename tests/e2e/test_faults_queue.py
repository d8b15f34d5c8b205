"""Field faults: one note, request or step can fail only itself, and the daemon never spins.

Each test reproduces a finding of the field trial (issue 25) with real vaults, git and processes.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from datetime import datetime
from pathlib import Path

from tests.support.daemon_helpers import Daemon, block, daemon_vault, requests, save_in_place
from tests.support.helpers import git, inbox_path, make_vault, vaultops, with_plans
from tests.support.waiting import wait_for
from vaultops.scan.note import parse_note
from vaultops.scan.plan import as_plan_note

HOURLY = "---\ntype: research\nschedule: every 1h\n---\nplan-hourly-6620 runs hourly.\n"


def plan_state(vault: Path, name: str) -> str:
    raw = (vault / "executor-queue" / name).read_bytes()
    note = as_plan_note(parse_note(name, raw, requests=False), datetime.now().astimezone())
    return note.requests[0].state.value if note.requests else "open"


def test_an_escalated_scheduled_note_never_stops_the_passes_after_it(tmp_path: Path) -> None:
    """It raised KeyError in the gate on every pass after its escalation: tick exited 70 and no other
    request was ever taken."""
    vault = with_plans(make_vault(tmp_path / "v"), {"plan-hourly.md": HOURLY})
    first = vaultops("--vault", str(vault), "tick", "--no-wait")
    assert first.returncode == 0, first.stderr
    assert plan_state(vault, "plan-hourly.md") == "escalated"
    inbox = inbox_path(vault)
    inbox.write_text(inbox.read_text() + block("REQ-after", "Summarise the notes on tabs."))
    second = vaultops("--vault", str(vault), "tick", "--no-wait")
    assert second.returncode == 0, second.stderr
    assert "internal error" not in second.stderr + second.stdout
    assert requests(vault)["REQ-after"].state.value == "done"
    assert plan_state(vault, "plan-hourly.md") == "escalated"  # it waits for the person, said once
    assert (vault / "executor-queue" / "plan-hourly.md").read_text().count("- status:") == 1


def test_an_approved_escalated_scheduled_note_runs(tmp_path: Path) -> None:
    """Its answer had been ignored: an escalated note waited for its schedule, which waits for it."""
    vault = with_plans(make_vault(tmp_path / "v"), {"plan-hourly.md": HOURLY})
    assert vaultops("--vault", str(vault), "tick", "--no-wait").returncode == 0
    path = vault / "executor-queue" / "plan-hourly.md"
    path.write_text(path.read_text() + "- decision: approve\n")
    proc = vaultops("--vault", str(vault), "tick", "--no-wait")
    assert proc.returncode == 0, proc.stderr
    assert plan_state(vault, "plan-hourly.md") == "done", path.read_text()


def test_a_nul_byte_in_a_line_vaultops_writes_is_shown_and_committed(tmp_path: Path) -> None:
    """An agent's command ending in NUL was copied into an escalation line: the commit failed with
    "embedded null byte", tick exited 70, and the next tick left the changes staged."""
    from vaultops.model import Target
    from vaultops.store.inserts import Insert
    from vaultops.sync.git import Git

    ins = Insert(
        Target("REQ-x", 0), ("- status: escalated — blocked: `rm -rf /\x00`", "ok\x1b[31m"), frozenset()
    )
    assert all("\x00" not in line and "\x1b" not in line for line in ins.lines)
    assert ins.lines[0].endswith("/\ufffd`")
    repo = make_vault(tmp_path / "v")
    (repo / "note.md").write_text("x\n")
    result = Git(repo).commit_paths(["note.md"], "vaultops: REQ-x escalated — `rm -rf /\x00`", "coo")
    assert result.sha is not None
    assert "\ufffd" in git(repo, "log", "-1", "--format=%s")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0  # utime + stime, in clock ticks of 1/100 s


def _log_lines(daemon: Daemon) -> list[dict[str, object]]:
    return [json.loads(line) for line in daemon.log.read_text().splitlines() if line.strip()]


def test_a_step_that_fails_every_pass_is_said_once_and_backs_off(tmp_path: Path) -> None:
    """It spun at about 100 failing passes a second, with thousands of identical warnings."""
    vault = daemon_vault(tmp_path / "v")
    daemon = Daemon(vault, {"VAULTOPS_FAULT": "pass.start:raise@2+"})  # every pass after the first
    try:
        daemon.wait_ready()
        inbox = inbox_path(vault)
        save_in_place(inbox, inbox.read_text() + block("REQ-a", "Summarise the notes."))
        assert wait_for(lambda: "a pass failed" in daemon.log.read_text())
        cpu_before, wall_before = _cpu_seconds(daemon.proc.pid), time.monotonic()
        for i in range(5):  # more saves: each would have started a failing pass at once
            save_in_place(inbox, inbox.read_text() + f"\nmore {i}\n")
        time.sleep(4)  # a window to measure, not a handshake: the assertions below hold for any length
        cpu = _cpu_seconds(daemon.proc.pid) - cpu_before
        window = time.monotonic() - wall_before
        tries = [r for r in _log_lines(daemon) if r["event"] == "failed again"]
        warnings = [r for r in _log_lines(daemon) if "a pass failed" in str(r.get("message", ""))]
        print(f"\nCPU while a step fails every pass: {cpu:.2f} s in {window:.1f} s ({cpu / window:.1%})")
        assert len(warnings) == 1, warnings
        assert len(tries) <= 6, f"{len(tries)} tries in {window:.1f} s: the backoff doubles from 1 s"
        assert cpu / window < 0.3, f"{cpu:.2f} s of CPU in {window:.1f} s"
        assert daemon.proc.poll() is None
    finally:
        assert daemon.stop() == 0, daemon.errors()


def test_a_result_that_fails_to_record_once_is_recorded_later(tmp_path: Path) -> None:
    """It was never retried, though the log said it would be: the request stayed `running`."""
    vault = daemon_vault(tmp_path / "v")
    daemon = Daemon(vault, {"VAULTOPS_FAULT": "record.start:raise@1"})
    try:
        daemon.wait_ready()
        inbox = inbox_path(vault)
        save_in_place(inbox, inbox.read_text() + block("REQ-rec", "Summarise the notes on tabs."))
        assert wait_for(lambda: requests(vault)["REQ-rec"].state.value == "done", timeout=60), (
            inbox.read_text()
        )
    finally:
        assert daemon.stop() == 0, daemon.errors()
    assert "a record failed" in daemon.log.read_text()
    assert inbox.read_text().count("### Result") == 1
    committed = subprocess.run(
        ["git", "show", "HEAD:_System/COO-Inbox.md"], cwd=vault, capture_output=True, text=True, check=True
    ).stdout
    assert "- status: done" in committed


PLAN = "---\ntype: research\n---\nSummarise the notes on tabs.\n"


def test_a_note_that_fails_stops_only_itself(tmp_path: Path) -> None:
    """Whatever fails while one note is handled (here the inbox, by a fault) is said on one line, and
    the queue's other notes are taken in the same pass."""
    vault = with_plans(make_vault(tmp_path / "v"), {"sweep.md": PLAN})
    inbox = inbox_path(vault)
    inbox.write_text(inbox.read_text() + block("REQ-in", "Summarise the notes."))
    proc = vaultops("--vault", str(vault), "tick", "--no-wait", env={"VAULTOPS_FAULT": "claim.note:raise@1"})
    assert proc.returncode == 0, proc.stderr
    said = proc.stdout + proc.stderr
    assert "_System/COO-Inbox.md: vaultops failed while handling this note (RuntimeError" in said, said
    assert "internal error" not in said
    assert plan_state(vault, "sweep.md") == "done"
    assert requests(vault)["REQ-in"].state.value == "open"  # untouched, and taken by the next pass
    again = vaultops("--vault", str(vault), "tick", "--no-wait")
    assert again.returncode == 0, again.stderr
    assert requests(vault)["REQ-in"].state.value == "done"


def test_tick_records_and_commits_each_batch_before_claiming_the_next(tmp_path: Path) -> None:
    """It claimed every open request before recording anything: a tick killed after 5,581 agents had run
    had recorded and committed none of them.  Killed on its second batch's jobs, the first is kept."""
    inbox = "# Inbox\n" + "".join(block(f"REQ-{i:02d}", f"Summarise part {i}.") for i in range(10))
    vault = make_vault(tmp_path / "v", inbox)  # max_concurrent = 3: batches of six
    runs = tmp_path / "runs.log"
    env = {"FAKE_AGENT_LOG": str(runs), "VAULTOPS_FAULT": "pass.start_jobs:kill@2"}
    killed = vaultops("--vault", str(vault), "tick", "--no-wait", env=env)
    assert killed.returncode == -9, killed.stderr
    states = {rid: r.state.value for rid, r in requests(vault).items()}
    done = sorted(rid for rid, state in states.items() if state == "done")
    assert len(done) == 6, states  # the first batch: three slots, two jobs each
    committed = git(vault, "show", "HEAD:_System/COO-Inbox.md")
    assert committed.count("- status: done") == 6
    finish = vaultops("--vault", str(vault), "tick", "--no-wait", env={"FAKE_AGENT_LOG": str(runs)})
    assert finish.returncode == 0, finish.stderr
    assert all(r.state.value in ("done", "interrupted") for r in requests(vault).values())
    assert len(runs.read_text().splitlines()) == len(set(runs.read_text().splitlines()))  # none twice


def test_a_claim_whose_job_never_started_is_closed_without_a_restart(tmp_path: Path) -> None:
    """A pass that failed between the claim and the job's start left the request `running` until the
    daemon was restarted."""
    vault = daemon_vault(tmp_path / "v")
    runs = tmp_path / "runs.log"
    daemon = Daemon(vault, {"VAULTOPS_FAULT": "daemon.submit:raise@1", "FAKE_AGENT_LOG": str(runs)})
    try:
        daemon.wait_ready()
        inbox = inbox_path(vault)
        save_in_place(inbox, inbox.read_text() + block("REQ-lost", "Summarise the notes on tabs."))
        assert wait_for(lambda: requests(vault)["REQ-lost"].state.value == "interrupted"), inbox.read_text()
        assert "its job never started: nothing ran" in inbox.read_text()
        assert not runs.exists()
        save_in_place(inbox, inbox.read_text() + "- retry: yes\n")
        assert wait_for(lambda: requests(vault)["REQ-lost"].state.value == "done"), inbox.read_text()
    finally:
        assert daemon.stop() == 0, daemon.errors()
    assert runs.read_text().splitlines() == ["REQ-lost"]


def test_a_result_finished_before_a_kill_is_recorded_when_vaultops_starts_again(tmp_path: Path) -> None:
    """The agent's result was lost and the request ended `interrupted` when the process died between the
    job's end and its record; now the result is kept on disk until it is in the note."""
    vault = daemon_vault(tmp_path / "v")
    runs = tmp_path / "runs.log"
    inbox = inbox_path(vault)
    daemon = Daemon(vault, {"VAULTOPS_FAULT": "record.start:kill@1", "FAKE_AGENT_LOG": str(runs)})
    try:
        daemon.wait_ready()
        save_in_place(inbox, inbox.read_text() + block("REQ-kept", "Summarise the notes on tabs."))
        assert wait_for(lambda: daemon.proc.poll() is not None, timeout=60), "the fault never fired"
    finally:
        daemon.kill()
    assert requests(vault)["REQ-kept"].state.value == "running"
    again = vaultops("--vault", str(vault), "tick", "--no-wait", env={"FAKE_AGENT_LOG": str(runs)})
    assert again.returncode == 0, again.stderr
    assert requests(vault)["REQ-kept"].state.value == "done", inbox.read_text()
    assert inbox.read_text().count("### Result") == 1
    assert runs.read_text().splitlines() == ["REQ-kept"]  # run once, recorded once
    assert "- status: done" in git(vault, "show", "HEAD:_System/COO-Inbox.md")
    assert not list((vault / ".vaultops" / "state" / "kept").glob("finished-*"))


def test_what_a_tick_could_not_commit_is_committed_by_the_next_tick(tmp_path: Path) -> None:
    """A commit that failed (here a pre-commit hook; in the field a NUL byte) was remembered by that
    process alone: the next tick said "nothing to do" and left the result uncommitted."""
    vault = make_vault(tmp_path / "v")
    inbox = inbox_path(vault)
    inbox.write_text(inbox.read_text() + block("REQ-git", "Is git installed? `which git`", kind="env-check"))
    git(vault, "commit", "-qam", "the person's request")
    marker = tmp_path / "refuse-commits"
    marker.touch()
    hook = vault / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntest ! -e '{marker}'\n")
    hook.chmod(0o755)
    first = vaultops("--vault", str(vault), "tick", "--no-wait")
    assert "could not commit" in first.stdout + first.stderr
    assert requests(vault)["REQ-git"].state.value == "done"
    assert git(vault, "status", "--porcelain", "--", "_System/COO-Inbox.md").strip()
    marker.unlink()
    second = vaultops("--vault", str(vault), "tick", "--no-wait")
    assert second.returncode == 0, second.stderr
    assert not git(vault, "status", "--porcelain", "--", "_System/COO-Inbox.md").strip(), second.stdout
    assert "- status: done" in git(vault, "show", "HEAD:_System/COO-Inbox.md")


def test_a_job_vaultops_fails_to_run_is_that_jobs_error_and_the_others_are_recorded(tmp_path: Path) -> None:
    """A job that raised in tick's pool took the whole tick down (exit 70) with every other result."""
    inbox = "# Inbox\n" + block("REQ-one", "Summarise part one.") + block("REQ-two", "Summarise part two.")
    vault = make_vault(tmp_path / "v", inbox)
    proc = vaultops("--vault", str(vault), "tick", "--no-wait", env={"VAULTOPS_FAULT": "job.run:raise@1"})
    assert proc.returncode == 0, proc.stderr
    states = {rid: r.state.value for rid, r in requests(vault).items()}
    assert sorted(states.values()) == ["done", "error"], states
    assert "vaultops failed while running it (RuntimeError: fault job.run)" in inbox_path(vault).read_text()
    assert "- status: done" in git(vault, "show", "HEAD:_System/COO-Inbox.md")


def test_a_result_vaultops_fails_to_record_is_that_requests_error_and_the_others_land(tmp_path: Path) -> None:
    """The third time a result's lines are made is the record of the first (each job's end keeps its
    lines first, and a failure there is only a safety net missed)."""
    inbox = "# Inbox\n" + block("REQ-one", "Summarise part one.") + block("REQ-two", "Summarise part two.")
    vault = make_vault(tmp_path / "v", inbox)
    proc = vaultops(
        "--vault", str(vault), "tick", "--no-wait", env={"VAULTOPS_FAULT": "record.result:raise@3"}
    )
    assert proc.returncode == 0, proc.stderr
    states = {rid: r.state.value for rid, r in requests(vault).items()}
    assert sorted(states.values()) == ["done", "error"], states
    text = inbox_path(vault).read_text()
    assert "vaultops failed while recording its result (RuntimeError: fault record.result)" in text
    assert not list((vault / ".vaultops" / "state" / "kept").glob("finished-*"))


def test_a_state_db_another_program_holds_is_said_as_such_not_as_a_fault(tmp_path: Path) -> None:
    """A database browser holding state.db locked read as "vaultops failed …; report this"."""
    import sqlite3

    vault = make_vault(tmp_path / "v")
    assert vaultops("--vault", str(vault), "tick", "--no-wait").returncode == 0  # state.db exists
    inbox = inbox_path(vault)
    inbox.write_text(inbox.read_text() + block("REQ-git", "Is git installed? `which git`", kind="env-check"))
    holder = sqlite3.connect(vault / ".vaultops" / "state" / "state.db", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        held = vaultops("--vault", str(vault), "tick", "--no-wait")
    finally:
        holder.close()
    said = held.stdout + held.stderr
    assert "state.db is held locked by another program" in said, said
    assert "report this" not in said and "internal error" not in said
    assert requests(vault)["REQ-git"].state.value == "open"
    freed = vaultops("--vault", str(vault), "tick", "--no-wait")
    assert freed.returncode == 0 and requests(vault)["REQ-git"].state.value == "done", freed.stderr


def test_control_bytes_in_a_plan_notes_name_never_reach_another_note(tmp_path: Path) -> None:
    """A file name is the person's (or a sync tool's) text too: it became the daily note's heading and the
    dashboard's link text raw, escape sequences and bells included."""
    evil = "evil\x1b[31mred\x07.md"
    vault = with_plans(
        make_vault(tmp_path / "v"), {evil: "---\ntype: env-check\n---\nIs git installed? `which git`\n"}
    )
    proc = vaultops("--vault", str(vault), "tick", "--no-wait")
    assert proc.returncode == 0, proc.stderr
    notes = [p for p in vault.rglob("*.md") if p.is_file() and {".git", ".vaultops"}.isdisjoint(p.parts)]
    written = [p for p in notes if p.name != evil]
    assert len(written) >= 3  # the inbox, the daily note, the dashboard (and the machine's note)
    control = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
    assert not [p.name for p in written if control.search(p.read_text(errors="replace"))]
    assert "PLAN-evil-31mred" in (vault / "_System" / "vaultops.md").read_text()
