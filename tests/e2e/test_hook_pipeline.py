"""The hook inside a real job: a request runs on the real Claude Code CLI (offline, against
``tests/support/fake_anthropic.py``) in a folder wired by ``vaultops init --claude``. The scripted model
asks for ``gh pr merge 12`` and ``pytest -q``: the merge is denied and the request shows ``escalated``,
pytest runs.  After the person approves in the note, the same session goes on and runs the merge exactly
once."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.claude_cli import claude_bin, claude_env, fake_tools, requires_claude, wire_hook
from tests.support.fake_anthropic import FakeAnthropic, Text, ToolUse
from tests.support.helpers import INBOX, make_vault
from vaultops.engine.tick import tick
from vaultops.model import State
from vaultops.scan.note import parse_note
from vaultops.vault import Vault

pytestmark = requires_claude
REQUEST = "## REQ-pr12\n- type: code\n- ready: yes\nGet PR 12 ready: run the test suite and finish it off.\n"


def setup_vault(tmp_path: Path, api: FakeAnthropic) -> tuple[Path, Path]:
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{REQUEST}", fake_profiles=False)
    work = vault / "work"
    work.mkdir()
    log = tmp_path / "logs" / "calls.log"
    bin_dir = fake_tools(tmp_path / "bin", log)
    env = claude_env(api.start(), tmp_path / "cc", max_retries=0)
    env["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    changed = {k: v for k, v in env.items() if os.environ.get(k) != v}
    table = ", ".join(f"{k} = {json.dumps(v)}" for k, v in sorted(changed.items()))
    (vault / ".vaultops" / "local.toml").write_text(
        "[profiles.worker-code]\n"
        f'command = [{json.dumps(claude_bin())}, "-p", "{{prompt}}", "--output-format", "json", '
        '"--allowedTools", "{tools}"]\n'
        'output = "claude-json"\ntools = ["Bash", "Read"]\ntimeout = 90\nhealth = []\nworkdir = "work"\n'
        f"writable = [{json.dumps(str(log.parent))}]\n"
        f'env = {{ {table} }}\n\n[routing]\ndefault = ["worker-code"]\ncode = ["worker-code"]\n'
    )
    wire_hook(vault, work)
    return vault, log


def status_lines(vault: Path) -> list[str]:
    return [line for line in (vault / INBOX).read_text().splitlines() if line.startswith("- status: ")]


def test_an_escalated_tool_call_waits_for_the_person_and_runs_once_after_approval(
    tmp_path: Path, api: FakeAnthropic
) -> None:
    vault, log = setup_vault(tmp_path, api)
    api.script(
        ToolUse("Bash", {"command": "gh pr merge 12"}),
        ToolUse("Bash", {"command": "pytest -q"}),
        Text("Tests pass; the merge needs the person."),
    )
    tick(Vault.open(vault), wait_settle=False)
    [request] = parse_note(INBOX, (vault / INBOX).read_bytes()).requests
    assert request.state is State.ESCALATED, status_lines(vault)
    reason = request.statuses[-1].reason
    assert "gh pr merge 12" in reason and "decision: approve" in reason
    assert log.read_text().splitlines() == ["pytest -q"], "the merge did not run, the tests did"

    with (vault / INBOX).open("a") as fh:
        fh.write("- decision: approve — merge it\n")
    api.script(ToolUse("Bash", {"command": "gh pr merge 12"}), Text("Merged."))
    tick(Vault.open(vault), wait_settle=False)
    said = status_lines(vault)
    assert [line.split()[2] for line in said] == ["running", "escalated", "approved", "running", "done"], said
    assert log.read_text().splitlines() == ["pytest -q", "gh pr merge 12"], "the merge ran exactly once"
    text = (vault / INBOX).read_text()
    assert "--resume" not in text  # the note says what happened, not how the CLI was called
    tick(Vault.open(vault), wait_settle=False)
    assert log.read_text().splitlines() == ["pytest -q", "gh pr merge 12"]
