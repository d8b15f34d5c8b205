"""Escalation end to end where only real processes will do: the daemon tells the person through apprise and
a Telegram bot (both real HTTP servers on loopback) and acts on their reply; a job's own process is told
its vault, folder and tools for the hook.  What a pass does with an escalation (told once, a chat's
approval or denial, a reply from before it, a channel retried, a profile that cannot log in, the budget's
warning) is tests/unit/test_twin_escalation_flow.py's, on the engine's twin."""

from __future__ import annotations

import time
from pathlib import Path

from tests.support.fake_servers import FakeBotAPI, JsonSink
from tests.support.helpers import INBOX, ROTATE, make_vault
from vaultops.engine.tick import tick
from vaultops.model import State
from vaultops.scan.note import parse_note
from vaultops.vault import Vault

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
ME = 4242


def state_of(vault: Path, rid: str) -> State:
    [request] = [r for r in parse_note(INBOX, (vault / INBOX).read_bytes()).requests if r.id == rid]
    return request.state


def test_the_daemon_tells_the_person_and_acts_on_their_telegram_reply(tmp_path: Path) -> None:
    from tests.support.daemon_helpers import Daemon, daemon_vault
    from tests.support.waiting import wait_for

    log = tmp_path / "agent-runs.log"
    log.touch()
    with JsonSink() as sink, FakeBotAPI(TOKEN) as api:
        vault = daemon_vault(
            tmp_path / "v",
            f"# Inbox\n\n{ROTATE}",
            extra=(
                f'[notify]\nurls = ["{sink.url()}"]\n\n'
                f'[notify.telegram]\ntoken = "{TOKEN}"\nchat_ids = [{ME}]\napi_base = "{api.base}"\n'
            ),
        )
        local = vault / ".vaultops" / "local.toml"  # replies are read every `fetch` seconds
        local.write_text(local.read_text().replace("[daemon]\n", "[daemon]\nfetch = 0.3\n"))
        daemon = Daemon(vault, {"FAKE_AGENT_LOG": str(log)})
        try:
            daemon.wait_ready()
            assert wait_for(lambda: len(api.sent) == 1), daemon.errors()
            assert state_of(vault, "REQ-rotate") is State.ESCALATED
            api.say(ME, "approve REQ-rotate", date=int(time.time()) + 1)
            assert wait_for(lambda: state_of(vault, "REQ-rotate") is State.DONE), daemon.errors()
        finally:
            assert daemon.stop() == 0
        assert log.read_text().split() == ["REQ-rotate"]
        assert "- decision: approve — via Telegram (Ann)" in (vault / INBOX).read_text()
        assert len(sink.messages()) == 1


def test_a_job_tells_the_hook_its_vault_scope_and_tools(tmp_path: Path) -> None:
    """The hook inside a job records escalations in this vault, judges paths against the job's folder, and
    never lets through a tool the request narrowed away (its "allow" would run it regardless)."""
    vault = make_vault(
        tmp_path / "v", "# Inbox\n\n## REQ-env\n- type: research\n- ready: yes\n- tools: Read\nShow it.\n"
    )
    (vault / ".vaultops" / "local.toml").write_text(
        '[profiles.worker-research]\ncommand = ["sh", "-c", '
        '"echo vault=$VAULTOPS_VAULT; echo workdir=$VAULTOPS_WORKDIR; echo tools=$VAULTOPS_TOOLS", '
        '"{prompt}"]\n'
        'output = "text"\ntools = ["Read", "Grep"]\ntimeout = 30\nhealth = []\n\n'
        '[routing]\nresearch = ["worker-research"]\n'
    )
    tick(Vault.open(vault), wait_settle=False)
    text = (vault / INBOX).read_text()
    assert f"vault={vault.resolve()}" in text
    assert "workdir=" in text and "tools=Read\n" in text
