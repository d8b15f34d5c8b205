"""The kill switch on the real Claude Code CLI, offline against the scripted fake API: a gated code job is
mid-run (its first tool ran, the model's next answer is hanging) when the person saves ``halt: yes`` on the
machine; the daemon stops it, keeps its work and its session, and after ``halt: no`` the person's ``- retry:
yes`` goes on in that same session (the API sees the earlier turns again), told it stopped at a halt."""

from __future__ import annotations

import json
import signal
from functools import partial
from pathlib import Path

from tests.support.claude_cli import profile, requires_claude
from tests.support.daemon_helpers import Daemon, save_in_place
from tests.support.fake_anthropic import FakeAnthropic, Hang, Text, ToolUse
from tests.support.halt import DASHBOARD, set_halt, state_is
from tests.support.helpers import inbox_path, routed, vault_with
from tests.support.waiting import wait_for

pytestmark = requires_claude

INBOX = (
    "# Inbox\n\n## REQ-steps Take steps\n- type: code\n- ready: yes\n"
    "Fix the failing build step by step, and log each step in the steps file.\n"
)


def test_a_halted_claude_job_keeps_its_work_and_goes_on_in_its_session(
    tmp_path: Path, api: FakeAnthropic
) -> None:
    api.script(ToolUse("Bash", {"command": "echo one >> steps.txt"}), Hang(600))
    table = profile("worker-code", api.start(), tmp_path / "cc", workdir="work", timeout=300)
    daemon_cfg = "[inbox]\nsettle = 0\n\n[daemon]\nreconcile = 120\ngrace = 10\n"
    vault = vault_with(tmp_path / "v", INBOX, routed(table, 'code = ["worker-code"]', "[0.1]") + daemon_cfg)
    work = vault / "work"
    work.mkdir()
    daemon = Daemon(vault)
    try:
        daemon.wait_ready()
        assert wait_for(lambda: len(api.requests) >= 2, timeout=60), daemon.explain()  # hanging on turn 2
        assert (work / "steps.txt").read_text() == "one\n"
        assert wait_for(lambda: (vault / DASHBOARD).exists())
        set_halt(vault, "halt: yes")
        assert wait_for(partial(state_is, vault, "REQ-steps", "interrupted"), timeout=60), daemon.explain()
        status = [ln for ln in inbox_path(vault).read_text().splitlines() if "status: interrupted" in ln][-1]
        assert "halt" in status, status
        assert (work / "steps.txt").read_text() == "one\n"  # its work is kept

        api.script(Text("Done: one step logged."))
        set_halt(vault, "halt: no")
        path = inbox_path(vault)
        save_in_place(path, path.read_text() + "- retry: yes\n")
        assert wait_for(partial(state_is, vault, "REQ-steps", "done"), timeout=90), daemon.explain()
        resumed = json.dumps(api.requests[-1])
        assert "echo one >> steps.txt" in resumed  # the earlier turns: the same session went on
        assert "stopped at a halt of the fleet" in resumed
    finally:
        if daemon.proc.poll() is None:
            daemon.proc.send_signal(signal.SIGTERM)
            daemon.proc.send_signal(signal.SIGTERM)
        daemon.stop(timeout=60)
