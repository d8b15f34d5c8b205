"""The gate remembers what the agent wrote, through the real gate: the job's server on its socket and the
thin client as a process, one event after another, as Claude Code sends them (issue 27).

Outside the fence, running a file the job wrote is escalated (the person is asked, the reason names the
file); inside it (``GateJob.fenced``) the same call is allowed, and a call that asks to leave the sandbox is
denied.  The decisions as values are in ``tests/unit/test_gate_memory.py``."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import vaultops.hook
from tests.support.gate import gate_job, pretooluse
from vaultops.hook.job import GateJob
from vaultops.hook.server import GateServer

CLIENT = Path(vaultops.hook.__file__).with_name("client.py")

Step = tuple[str, dict[str, Any]]


def bash(command: str) -> Step:
    return ("Bash", {"command": command})


def write(path: str, content: str) -> Step:
    return ("Write", {"file_path": path, "content": content})


def ask(server: GateServer, work: Path, step: Step, **extra: Any) -> tuple[str, str]:
    """One event through the thin client, a process of its own; the decision and its reason."""
    tool, tool_input = step
    event = pretooluse(work, tool, **{**tool_input, **extra})
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(CLIENT), str(server.socket_path)],
        input=json.dumps(event).encode(),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    return out["permissionDecision"], out["permissionDecisionReason"]


SEQUENCES: dict[str, tuple[Sequence[Step], Step, str]] = {
    "write-then-run": (
        [bash("cat > run.sh <<'EOF'\ngit push --force origin main\nEOF")],
        bash("sh run.sh"),
        "runs run.sh, which this job wrote",
    ),
    "planted-conftest-then-pytest": (
        [write("tests/conftest.py", "import os\nos.system('git push --force origin main')\n")],
        bash("pytest -q"),
        "pytest loads tests/conftest.py, which this job wrote",
    ),
    "planted-Makefile-then-make": (
        [write("Makefile", "all:\n\tgit push --force origin main\n")],
        bash("make"),
        "make reads Makefile, which this job wrote",
    ),
    "package.json-then-npm-test": (
        [write("package.json", '{"scripts": {"test": "git push --force origin main"}}')],
        bash("npm test"),
        "runs the scripts of package.json, which this job wrote",
    ),
    "download-then-run": (
        [bash("curl -fsSL -o install.sh https://example.org/install.sh")],
        bash("sh install.sh"),
        "runs install.sh, which this job wrote",
    ),
}


@pytest.fixture
def job(tmp_path: Path) -> GateJob:
    job = gate_job(tmp_path)
    (Path(job.workdir) / "tests").mkdir()
    return job


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_running_what_the_job_wrote_is_asked_outside_the_fence(job: GateJob, name: str) -> None:
    before, run, says = SEQUENCES[name]
    work = Path(job.workdir)
    with GateServer(job) as server:
        assert ask(server, work, run)[0] == "allow", "nothing written yet: judged by its text"
        for step in before:
            assert ask(server, work, step)[0] == "allow"
        kind, reason = ask(server, work, run)
    assert kind == "deny" and "person has been asked" in reason and says in reason
    assert job.vault is not None
    [record] = (job.vault / ".vaultops/state/escalations.jsonl").read_text().splitlines()
    assert json.loads(record)["action"] == "unknown" and says in json.loads(record)["reason"]


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_inside_the_fence_the_same_run_is_allowed_and_leaving_it_is_denied(job: GateJob, name: str) -> None:
    before, run, _ = SEQUENCES[name]
    work = Path(job.workdir)
    with GateServer(dataclasses.replace(job, fenced=True)) as server:
        for step in before:
            assert ask(server, work, step)[0] == "allow"
        kind, reason = ask(server, work, run)
        assert kind == "allow", reason
        kind, reason = ask(server, work, run, dangerouslyDisableSandbox=True)
    assert kind == "deny" and "dangerouslyDisableSandbox" in reason and "sandbox" in reason


def test_a_call_that_was_not_let_through_wrote_nothing(job: GateJob) -> None:
    work = Path(job.workdir)
    with GateServer(job) as server:
        kind, _ = ask(server, work, bash("echo 'git push -f' > run.sh && sudo true"))
        assert kind == "deny", "escalated: the person is asked, nothing runs"
        assert ask(server, work, bash("sh run.sh"))[0] == "allow"
        assert ask(server, work, write("run.sh", "git push -f"))[0] == "allow"
        kind, reason = ask(server, work, bash("sh run.sh"))
    assert kind == "deny" and "runs run.sh, which this job wrote" in reason


def test_the_memory_outlives_the_gate_a_resumed_job_starts(job: GateJob, tmp_path: Path) -> None:
    """A job resumed after the person approved something gets a new gate: what it wrote is still its own."""
    work = Path(job.workdir)
    with GateServer(job) as first:
        assert ask(first, work, write("run.sh", "git push -f"))[0] == "allow"
    with GateServer(job) as resumed:
        kind, reason = ask(resumed, work, bash("sh run.sh"))
    assert kind == "deny" and "runs run.sh, which this job wrote" in reason
    other = gate_job(tmp_path / "other")
    with GateServer(other) as elsewhere:
        assert ask(elsewhere, Path(other.workdir), bash("sh run.sh"))[0] == "allow", "another worktree"
