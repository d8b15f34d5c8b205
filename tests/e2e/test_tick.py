"""One pass end to end on a real vault: results under requests, the daily note, one commit."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime
from pathlib import Path

from tests.support.helpers import git, make_vault, vaultops
from vaultops.scan.note import parse_note
from vaultops.vault import Vault

INBOX = """# Inbox

## REQ-2026-05-04-0830-which-git Is git installed?
- type: env-check
- ready: yes
Is git installed? `which git`

## REQ-2026-05-04-0845-summary Summarise
- type: research
- ready: yes
Summarise the open threads in this vault in five bullets.

## REQ-2026-05-04-0900-rotate Rotate the key
- ready: yes
Rotate the Stripe secret key and update the production env file.
"""


def requests_of(vault: Path) -> dict[str, object]:
    note = parse_note("_System/COO-Inbox.md", (vault / "_System" / "COO-Inbox.md").read_bytes())
    return {r.id: r for r in note.requests}


def test_a_pass_records_results_escalates_and_commits(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", INBOX)
    before = (vault / "_System" / "COO-Inbox.md").read_text()
    proc = vaultops("--vault", str(vault), "tick")
    assert proc.returncode == 0, proc.stderr
    after = (vault / "_System" / "COO-Inbox.md").read_text()
    found = requests_of(vault)
    assert found["REQ-2026-05-04-0830-which-git"].state.value == "done"  # type: ignore[attr-defined]
    assert found["REQ-2026-05-04-0845-summary"].state.value == "done"  # type: ignore[attr-defined]
    rotate = found["REQ-2026-05-04-0900-rotate"]
    assert rotate.state.value == "escalated"  # type: ignore[attr-defined]
    assert "key" in rotate.statuses[-1].reason  # type: ignore[attr-defined]
    # append-only: the old note is the new one with lines removed
    old_lines = before.splitlines()
    it = iter(after.splitlines())
    assert all(any(line == new for new in it) for line in old_lines)
    assert "### Result — " in after and "~~~text" in after and "/git" in after
    # one commit, by vaultops, naming the requests, with exactly the written paths
    log = git(vault, "log", "--format=%an|%s", "-n", "1").strip()
    assert log.startswith("vaultops (hermes-coo)|vaultops: 3 requests")
    changed = git(vault, "show", "--name-only", "--format=", "HEAD").split()
    today = datetime.now().strftime("%Y-%m-%d")
    dashboard = ["_System/vaultops.md", f"_System/vaultops/{Vault.open(vault).host}.md"]
    assert sorted(changed) == sorted(["_System/COO-Inbox.md", f"Daily/{today}.md", *dashboard])
    daily = (vault / "Daily" / f"{today}.md").read_text()
    assert daily.startswith("# ")  # from the template
    assert "— hermes-coo — Is git installed?" in daily
    assert (
        "[[_System/COO-Inbox#REQ-2026-05-04-0830-which-git Is git installed?|REQ-2026-05-04-0830-which-git]]"
        in daily
    )


def test_a_second_pass_runs_nothing_again(tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    vault = make_vault(tmp_path / "v", INBOX)
    env = {"FAKE_AGENT_LOG": str(log)}
    assert vaultops("--vault", str(vault), "tick", env=env).returncode == 0
    text = (vault / "_System" / "COO-Inbox.md").read_text()
    proc = vaultops("--vault", str(vault), "tick", env=env)
    assert proc.returncode == 0
    assert "nothing to do" in proc.stdout
    assert (vault / "_System" / "COO-Inbox.md").read_text() == text
    assert log.read_text().splitlines() == ["REQ-2026-05-04-0845-summary"]


def test_status_json_has_the_contract_shape(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", INBOX)
    vaultops("--vault", str(vault), "tick")
    proc = vaultops("--vault", str(vault), "status", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == {"requests", "profiles", "workers", "notifiers", "machines"}
    rows = {r["id"]: r for r in doc["requests"]}
    assert set(next(iter(rows.values()))) == {
        "id",
        "file",
        "state",
        "type",
        "safety_class",
        "locked_by",
        "updated",
    }
    assert rows["REQ-2026-05-04-0830-which-git"]["state"] == "done"
    assert rows["REQ-2026-05-04-0830-which-git"]["type"] == "env-check"
    assert rows["REQ-2026-05-04-0830-which-git"]["locked_by"].startswith("hermes-coo@")
    assert rows["REQ-2026-05-04-0900-rotate"]["safety_class"] == "blocked"


def test_two_concurrent_ticks_run_each_request_once(tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    inbox = "# Inbox\n\n" + "".join(
        f"## REQ-{i:03d}\n- type: research\n- ready: yes\nSummarise note {i}.\n\n" for i in range(6)
    )
    vault = make_vault(tmp_path / "v", inbox)
    env = {"FAKE_AGENT_LOG": str(log), "FAKE_AGENT_SLEEP": "0.2", "VAULTOPS_LIMITS_LOCK_WAIT": "30"}
    import os
    import sys

    cmd = [sys.executable, "-m", "vaultops", "--vault", str(vault), "tick"]
    procs = [
        subprocess.Popen(
            cmd, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    runs = log.read_text().splitlines()
    assert sorted(runs) == [f"REQ-{i:03d}" for i in range(6)]


def test_a_second_tick_that_cannot_get_the_lock_says_who_holds_it(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", "# Inbox\n\n## REQ-slow\n- type: research\n- ready: yes\nSummarise.\n")
    import os
    import sys
    import time

    env = {**os.environ, "FAKE_AGENT_SLEEP": "3"}
    first = subprocess.Popen(
        [sys.executable, "-m", "vaultops", "--vault", str(vault), "tick"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 10
    while not (vault / ".vaultops" / "state" / "vault.lock.json").exists() and time.time() < deadline:
        time.sleep(0.05)
    second = vaultops("--vault", str(vault), "tick", env={"VAULTOPS_LIMITS_LOCK_WAIT": "0.5"})
    first.communicate(timeout=60)
    assert second.returncode == 75
    assert "another pass holds the vault lock" in second.stderr
    assert f"pid {first.pid}" in second.stderr


def test_a_failed_job_is_not_run_again(tmp_path: Path) -> None:
    """Regression: clearing the input-error marker once made every errored request look edited."""
    log = tmp_path / "agent.log"
    vault = make_vault(
        tmp_path / "v", "# Inbox\n\n## REQ-fails\n- type: research\n- ready: yes\nSummarise.\n"
    )
    env = {"FAKE_AGENT_LOG": str(log), "FAKE_AGENT_EXIT": "3"}
    first = vaultops("--vault", str(vault), "tick", env=env)
    assert "REQ-fails: error" in first.stdout
    runs = log.read_text().splitlines()
    assert runs and set(runs) == {"REQ-fails"}  # the pass itself may try the fallback once
    second = vaultops("--vault", str(vault), "tick", env=env)
    assert "nothing to do" in second.stdout, second.stdout
    assert log.read_text().splitlines() == runs


def test_an_input_error_is_looked_at_again_after_an_edit(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", "# Inbox\n\n## REQ-empty\n- ready: yes\n")
    assert "REQ-empty: error" in vaultops("--vault", str(vault), "tick").stdout
    assert "nothing to do" in vaultops("--vault", str(vault), "tick").stdout
    inbox = vault / "_System" / "COO-Inbox.md"
    inbox.write_text(
        inbox.read_text().replace("- ready: yes\n", "- ready: yes\n- type: env-check\nIs git installed?\n")
    )
    third = vaultops("--vault", str(vault), "tick")
    assert "REQ-empty: done" in third.stdout, third.stdout


def test_renaming_a_duplicate_id_lets_it_run(tmp_path: Path) -> None:
    inbox = (
        "# Inbox\n\n## REQ-dup\n- type: research\n- ready: yes\nSummarise the first note.\n\n"
        "## REQ-dup\n- type: research\n- ready: yes\nSummarise the second note.\n"
    )
    vault = make_vault(tmp_path / "v", inbox)
    assert vaultops("--vault", str(vault), "tick").stdout.count("REQ-dup: error") == 2
    path = vault / "_System" / "COO-Inbox.md"
    text = path.read_text()
    path.write_text(
        text[: text.rindex("## REQ-dup")] + text[text.rindex("## REQ-dup") :].replace("REQ-dup", "REQ-two", 1)
    )
    proc = vaultops("--vault", str(vault), "tick")
    assert "REQ-two: done" in proc.stdout and "REQ-dup: done" in proc.stdout, proc.stdout
    assert "nothing to do" in vaultops("--vault", str(vault), "tick").stdout


def test_a_stale_index_lock_left_by_a_killed_git_is_cleared(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", INBOX)
    (vault / ".git" / "index.lock").write_text("")  # as a git killed mid-commit leaves it
    proc = vaultops("--vault", str(vault), "tick")
    assert "committed" in proc.stdout, proc.stdout + proc.stderr
    assert not (vault / ".git" / "index.lock").exists()


def test_lines_wiped_by_an_editor_do_not_make_heavy_work_run_again(tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    vault = make_vault(tmp_path / "v", INBOX)
    path = vault / "_System" / "COO-Inbox.md"
    original = path.read_text()
    assert vaultops("--vault", str(vault), "tick", env={"FAKE_AGENT_LOG": str(log)}).returncode == 0
    path.write_text(original)  # an editor saves the copy it had before vaultops wrote
    proc = vaultops("--vault", str(vault), "tick", env={"FAKE_AGENT_LOG": str(log)})
    assert log.read_text().splitlines() == ["REQ-2026-05-04-0845-summary"], "the agent ran once"
    assert "vaultops already ran this request" in path.read_text()
    assert "REQ-2026-05-04-0830-which-git: done" in proc.stdout, "a light check may run again"
    # regression: the error it wrote was looked at again as an input error, and the work ran again
    third = vaultops("--vault", str(vault), "tick", env={"FAKE_AGENT_LOG": str(log)})
    assert log.read_text().splitlines() == ["REQ-2026-05-04-0845-summary"], third.stdout
