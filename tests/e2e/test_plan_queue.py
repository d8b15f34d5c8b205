"""Plan notes in executor-queue/ with real processes: the daemon never runs two whose files overlap at once,
a fan-out's tasks, ``status``, and the daemon putting back lines an editor saved over.  The pass logic
(one job per note, lines at its end, schedules, errors in the note, escalation) runs whole passes on the
engine's twin: tests/unit/test_twin_plan_queue.py."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import FAKE_AGENT, make_vault, with_plans
from vaultops.engine.tick import tick
from vaultops.vault import Vault

QUEUE = "executor-queue"


def vault_with_plans(tmp_path: Path, plans: dict[str, str]) -> Path:
    return with_plans(make_vault(tmp_path / "v", "# Inbox\n"), plans)


def plan(front: str, body: str = "Summarise the open threads in this vault.") -> str:
    return f"---\n{front}---\n{body}\n"


def test_the_daemon_never_runs_plan_notes_with_overlapping_files_at_once(tmp_path: Path) -> None:
    from tests.support.daemon_helpers import Daemon, daemon_vault
    from tests.support.waiting import wait_for

    log = tmp_path / "spans.log"
    script = tmp_path / "slow-agent"
    script.write_text(
        f'#!/bin/sh\necho "start $VAULTOPS_REQUEST" >> "{log}"\nsleep 0.6\n'
        f'echo "end $VAULTOPS_REQUEST" >> "{log}"\n'
    )
    script.chmod(0o755)
    vault = daemon_vault(tmp_path / "v", "# Inbox\n", extra="[limits]\nmax_concurrent = 3\n")
    local = vault / ".vaultops" / "local.toml"
    local.write_text(local.read_text().replace(str(FAKE_AGENT), str(script)))
    for name in (vault / QUEUE).glob("*.md"):
        name.unlink()
    daemon = Daemon(vault)
    try:
        daemon.wait_ready()
        for name, files in (("a.md", "src/tabs/**"), ("b.md", "src/tabs/x.ts"), ("c.md", "docs/**")):
            (vault / QUEUE / name).write_text(plan(f"type: research\nfiles: [{files}]\n"))
        spans = lambda: log.read_text().split("\n") if log.exists() else []  # noqa: E731
        assert wait_for(lambda: sum(line.startswith("end") for line in spans()) == 3, timeout=30), (
            daemon.errors()
        )
    finally:
        assert daemon.stop() == 0
    lines = [line for line in spans() if line]
    open_now: set[str] = set()
    for line in lines:
        what, rid = line.split()
        if what == "start":
            assert not ({"PLAN-a", "PLAN-b"} <= open_now | {rid}), f"a and b ran at once: {lines}"
            open_now.add(rid)
        else:
            open_now.discard(rid)


def test_a_fan_out_records_tasks_in_order_and_a_retry_reruns_only_the_failures(tmp_path: Path) -> None:
    log = tmp_path / "tasks.log"
    broken = tmp_path / "task-2-is-broken"
    broken.touch()
    script = tmp_path / "task-agent"
    script.write_text(
        "#!/bin/sh\n"
        'task=$(printf "%s" "$1" | sed -n "s/^Task \\([0-9]*\\):.*/\\1/p")\n'
        f'echo "$task" >> "{log}"\n'
        f'if [ "$task" = 2 ] && [ -e "{broken}" ]; then echo "cannot reach the API"; exit 1; fi\n'
        'echo "finished task $task"\n'
    )
    script.chmod(0o755)
    vault = vault_with_plans(tmp_path, {"fan.md": plan("type: research\ntasks: [alpha, beta, gamma]\n")})
    local = vault / ".vaultops" / "local.toml"
    # one profile: a failed task is not tried again on a fallback in the same run
    local.write_text(
        local.read_text().replace(str(FAKE_AGENT), str(script))
        + '[routing]\nresearch = ["worker-research"]\n'
    )
    path = vault / QUEUE / "fan.md"
    tick(Vault.open(vault), wait_settle=False)
    text = path.read_text()
    assert sorted(log.read_text().split()) == ["1", "2", "3"]
    order = [text.index(f"task {n} — ") for n in (1, 2, 3)]
    assert order == sorted(order), "results in the list's order"
    assert "task 2 — error" in text and "cannot reach the API" in text
    assert "- tasks: 1 done · 2 error · 3 done" in text
    last = text.rstrip().splitlines()[-1]
    assert last.startswith("- status: error") and "(task 2); `- retry: yes` runs only that one again" in last

    broken.unlink()
    with path.open("a") as fh:
        fh.write("- retry: yes\n")
    tick(Vault.open(vault), wait_settle=False)
    assert sorted(log.read_text().split()) == ["1", "2", "2", "3"], "only the failed task ran again"
    text = path.read_text()
    assert "- tasks: 1 done · 2 done · 3 done" in text
    assert "task 1 — done in an earlier run: alpha" in text
    assert text.rstrip().splitlines()[-1].startswith("- status: done")


def test_status_lists_plan_notes_after_the_inbox(tmp_path: Path, runs: Path) -> None:
    import json

    from tests.support.helpers import vaultops

    vault = vault_with_plans(tmp_path, {"summary.md": plan("type: research\n")})
    tick(Vault.open(vault), wait_settle=False)
    proc = vaultops("--vault", str(vault), "status", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["requests"]
    [row] = [r for r in rows if r["id"] == "PLAN-summary"]
    assert (row["file"], row["state"], row["type"]) == (f"{QUEUE}/summary.md", "done", "research")


def test_the_daemon_puts_back_a_plan_notes_lines_an_editor_saved_over(tmp_path: Path) -> None:
    """An editor that saves the copy it had before vaultops wrote wipes the lock and running lines; the
    daemon writes them back, the job runs once, and its result lands under them."""
    from tests.support.daemon_helpers import Daemon, daemon_vault, save_in_place
    from tests.support.waiting import wait_for

    log = tmp_path / "agent.log"
    vault = daemon_vault(tmp_path / "v", "# Inbox\n")
    for name in (vault / QUEUE).glob("*.md"):
        name.unlink()
    path = vault / QUEUE / "tidy.md"
    daemon = Daemon(vault, {"FAKE_AGENT_LOG": str(log), "FAKE_AGENT_SLEEP": "2"})
    try:
        daemon.wait_ready()
        old = plan("type: research\n")
        path.write_text(old)
        assert wait_for(lambda: "- locked-by:" in path.read_text()), daemon.errors()
        claimed = path.read_text()
        save_in_place(path, old)  # the editor's stale copy
        assert wait_for(lambda: "- locked-by:" in path.read_text(), timeout=5), "claim lines put back"
        assert wait_for(lambda: "- status: done" in path.read_text(), timeout=30), daemon.errors()
    finally:
        assert daemon.stop() == 0
    text = path.read_text()
    assert text.startswith(claimed.rstrip("\n")), "the claim lines are back where they were"
    assert text.count("- locked-by:") == 1 and text.count("### Result") == 1
    assert log.read_text().split() == ["PLAN-tidy"], "it ran once"
