"""Answers in chat as the person sees them (issue 29), against the strict loopback Bot API
(``tests/support/strict_telegram.py``) through whole passes (``vaultops tick``): a typed answer gets a
reply under it saying what was written where; an escalated request edited in the note gets a fresh
message, the old message loses its buttons (``editMessageReplyMarkup``), and one press on the new message
runs it once.  The pass logic is tests/unit/test_twin_chat_replies.py's."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tests.support.fake_zulip import FakeZulip
from tests.support.helpers import INBOX, ROTATE, vault_with
from tests.support.strict_telegram import StrictBotAPI
from vaultops.engine.context import local_now
from vaultops.engine.tick import tick
from vaultops.model import State
from vaultops.scan.note import parse_note
from vaultops.vault import Vault

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
ME = 4242


def escalated(root: Path, api: StrictBotAPI) -> Path:
    api.private(ME, "Ann")
    local = f'[notify.telegram]\ntoken = "{TOKEN}"\napi_base = "{api.base}"\npoll_timeout = 0\n'
    local += f"chat_ids = [{ME}]\n"
    vault = vault_with(root / "Work vault", f"# Inbox\n\n{ROTATE}", local, fake_profiles=True)
    tick(Vault.open(vault), wait_settle=False)
    assert state_of(vault) is State.ESCALATED
    return vault


def later() -> datetime:
    return local_now() + timedelta(minutes=1)


def state_of(vault: Path) -> State:
    [request] = [r for r in parse_note(INBOX, (vault / INBOX).read_bytes()).requests if r.id == "REQ-rotate"]
    return request.state


def asking(api: StrictBotAPI) -> list[dict[str, Any]]:
    return [m for m in api.sent if "\nREQ-rotate is " in m["text"]]


def test_a_typed_approval_gets_a_reply_under_it_saying_what_was_written(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        vault = escalated(tmp_path, api)
        api.say(ME, ME, "approve REQ-rotate")
        api.say(ME, ME, "approve REQ-nope")
        tick(Vault.open(vault), wait_settle=False)
        replies = {m["reply_to_message"]["text"]: m["text"] for m in api.sent if "reply_to_message" in m}
        assert replies == {
            "approve REQ-rotate": (
                f"Wrote `- decision: approve — via Telegram (Ann)` under REQ-rotate in {INBOX}."
            ),
            "approve REQ-nope": f"Nothing was written: REQ-nope is not in {INBOX}.",
        }
        assert state_of(vault) is State.DONE and runs.read_text().split() == ["REQ-rotate"]
        tick(Vault.open(vault), wait_settle=False)
        assert len([m for m in api.sent if "reply_to_message" in m]) == 2, "each answer replied to once"


def test_an_edited_escalation_gets_a_fresh_message_and_the_old_one_loses_its_buttons(
    tmp_path: Path, runs: Path
) -> None:
    with StrictBotAPI(TOKEN) as api:
        vault = escalated(tmp_path, api)
        [old] = asking(api)
        assert api.buttons(old) == ["Approve once", "Deny"]
        inbox = vault / INBOX
        inbox.write_text(inbox.read_text().replace("production env file", "staging env file"))
        tick(Vault.open(vault), wait_settle=False, clock=later)  # edited a minute after it was escalated
        [_, fresh] = asking(api)
        assert "staging env file" in fresh["text"] and "changed after it was escalated" in fresh["text"]
        assert api.buttons(fresh) == ["Approve once", "Deny"]
        assert api.buttons(old) == [], "the old message's buttons are taken off"
        assert [e["message_id"] for e in api.edits] == [old["message_id"]]

        query = api.press(fresh, "Approve once")  # one round: the first approval after the edit runs it
        tick(Vault.open(vault), wait_settle=False, clock=later)
        assert api.toasts[query]["text"].startswith("Approved once")
        assert state_of(vault) is State.DONE and runs.read_text().split() == ["REQ-rotate"]
        assert len(asking(api)) == 2, "no third message"


def test_a_typed_answer_in_zulip_gets_a_reply_in_its_topic(tmp_path: Path, runs: Path) -> None:
    key, bot, ann = "zK3m9QpR2vX7tL0aB4nC8dE6fG1hJ5sW", "vaultops-bot@chat.example.com", "ann@example.com"
    with FakeZulip(bot, key) as server:
        local = (
            f'[notify.zulip]\nsite = "{server.site}"\nemail = "{bot}"\napi_key = "{key}"\n'
            f'stream = "{server.stream}"\nsenders = ["{ann}"]\n'
        )
        vault = vault_with(tmp_path / "Work vault", f"# Inbox\n\n{ROTATE}", local, fake_profiles=True)
        tick(Vault.open(vault), wait_settle=False)
        assert state_of(vault) is State.ESCALATED
        server.say(ann, "deny REQ-rotate not this week", name="Ann Person", topic="keys", timestamp=2**31)
        tick(Vault.open(vault), wait_settle=False)
        assert state_of(vault) is State.DENIED
        said = [f for f in server.sent if f["topic"] == "keys"]
        assert [f["content"] for f in said] == [
            f"Wrote `- decision: deny — via Zulip (Ann Person): not this week` under REQ-rotate in {INBOX}."
        ]
