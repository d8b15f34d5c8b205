"""``vaultops hook`` in front of the real Claude Code CLI, offline (``tests/support/fake_anthropic.py``).

The scripted model asks for ``gh pr merge 12`` and then ``pytest -q``; fake ``gh`` and ``pytest`` on PATH log
every call.  The hook is wired by ``vaultops init --claude``, exactly as a user would.  The merge must never
run, pytest must run once, the escalation must land in the vault with the session to resume; once the person
allows exactly that call, the resumed session runs the merge exactly once."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_cli import claude_bin, claude_env, fake_tools, requires_claude, wire_hook
from tests.support.fake_anthropic import FakeAnthropic, Text, ToolUse
from vaultops.store.asked import grant_allowance

pytestmark = requires_claude



@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    project = tmp_path / "project"
    project.mkdir()
    vault = tmp_path / "vault"
    (vault / ".vaultops").mkdir(parents=True)
    (vault / ".vaultops" / "config.toml").write_text('[agent]\nname = "test"\n')
    log = tmp_path / "calls.log"
    bin_dir = fake_tools(tmp_path / "bin", log)
    wire_hook(vault, project)
    return {"project": project, "vault": vault, "bin": bin_dir, "log": log, "config": tmp_path / "cc"}


def run_claude(api: FakeAnthropic, s: dict[str, Path], *extra: str) -> dict[str, Any]:
    env = claude_env(api.base_url, s["config"])
    env = {k: v for k, v in env.items() if not k.startswith("VAULTOPS_")}
    env["PATH"] = f"{s['bin']}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(
        [str(claude_bin()), "-p", "merge the PR, then run the tests", "--output-format", "json", *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=s["project"],
        timeout=120,
    )
    result = json.loads(proc.stdout)
    assert isinstance(result, dict), proc.stdout
    return result


def calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_the_merge_is_denied_and_escalated_pytest_runs_and_an_allowance_resumes_it_once(
    api: FakeAnthropic, setup: dict[str, Path]
) -> None:
    api.start()
    api.script(
        ToolUse("Bash", {"command": "gh pr merge 12"}),
        ToolUse("Bash", {"command": "pytest -q"}),
        Text("merge refused; tests ran"),
    )
    result = run_claude(api, setup)
    assert result["is_error"] is False, result
    ran = calls(setup["log"])
    assert not any(line.endswith("gh pr merge 12") for line in ran), ran
    assert [line for line in ran if "pytest" in line] == ["pytest -q"]
    denied = [d["tool_input"]["command"] for d in result["permission_denials"]]
    assert denied == ["gh pr merge 12"]
    # the model saw why: the tool result of the merge carries the hook's reason
    tool_results = json.dumps(api.requests[1])
    assert "the person has been asked" in tool_results and "merge_pr" in tool_results

    lines = (setup["vault"] / ".vaultops" / "state" / "escalations.jsonl").read_text().splitlines()
    [record] = [json.loads(line) for line in lines]
    assert record["action"] == "merge_pr" and record["session_id"] == result["session_id"]
    assert record["tool_input"]["command"] == "gh pr merge 12"

    # The person approves exactly that call; the session resumes and the merge runs once, not twice.
    grant_allowance(setup["vault"], record["tool_name"], record["tool_input"])
    api.script(
        ToolUse("Bash", {"command": "gh pr merge 12"}),
        ToolUse("Bash", {"command": "gh pr merge 12"}),
        Text("merged"),
    )
    resumed = run_claude(api, setup, "--resume", str(record["session_id"]))
    assert resumed["is_error"] is False, resumed
    merges = [line for line in calls(setup["log"]) if line.endswith("gh pr merge 12")]
    assert merges == ["gh pr merge 12"]
    assert [d["tool_input"]["command"] for d in resumed["permission_denials"]] == ["gh pr merge 12"]
