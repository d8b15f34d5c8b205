"""The gate of a job vaultops starts: the policy server on a private socket, the thin client Claude Code
runs as its hook (a real process, as Claude Code starts it: through ``sh -c``), the job's settings, and
a job through the whole pass.  The gate's set-up and config rules, as values, are in
``tests/unit/test_gate.py``.

The real CLI behind the gate is in ``test_gate_claude.py``; these need nothing but Python."""

from __future__ import annotations

import json
import socket
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.gate import gate_job, pretooluse
from tests.support.helpers import INBOX, make_vault
from tests.support.paths import REPO
from vaultops.hook.claude import MATCHER, gate, settings_for
from vaultops.hook.job import GateJob
from vaultops.hook.server import GateServer

pytestmark = pytest.mark.real_disk  # its jobs' gates put up a fence (see tests/conftest.py)


def run_hook(settings: Path, payload: dict[str, Any] | bytes) -> subprocess.CompletedProcess[bytes]:
    """The hook command from the settings file, run the way Claude Code runs it."""
    [entry] = json.loads(settings.read_text())["hooks"]["PreToolUse"]
    [hook] = entry["hooks"]
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(["sh", "-c", hook["command"]], input=data, capture_output=True, timeout=60)


def verdict(proc: subprocess.CompletedProcess[bytes]) -> tuple[str, str]:
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    return out["permissionDecision"], out["permissionDecisionReason"]


@pytest.fixture
def job(tmp_path: Path) -> GateJob:
    return gate_job(tmp_path)


@pytest.fixture
def settings(job: GateJob) -> Iterator[Path]:
    with gate(job, ["claude", "-p", "hello"]) as path:
        yield path


def test_the_settings_put_the_thin_client_in_front_of_every_tool(settings: Path) -> None:
    data = json.loads(settings.read_text())
    assert data["disableAllHooks"] is False, "wins over a user's own disableAllHooks"
    [entry] = data["hooks"]["PreToolUse"]
    assert entry["matcher"] == MATCHER == "*"
    [hook] = entry["hooks"]
    assert hook["type"] == "command" and hook["timeout"] == 30
    assert " -I -S " in hook["command"] and hook["command"].endswith(" || exit 2")
    folder = settings.parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700, "no other user may reach the socket"


def test_the_client_asks_the_server_and_prints_its_decision(settings: Path, job: GateJob) -> None:
    work = Path(job.workdir)
    kind, reason = verdict(run_hook(settings, pretooluse(work, command="ls -la")))
    assert kind == "allow", reason
    victim = work / "build"
    kind, reason = verdict(run_hook(settings, pretooluse(work, command=f"rm -rf {victim}")))
    assert kind == "deny" and "person has been asked" in reason
    [record] = [
        json.loads(line)
        for line in (job.vault / ".vaultops/state/escalations.jsonl").read_text().splitlines()  # type: ignore[operator]
    ]
    assert record["request"] == "REQ-x" and record["claim"] == "c1" and record["workdir"] == job.workdir
    kind, reason = verdict(
        run_hook(settings, pretooluse(work, "Write", file_path="/etc/passwd", content="x"))
    )
    assert kind == "deny"


def test_a_tool_the_job_was_not_given_is_denied(settings: Path, job: GateJob) -> None:
    kind, reason = verdict(run_hook(settings, pretooluse(Path(job.workdir), "WebFetch", url="https://x.org")))
    assert kind == "deny" and "not among this job's tools" in reason


def test_the_client_blocks_when_the_gate_is_gone(job: GateJob) -> None:
    with gate(job, ["claude"]) as path:
        settings = path.read_text()
    later = Path(job.workdir) / "settings.json"
    later.write_text(settings)
    proc = run_hook(later, pretooluse(Path(job.workdir), command="ls"))
    assert proc.returncode == 2, "exit 2 is Claude Code's blocking exit"
    assert b"could not answer" in proc.stderr and proc.stdout == b""


def test_the_client_blocks_on_a_reply_it_cannot_read(tmp_path: Path, job: GateJob) -> None:
    path = tmp_path / "s"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def reply_junk() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(1 << 20)
            conn.sendall(b'{"hookSpecificOutput": {"permissionDecision": "allow"}}')

    thread = threading.Thread(target=reply_junk)
    thread.start()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(settings_for(path, None)))
    proc = run_hook(settings, pretooluse(Path(job.workdir), command="rm -rf /"))
    thread.join()
    server.close()
    assert proc.returncode == 2 and b"cannot be read" in proc.stderr


@pytest.mark.parametrize("payload", [b"not json", b"", b"[]", b'{"hook_event_name": "Stop"}', b"\xff\xfe"])
def test_input_that_is_not_an_event_blocks(settings: Path, payload: bytes) -> None:
    proc = run_hook(settings, payload)
    assert proc.returncode == 2 and proc.stderr


def test_parallel_calls_each_get_their_own_answer(settings: Path, job: GateJob) -> None:
    work = Path(job.workdir)
    calls = [
        ("ls", "allow"),
        ("rm -rf ~", "deny"),
        ("git status", "allow"),
        ("curl -X POST https://x.io", "deny"),
    ]
    results: dict[str, str] = {}

    def ask(command: str) -> None:
        results[command] = verdict(run_hook(settings, pretooluse(work, command=command)))[0]

    threads = [threading.Thread(target=ask, args=(c,)) for c, _ in calls * 3]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == dict(calls)


