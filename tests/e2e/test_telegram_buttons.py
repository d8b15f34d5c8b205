"""Approving from the phone in one tap: an escalation's Telegram message has Approve once, Deny and Open;
a press is bound to the request and to the text the message showed.  Against the loopback Bot API
(``tests/support/fake_servers.py``), through whole passes (``vaultops tick``): a press from the person
approves the request once, and every press that should do nothing (a stranger's, a stale one, a double
one, an expired one, a made-up one, one on a message that had to shorten what it asked) does nothing and
says why where it was pressed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.support.fake_servers import FakeBotAPI
from tests.support.helpers import INBOX, ROTATE, vault_with
from vaultops.engine.tick import tick
from vaultops.model import State
from vaultops.notify.message import SHORTENED
from vaultops.scan.note import parse_note
from vaultops.vault import Vault

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
ME = 4242
GROUP = -100500
STRANGER = 777


def escalated(tmp_path: Path, api: FakeBotAPI, inbox: str = ROTATE, telegram: str = "") -> Path:
    """A vault whose request is escalated, and told to the fake bot's chats."""
    settings = telegram or f"chat_ids = [{ME}]\n"
    local = f'[notify.telegram]\ntoken = "{TOKEN}"\napi_base = "{api.base}"\npoll_timeout = 0\n{settings}'
    vault = vault_with(tmp_path / "Work vault", f"# Inbox\n\n{inbox}", local, fake_profiles=True)
    tick(Vault.open(vault), wait_settle=False)
    assert state_of(vault) is State.ESCALATED
    return vault


def state_of(vault: Path, rid: str = "REQ-rotate") -> State:
    [request] = [r for r in parse_note(INBOX, (vault / INBOX).read_bytes()).requests if r.id == rid]
    return request.state


def decisions(vault: Path) -> list[str]:
    return [line for line in (vault / INBOX).read_text().splitlines() if line.startswith("- decision:")]


def toast(api: FakeBotAPI, query: str) -> str:
    return str(api.toasts[query]["text"])


def button_data(message: dict[str, Any], button: str) -> str:
    [data] = [
        b["callback_data"]
        for row in message["reply_markup"]["inline_keyboard"]
        for b in row
        if b["text"] == button
    ]
    return str(data)


def test_a_press_from_the_person_approves_once_and_the_message_says_who_decided(
    tmp_path: Path, runs: Path
) -> None:
    with FakeBotAPI(TOKEN) as api:
        vault = escalated(tmp_path, api)
        [message] = api.sent
        assert api.buttons(message) == ["Approve once", "Deny"], "obsidian:// on a button: sent without it"
        for button in message["reply_markup"]["inline_keyboard"][0]:
            assert len(button["callback_data"].encode()) <= 64
        query = api.press(message, "Approve once", first_name="Ann")
        tick(Vault.open(vault), wait_settle=False)
        assert decisions(vault) == ["- decision: approve — via Telegram button (Ann)"]
        assert state_of(vault) is State.DONE
        assert runs.read_text().split() == ["REQ-rotate"]
        assert toast(api, query).startswith("Approved once")
        shown = api.shown(message)
        assert shown["text"].startswith(message["text"]) and "Approved once by Ann at " in shown["text"]
        assert api.buttons(message) == [], "the buttons are gone once it is decided"
        statuses = [s for s in (vault / INBOX).read_text().splitlines() if "status: approved" in s]
        assert len(statuses) == 1 and "approved once by the person — via Telegram button (Ann)" in statuses[0]

        again = api.press(message, data=button_data(message, "Approve once"))  # an old client's tap
        tick(Vault.open(vault), wait_settle=False)
        assert "already decided" in toast(api, again)
        assert runs.read_text().split() == ["REQ-rotate"], "a second press runs nothing"
        assert len(decisions(vault)) == 1


