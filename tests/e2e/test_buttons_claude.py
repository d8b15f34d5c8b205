"""One tap, end to end, with the real Claude Code CLI (offline, against ``tests/support/fake_anthropic.py``)
under the daemon: the model of a routine job asks for ``gh pr merge 12``; the gate stops it and the job
is escalated; Telegram (the loopback Bot API) shows the message with Approve once; the person presses
it; the decision is written into the note and the same session resumes, running the merge exactly once
(the model's second identical call is asked again).  It prints how long each step took after the press
(the note's decision line, the resumed session's first model call, the merge), on loopback."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tests.e2e.test_gate_claude import template_profile
from tests.support.claude_cli import fake_tools, requires_claude
from tests.support.daemon_helpers import Daemon
from tests.support.fake_anthropic import FakeAnthropic, Text, ToolUse
from tests.support.fake_servers import FakeBotAPI
from tests.support.helpers import INBOX, make_vault
from tests.support.waiting import wait_for

pytestmark = requires_claude
TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
ME = 4242
MERGE = "gh pr merge 12"


def statuses(vault: Path) -> list[str]:
    return [line for line in (vault / INBOX).read_text().splitlines() if line.startswith("- status: ")]


def decided(vault: Path) -> bool:
    return "- decision: approve — via Telegram button" in (vault / INBOX).read_text()


def merges(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if line == MERGE] if log.exists() else []


def test_a_button_press_resumes_the_session_and_the_approved_call_runs_once(
    tmp_path: Path, api: FakeAnthropic
) -> None:
    request = "## REQ-build Summarise what the last build produced\n- type: code\n- ready: yes\nSummarise.\n"
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{request}", fake_profiles=False)
    calls = tmp_path / "logs" / "calls.log"
    tools = fake_tools(tmp_path / "bin", calls)
    profile = template_profile(api.start(), tmp_path / "cc", calls.parent)
    assert "PATH = " not in profile
    path = f"{tools}{os.pathsep}{os.environ['PATH']}"  # the fake gh first: it logs each call
    profile = profile.replace("env = { ", f"env = {{ PATH = {json.dumps(path)}, ", 1)
    (work := vault / "work").mkdir()
    with FakeBotAPI(TOKEN) as bot:
        telegram = f'[notify.telegram]\ntoken = "{TOKEN}"\nchat_ids = [{ME}]\napi_base = "{bot.base}"\n'
        (vault / ".vaultops" / "local.toml").write_text(profile + "\n" + telegram)
        api.script(ToolUse("Bash", {"command": MERGE}), Text("The merge needs the person."))
        daemon = Daemon(vault)
        try:
            daemon.wait_ready()
            assert wait_for(lambda: bot.sent, timeout=90), daemon.errors()
            [message] = bot.sent
            assert statuses(vault)[-1].startswith("- status: escalated") and MERGE in statuses(vault)[-1]
            assert merges(calls) == [], "the gate stopped the merge"
            assert bot.buttons(message) == ["Approve once", "Deny"], message["text"]
            assert work.is_dir()

            merge = ToolUse("Bash", {"command": MERGE})
            api.script(merge, merge, Text("Merged."))
            asked_before = len(api.requests)
            pressed = time.monotonic()
            query = bot.press(message, "Approve once")
            assert wait_for(lambda: decided(vault)), daemon.errors()
            written = time.monotonic()
            assert wait_for(lambda: len(api.requests) > asked_before, timeout=90), daemon.errors()
            resumed = time.monotonic()
            assert wait_for(lambda: merges(calls), timeout=90), daemon.errors()
            merged = time.monotonic()
            assert wait_for(lambda: len(statuses(vault)) == 5, timeout=90), statuses(vault)
        finally:
            assert daemon.stop() == 0
        assert merges(calls) == [MERGE], "the approved call ran once; the same call again was asked again"
        assert bot.toasts[query]["text"].startswith("Approved once")
        said = [s.split()[2] for s in statuses(vault)]
        assert said == ["running", "escalated", "approved", "running", "escalated"], statuses(vault)
        ms = [round(1000 * (t - pressed)) for t in (written, resumed, merged)]
        print(f"\npress → decision line {ms[0]} ms; → resumed session's first model call {ms[1]} ms;", end="")
        print(f" → the approved merge ran {ms[2]} ms")


def test_approve_for_this_request_lets_the_same_call_through_until_the_job_ends(
    tmp_path: Path, api: FakeAnthropic
) -> None:
    """Typed in Telegram: ``approve REQ-… for this request``.  The resumed session's merge runs each time it
    asks during that job; once the job has ended, the same call is asked again."""
    from tests.support.fake_servers import FakeBotAPI
    from vaultops.engine.tick import tick
    from vaultops.vault import Vault

    request = "## REQ-build Summarise what the last build produced\n- type: code\n- ready: yes\nSummarise.\n"
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{request}", fake_profiles=False)
    calls = tmp_path / "logs" / "calls.log"
    tools = fake_tools(tmp_path / "bin", calls)
    profile = template_profile(api.start(), tmp_path / "cc", calls.parent)
    path = f"{tools}{os.pathsep}{os.environ['PATH']}"
    profile = profile.replace("env = { ", f"env = {{ PATH = {json.dumps(path)}, ", 1)
    (vault / "work").mkdir()
    with FakeBotAPI(TOKEN) as bot:
        telegram = f'[notify.telegram]\ntoken = "{TOKEN}"\nchat_ids = [{ME}]\napi_base = "{bot.base}"\n'
        (vault / ".vaultops" / "local.toml").write_text(profile + "\n" + telegram + "poll_timeout = 0\n")
        merge = ToolUse("Bash", {"command": MERGE})
        api.script(merge, Text("The merge needs the person."))
        tick(Vault.open(vault), wait_settle=False)
        assert merges(calls) == [] and "escalated" in statuses(vault)[-1]

        bot.say(ME, "approve REQ-build for this request", date=int(time.time()) + 1)
        api.script(merge, merge, Text("Merged twice."))
        tick(Vault.open(vault), wait_settle=False)
        assert merges(calls) == [MERGE, MERGE], "the same call, for the rest of this job"
        text = (vault / INBOX).read_text()
        assert "- decision: approve for this request — via Telegram (Ann)" in text
        approved = [s for s in statuses(vault) if "status: approved" in s]
        assert len(approved) == 1 and "approved for this request by the person" in approved[0]
        assert statuses(vault)[-1].startswith("- status: done"), statuses(vault)

        allowed = vault / ".vaultops" / "state" / "allow"
        assert not list(allowed.glob("*.job")), "the job ended: the approval ended with it"