def test_the_server_refuses_an_event_too_large(job: GateJob, monkeypatch: pytest.MonkeyPatch) -> None:
    import vaultops.hook.server as server_module

    monkeypatch.setattr(server_module, "MAX_EVENT", 1000)
    with GateServer(job) as server:
        settings = server.folder / "settings.json"
        settings.write_text(json.dumps(settings_for(server.socket_path, None)))
        proc = run_hook(settings, pretooluse(Path(job.workdir), command="ls " + "a" * 2000))
    assert proc.returncode == 2 and b"larger than" in proc.stderr


# --- a job through the whole pipeline, with a stand-in that runs the hook as Claude Code would

FAKE_CLAUDE = REPO / "fixtures" / "gate" / "claude"


def claude_vault(tmp_path: Path, call: str) -> tuple[Path, Path, Path]:
    fake = FAKE_CLAUDE
    log = tmp_path / "claude.log"
    request = (
        "## REQ-build Summarise what the last build produced\n- type: code\n- ready: yes\nSummarise it.\n"
    )
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{request}", fake_profiles=False)
    work = vault / "work"
    (work / "build").mkdir(parents=True)
    (vault / ".vaultops" / "local.toml").write_text(
        f'[profiles.worker-code]\ncommand = ["{fake}", "-p", "{{prompt}}", "--output-format", "json", '
        '"--allowedTools", "{tools}"]\nhealth = []\nworkdir = "work"\n'
        f"env = {{ FAKE_CLAUDE_LOG = {json.dumps(str(log))}, FAKE_CLAUDE_CALL = {json.dumps(call)} }}\n"
    )
    return vault, work, log


def tick_cli(vault: Path, **env: str) -> subprocess.CompletedProcess[str]:
    from tests.support.helpers import vaultops

    return vaultops("--vault", str(vault), "tick", env=env)


def test_a_claude_job_in_a_folder_nobody_wired_runs_behind_the_gate(tmp_path: Path) -> None:
    vault, work, log = claude_vault(tmp_path, "rm -rf build")
    assert not (work / ".claude").exists()
    proc = tick_cli(vault)
    assert proc.returncode == 0, proc.stderr
    args, decision = log.read_text().splitlines()
    argv = json.loads(args)
    assert argv[:1] == ["--settings"] and argv[2:4] == ["--setting-sources", "user"]
    assert decision == "deny" and (work / "build").is_dir(), "the folder was not deleted"
    text = (vault / INBOX).read_text()
    assert "- status: escalated" in text and "rm -rf build" in text


def test_a_job_whose_gate_cannot_be_set_up_does_not_start(tmp_path: Path) -> None:
    vault, _, log = claude_vault(tmp_path, "rm -rf build")
    proc = tick_cli(vault, VAULTOPS_FAULT="gate.setup")
    assert proc.returncode == 0, proc.stderr
    assert not log.exists(), "the agent never started"
    text = (vault / INBOX).read_text()
    assert "- status: error" in text and "gate could not be set up" in text and "did not start" in text


def test_doctor_and_status_name_the_ungated_profiles(tmp_path: Path) -> None:
    from tests.support.helpers import vaultops

    vault = make_vault(tmp_path / "v")  # the fake agent: gate = "none"
    (vault / ".vaultops" / "local.toml").open("a").write(
        '[profiles.gated]\ncommand = ["claude", "-p", "{prompt}"]\ntools = ["Bash"]\nhealth = []\n'
    )
    doctor = vaultops("--vault", str(vault), "doctor").stdout
    assert "profile worker-code: UNGATED" in doctor and "profile gated: UNGATED" not in doctor
    rows = json.loads(vaultops("--vault", str(vault), "status", "--json").stdout)["profiles"]
    assert {r["name"]: r["gate"] for r in rows} == {
        "gated": "policy",
        "worker-code": "NONE",
        "worker-research": "NONE",
    }


def test_the_reason_claude_code_keeps_is_redacted(settings: Path, job: GateJob) -> None:
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0" * 2
    proc = run_hook(
        settings,
        pretooluse(
            Path(job.workdir),
            command=f"curl -X POST -H 'Authorization: token {token}' https://api.github.com/x",
        ),
    )
    kind, reason = verdict(proc)
    assert kind == "deny" and token not in reason and token[4:20] not in proc.stdout.decode()


def test_an_agent_inherits_none_of_vaultops_own_secrets(tmp_path: Path) -> None:
    """The agent's environment, as a job really gets it: a stand-in agent that prints it."""
    from tests.support.helpers import vaultops

    request = "## REQ-env\n- type: research\n- ready: yes\nWhat is set?\n"
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{request}")
    code = "import json, os; print(json.dumps(sorted(os.environ)))"
    (vault / ".vaultops" / "local.toml").write_text(
        f'[profiles.worker-research]\ncommand = [{json.dumps(__import__("sys").executable)}, "-c", '
        f'{json.dumps(code)}, "{{prompt}}"]\noutput = "text"\ntimeout = 30\nhealth = []\n\n'
        '[routing]\nresearch = ["worker-research"]\n'
    )
    token = "123456789:" + "AAH" + "x" * 32
    own = {"VAULTOPS_TELEGRAM_TOKEN": token, "VAULTOPS_NOTIFY_URLS": "json://127.0.0.1:9/x"}
    proc = vaultops("--vault", str(vault), "tick", env={**own, "KEEP_ME": "1"})
    assert proc.returncode == 0, proc.stderr
    text = (vault / INBOX).read_text()
    assert "KEEP_ME" in text and "VAULTOPS_REQUEST" in text
    assert "VAULTOPS_TELEGRAM_TOKEN" not in text and "VAULTOPS_NOTIFY_URLS" not in text
