"""The gate under the fleet's halt (``hook.halt``): from the moment the daemon sees the halt, every tool
call of every job in its process is denied, first of anything the policy would say; lifted, the policy
judges again.  Through the real gate server and its client, as a job's Claude Code reaches it."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultops.hook import halt as gate
from vaultops.hook.claude import client_command
from vaultops.hook.job import GateJob
from vaultops.hook.server import GateServer


@pytest.fixture(autouse=True)
def lifted() -> Iterator[None]:
    yield
    gate.resume()  # the flag is the process's: never left set for the next test


def ask(socket: Path, tool: str, tool_input: dict[str, str], cwd: Path) -> dict[str, str]:
    event = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "cwd": str(cwd)}
    command = client_command(socket).removesuffix(
        " || exit 2"
    )  # the hook's own command, as Claude Code runs it
    proc = subprocess.run(shlex.split(command), input=json.dumps(event), capture_output=True, text=True)
    out: dict[str, str] = json.loads(proc.stdout)["hookSpecificOutput"]
    return out


def test_every_call_is_denied_while_the_fleet_is_halted(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("hello\n")
    read = {"file_path": str(tmp_path / "notes.md")}
    with GateServer(GateJob(None, str(tmp_path))) as server:
        assert ask(server.socket_path, "Read", read, tmp_path)["permissionDecision"] == "allow"
        gate.halt("HALTED by Person: runaway agent")
        denied = ask(server.socket_path, "Read", read, tmp_path)
        assert denied["permissionDecision"] == "deny"
        assert "HALTED by Person: runaway agent" in denied["permissionDecisionReason"]
        gate.resume()
        assert ask(server.socket_path, "Read", read, tmp_path)["permissionDecision"] == "allow"