def test_a_deny_press_is_the_persons_denial(tmp_path: Path, runs: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        vault = escalated(tmp_path, api)
        query = api.press(api.sent[0], "Deny")
        tick(Vault.open(vault), wait_settle=False)
        assert decisions(vault) == ["- decision: deny — via Telegram button (Ann)"]
        assert state_of(vault) is State.DENIED
        assert runs.read_text() == ""
        assert toast(api, query).startswith("Denied")


def test_a_double_press_in_one_batch_decides_once(tmp_path: Path, runs: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        vault = escalated(tmp_path, api)
        first = api.press(api.sent[0], "Approve once")
        second = api.press(api.sent[0], "Deny")
        tick(Vault.open(vault), wait_settle=False)
        assert decisions(vault) == ["- decision: approve — via Telegram button (Ann)"]
        assert toast(api, first).startswith("Approved once")
        assert "already decided" in toast(api, second)
        assert runs.read_text().split() == ["REQ-rotate"]


def test_only_listed_people_in_listed_chats_can_press(tmp_path: Path, runs: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        vault = escalated(tmp_path, api, telegram=f"chat_ids = [{ME}, {GROUP}]\nusers = [{ME}]\n")
        in_group = next(m for m in api.sent if m["chat_id"] == GROUP)
        stranger = api.press(in_group, "Approve once", user_id=STRANGER, first_name="Mallory")
        report = tick(Vault.open(vault), wait_settle=False)
        assert "not one of the people" in toast(api, stranger)
        assert decisions(vault) == [] and state_of(vault) is State.ESCALATED
        assert any("Mallory (user 777)" in w for w in report.warnings), report.warnings
        assert api.buttons(in_group) == ["Approve once", "Deny"], "a stranger's press changes nothing"

        mine = api.press(in_group, "Approve once", user_id=ME, first_name="Ann")
        tick(Vault.open(vault), wait_settle=False)
        assert toast(api, mine).startswith("Approved once")
        assert state_of(vault) is State.DONE and runs.read_text().split() == ["REQ-rotate"]


def test_without_users_a_group_press_counts_for_nothing(tmp_path: Path, runs: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        vault = escalated(tmp_path, api, telegram=f"chat_ids = [{GROUP}]\n")
        query = api.press(api.sent[0], "Approve once", user_id=ME)
        tick(Vault.open(vault), wait_settle=False)
        assert "not one of the people" in toast(api, query)
        assert decisions(vault) == [] and runs.read_text() == ""


def test_a_press_after_the_request_changed_does_nothing(tmp_path: Path, runs: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        vault = escalated(tmp_path, api)
        inbox = vault / INBOX
        text = inbox.read_text()
        inbox.write_text(text.replace("update the production env file.", "update every env file we have."))
        query = api.press(api.sent[0], "Approve once")
        tick(Vault.open(vault), wait_settle=False)
        assert "has changed since this message was sent" in toast(api, query)
        assert decisions(vault) == [] and runs.read_text() == ""


def test_a_press_after_the_request_was_decided_or_cancelled_does_nothing(tmp_path: Path, runs: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        vault = escalated(tmp_path, api)
        with (vault / INBOX).open("a") as fh:
            fh.write("- decision: deny — not today\n")
        tick(Vault.open(vault), wait_settle=False)
        assert state_of(vault) is State.DENIED
        query = api.press(api.sent[0], "Approve once")
        tick(Vault.open(vault), wait_settle=False)
        assert "already decided: denied" in toast(api, query)
        assert state_of(vault) is State.DENIED and runs.read_text() == ""

    with FakeBotAPI(TOKEN) as api:
        vault = escalated(tmp_path / "2", api)
        with (vault / INBOX).open("a") as fh:
            fh.write("- cancel: yes\n")
        tick(Vault.open(vault), wait_settle=False)
        query = api.press(api.sent[0], "Approve once")
        tick(Vault.open(vault), wait_settle=False)
        assert "not escalated any more (cancelled)" in toast(api, query), toast(api, query)
        assert runs.read_text() == ""


def test_a_press_on_a_message_older_than_answer_within_does_nothing(tmp_path: Path, runs: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        api.clock = lambda: time.time() - 2 * 86400  # the message was sent two days ago
        vault = escalated(tmp_path, api)
        query = api.press(api.sent[0], "Approve once")
        tick(Vault.open(vault), wait_settle=False)
        assert "older than 1 d" in toast(api, query)
        assert decisions(vault) == [] and runs.read_text() == ""


def test_a_message_that_shortened_the_request_has_no_approve_and_cannot_approve(
    tmp_path: Path, runs: Path
) -> None:
    long = "## REQ-rotate\n- ready: yes\nRotate the Stripe secret key. " + "Then check the dashboards. " * 20
    with FakeBotAPI(TOKEN) as api:
        vault = escalated(tmp_path, api, inbox=long + "\n")
        [message] = api.sent
        assert SHORTENED in message["text"]
        assert api.buttons(message) == ["Deny"]
        deny = button_data(message, "Deny")
        made_up = deny.replace(":d:", ":a:")  # a modified client sends an approval the message never had
        query = api.press(message, data=made_up)
        tick(Vault.open(vault), wait_settle=False)
        assert "did not show everything" in toast(api, query)
        assert decisions(vault) == [] and runs.read_text() == ""


def test_made_up_callback_data_does_nothing(tmp_path: Path, runs: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        vault = escalated(tmp_path, api)
        message = api.sent[0]
        real = button_data(message, "Approve once")
        forged = [
            "vo1:a:0000000000000000:" + real.rsplit(":", 1)[1],  # another request's binding
            real.rsplit(":", 1)[0] + ":000000000000",  # another text
            "approve REQ-rotate",
            "vo1:x:" + real.split(":", 2)[2],
        ]
        queries = [api.press(message, data=data) for data in forged]
        tick(Vault.open(vault), wait_settle=False)
        assert decisions(vault) == [] and runs.read_text() == ""
        assert all(q in api.toasts for q in queries), "each press is answered"
        assert state_of(vault) is State.ESCALATED


def test_an_open_button_goes_through_the_persons_https_page(tmp_path: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        page = "https://example.org/open.html#{link}"
        escalated(tmp_path, api, telegram=f'chat_ids = [{ME}]\nopen_url = "{page}"\n')
        [message] = api.sent
        [[_, _], [open_button]] = message["reply_markup"]["inline_keyboard"]
        assert open_button["text"] == "Open in Obsidian"
        assert open_button["url"].startswith("https://example.org/open.html#obsidian%3A%2F%2Fopen%3Fvault%3D")


def test_a_bot_api_that_opens_obsidian_links_gets_the_open_button(tmp_path: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        api.link_schemes = ("http", "https", "tg", "obsidian")
        escalated(tmp_path, api)
        [message] = api.sent
        assert api.buttons(message) == ["Approve once", "Deny", "Open in Obsidian"]


def test_a_press_answers_a_plan_note_too(tmp_path: Path, runs: Path) -> None:
    from tests.support.helpers import with_plans

    with FakeBotAPI(TOKEN) as api:
        local = f'[notify.telegram]\ntoken = "{TOKEN}"\napi_base = "{api.base}"\npoll_timeout = 0\n'
        local += f"chat_ids = [{ME}]\n"
        vault = vault_with(tmp_path / "Work vault", "# Inbox\n", local, fake_profiles=True)
        plan = "---\ntype: research\n---\nRotate the Stripe secret key and update the production env file.\n"
        with_plans(vault, {"rotate-keys.md": plan})
        tick(Vault.open(vault), wait_settle=False)
        [message] = api.sent
        assert "PLAN-rotate-keys is escalated" in message["text"]
        query = api.press(message, "Approve once")
        tick(Vault.open(vault), wait_settle=False)
        assert toast(api, query).startswith("Approved once"), toast(api, query)
        text = (vault / "executor-queue" / "rotate-keys.md").read_text()
        assert "- decision: approve — via Telegram button (Ann)" in text
        assert runs.read_text().split() == ["PLAN-rotate-keys"]
