"""Escalation end to end: a blocked request is told to the person once, through apprise and a Telegram bot
(both real HTTP servers on loopback); the person's reply in Telegram becomes their decision in the note,
signed with the chat's name, and the approved request runs once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.fake_servers import FakeBotAPI, JsonSink
from tests.support.helpers import FAKE_AGENT, INBOX, ROTATE, make_vault, vault_with
from vaultops.engine.tick import tick
from vaultops.model import State
from vaultops.scan.note import parse_note
from vaultops.store.state import StateDB
from vaultops.vault import Vault

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
ME = 4242


def notified_vault(tmp_path: Path, sink: JsonSink, api: FakeBotAPI, inbox: str = ROTATE) -> Path:
    """A vault that tells ``sink`` and the fake Telegram bot API what it escalates."""
    notify = (
        f'[notify]\nurls = ["{sink.url()}"]\n\n'
        f'[notify.telegram]\ntoken = "{TOKEN}"\nchat_ids = [{ME}]\n'
        f'api_base = "{api.base}"\npoll_timeout = 0\n'
    )
    return vault_with(tmp_path / "Work vault", f"# Inbox\n\n{inbox}", notify, fake_profiles=True)


def state_of(vault: Path, rid: str) -> State:
    [request] = [r for r in parse_note(INBOX, (vault / INBOX).read_bytes()).requests if r.id == rid]
    return request.state


def test_an_escalation_is_told_once_and_a_telegram_approval_runs_it_once(tmp_path: Path, runs: Path) -> None:
    with JsonSink() as sink, FakeBotAPI(TOKEN) as api:
        vault = notified_vault(tmp_path, sink, api)
        tick(Vault.open(vault), wait_settle=False)
        assert state_of(vault, "REQ-rotate") is State.ESCALATED
        [message] = sink.messages()
        assert "REQ-rotate" in message and "blocked" in message and "key or token rotation" in message
        assert "obsidian://open?vault=Work%20vault&file=_System%2FCOO-Inbox" in message
        assert [m["chat_id"] for m in api.sent] == [ME]
        tick(Vault.open(vault), wait_settle=False)
        assert len(sink.messages()) == 1 and len(api.sent) == 1, "one message per request and state"

        api.say(-99, "approve REQ-rotate", first_name="Mallory", date=int(time.time()) + 1)  # not allowed
        api.say(ME, "approve REQ-rotate", first_name="Ann", date=int(time.time()) + 1)
        report = tick(Vault.open(vault), wait_settle=False)
        assert any("ignored a message from chat -99 (Mallory)" in w for w in report.warnings), report.warnings
        text = (vault / INBOX).read_text()
        assert "- decision: approve — via Telegram (Ann)" in text
        assert "Mallory" not in text
        assert state_of(vault, "REQ-rotate") is State.DONE
        assert runs.read_text().split() == ["REQ-rotate"]
        tick(Vault.open(vault), wait_settle=False)
        assert runs.read_text().split() == ["REQ-rotate"], "the reply is read once"


def test_a_telegram_denial_with_a_reason_is_the_persons_decision(tmp_path: Path, runs: Path) -> None:
    with JsonSink() as sink, FakeBotAPI(TOKEN) as api:
        vault = notified_vault(tmp_path, sink, api)
        tick(Vault.open(vault), wait_settle=False)
        api.say(ME, "deny REQ-rotate not before the audit", date=int(time.time()) + 1)
        tick(Vault.open(vault), wait_settle=False)
        assert state_of(vault, "REQ-rotate") is State.DENIED
        assert "- decision: deny — via Telegram (Ann): not before the audit" in (vault / INBOX).read_text()
        assert runs.read_text() == ""


def test_a_reply_written_before_the_escalation_does_not_count(tmp_path: Path, runs: Path) -> None:
    with JsonSink() as sink, FakeBotAPI(TOKEN) as api:
        vault = notified_vault(tmp_path, sink, api)
        tick(Vault.open(vault), wait_settle=False)
        api.say(ME, "approve REQ-rotate", date=int(time.time()) - 3600)
        report = tick(Vault.open(vault), wait_settle=False)
        assert state_of(vault, "REQ-rotate") is State.ESCALATED
        assert any("predates its escalation" in w for w in report.warnings), report.warnings
        assert runs.read_text() == ""


def test_a_notifier_that_fails_is_retried_on_a_later_pass_and_never_sends_twice(
    tmp_path: Path, runs: Path
) -> None:
    with JsonSink(codes=[500]) as sink, FakeBotAPI(TOKEN) as api:
        vault = notified_vault(tmp_path, sink, api)
        report = tick(Vault.open(vault), wait_settle=False)
        assert len(sink.messages()) == 1 and len(api.sent) == 1  # the first post was refused (500)
        assert any("500" in w or "fail" in w.lower() for w in report.warnings), report.warnings
        assert TOKEN not in " ".join(report.warnings)
        db = StateDB(vault / ".vaultops" / "state" / "state.db")
        db.db.execute("UPDATE outbox SET retry_at = 0")  # the retry's time has come
        db.close()
        tick(Vault.open(vault), wait_settle=False)
        assert len(sink.messages()) == 2 and len(api.sent) == 1, "retried where it failed, only there"
        tick(Vault.open(vault), wait_settle=False)
        assert len(sink.messages()) == 2 and len(api.sent) == 1, "and never again"


def claude_json_vault(tmp_path: Path, sink: JsonSink, extra: str = "") -> Path:
    """worker-code is the fake agent printing Claude Code's JSON result."""
    vault = make_vault(tmp_path / "v", "# Inbox\n\n## REQ-sum\n- type: research\n- ready: yes\nSummarise.\n")
    (vault / ".vaultops" / "local.toml").write_text(
        f'[profiles.worker-code]\ncommand = ["{FAKE_AGENT}", "{{prompt}}"]\noutput = "claude-json"\n'
        'timeout = 30\nhealth = []\ngate = "none"\nenv = { FAKE_AGENT_FORMAT = "claude-json" }\n\n'
        '[routing]\ndefault = ["worker-code"]\nresearch = ["worker-code"]\n\n'
        f'[notify]\nurls = ["{sink.url()}"]\n\n{extra}'
    )
    return vault


def test_a_profile_that_cannot_log_in_is_told_to_the_person(
    tmp_path: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_SCRIPT", "401")
    with JsonSink() as sink:
        vault = claude_json_vault(tmp_path, sink)
        tick(Vault.open(vault), wait_settle=False)
        assert state_of(vault, "REQ-sum") is State.ESCALATED
        titles = [body.get("title", "") for _, body in sink.received]
        assert any("worker-code cannot log in" in t for t in titles), titles
        assert any("REQ-sum escalated" in t for t in titles), titles


def test_the_budget_warning_at_80_percent_is_told_once(
    tmp_path: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_COST", "0.9")
    with JsonSink() as sink:
        vault = claude_json_vault(tmp_path, sink, "[limits]\ndaily_budget_usd = 1.0\n")
        tick(Vault.open(vault), wait_settle=False)
        path = vault / INBOX
        path.write_text(path.read_text() + "\n## REQ-more\n- type: research\n- ready: yes\nSummarise more.\n")
        tick(Vault.open(vault), wait_settle=False)
        titles = [body.get("title", "") for _, body in sink.received]
        assert sum("80 % of today's budget" in t for t in titles) == 1, titles


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
