"""The kill switch from chat.  Telegram, against the loopback Bot API (``tests/support/fake_servers.py``),
through whole passes (``vaultops tick``): ``/halt <reason>`` from the person's chat halts (the dashboard
note gets the properties, committed; the chat is told who halted and why), a ``/resume`` from a stranger
does nothing, and the person's ``/resume`` lifts it.  Zulip reads the same commands."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_zulip import ANN, BOT, KEY, _answers
from tests.e2e.test_zulip import STRANGER as STRANGER_EMAIL
from tests.support.fake_servers import FakeBotAPI
from tests.support.fake_zulip import FakeZulip
from tests.support.halt import DASHBOARD
from tests.support.helpers import INBOX, git, vault_with
from vaultops.decide.halt import read_halt
from vaultops.engine.tick import tick
from vaultops.scan.note import parse_note
from vaultops.store.state import StateDB
from vaultops.vault import Vault

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
ME = 4242
STRANGER = 777


def state_of(vault: Path, rid: str) -> str:
    request = parse_note(INBOX, (vault / INBOX).read_bytes()).request(rid)
    assert request is not None
    return request.state.value


def said(api: FakeBotAPI) -> list[str]:
    return [str(m.get("text", "")).split("\n", 1)[0] for m in api.sent]


def test_halt_and_resume_from_telegram(tmp_path: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        local = f'[notify.telegram]\ntoken = "{TOKEN}"\napi_base = "{api.base}"\npoll_timeout = 0\n'
        local += f"chat_ids = [{ME}]\n"
        vault = vault_with(tmp_path / "Work vault", "# Inbox\n", local, fake_profiles=True)
        tick(Vault.open(vault), wait_settle=False)  # the dashboard
        api.say(ME, "/halt it loops on the billing page", date=1_770_000_100)
        (vault / INBOX).write_text("# Inbox\n\n## REQ-new\n- ready: yes\nSummarise the week.\n")
        tick(Vault.open(vault), wait_settle=False)
        assert state_of(vault, "REQ-new") == "open"  # nothing claimed
        mark = read_halt((vault / DASHBOARD).read_text(encoding="utf-8"))
        assert mark.halted and mark.reason == "it loops on the billing page" and mark.by == "Ann (Telegram)"
        assert "vaultops: fleet halted" in git(
            vault, "log", "--format=%s", "--", DASHBOARD
        )  # committed first
        assert any("HALTED by Ann (Telegram): it loops on the billing page" in t for t in said(api)), said(
            api
        )

        api.say(STRANGER, "/resume", first_name="Mallory", date=1_770_000_200)
        tick(Vault.open(vault), wait_settle=False)
        assert read_halt((vault / DASHBOARD).read_text(encoding="utf-8")).halted
        assert state_of(vault, "REQ-new") == "open"

        api.say(ME, "/resume", date=1_770_000_300)
        tick(Vault.open(vault), wait_settle=False)
        assert not read_halt((vault / DASHBOARD).read_text(encoding="utf-8")).halted
        assert any(t.endswith("resumed") for t in said(api)), said(api)
        assert state_of(vault, "REQ-new") == "done"  # new work starts once the halt is lifted


def test_halt_and_resume_from_zulip(tmp_path: Path) -> None:
    """Zulip reads the same commands from a listed sender, after the bot's mention or not; chatter that
    says "resume" is no resume."""
    with FakeZulip(BOT, KEY) as server:
        state = StateDB(tmp_path / "state.db")
        server.say(ANN, "@**vaultops bot** /halt the agent loops")
        server.say(ANN, "resume the work on the report later")
        server.say(ANN, "/resume")
        server.say(STRANGER_EMAIL, "/resume", name="Mallory")
        got = [(a.request_id, a.verdict, a.comment, a.who) for a in _answers(server, state)]
        assert got == [("", "halt", "the agent loops", "Ann Person"), ("", "resume", "", "Ann Person")]
