"""Telegram and Zulip answers, tried as a new user would and attacked as an adversary would, against a strict
Bot API written from Telegram's documentation (``tests/support/strict_telegram.py``), not vaultops's own fake.

Every attack asserts the safety property: nothing runs that the person did not approve, no decision line is
written for it, the request stays escalated, no secret leaves the machine, and the pass does not crash.
Each documents an attack; where one once got through, its comment says what happened ("Was: …") and the
test is its regression test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon_helpers import Daemon, daemon_vault
from tests.support.fake_servers import ListLog
from tests.support.helpers import INBOX, ROTATE, vault_with
from tests.support.strict_telegram import ApiError, StrictBotAPI, utf16_len
from tests.support.waiting import wait_for
from vaultops.config import TelegramConfig
from vaultops.engine.tick import tick
from vaultops.model import State
from vaultops.notify.message import SHORTENED, Notice
from vaultops.notify.outbox import Outbox
from vaultops.notify.send import deliver
from vaultops.notify.telegram import Bot, Telegram, TelegramError
from vaultops.scan.note import parse_note
from vaultops.store.state import StateDB
from vaultops.vault import Vault

TOKEN = "5550001234:AAFq3XkP0bR7sTu9VwXyZ1aB2cD3eF4gH5i"
ME = 4242
BOB = 5151  # a second member of the team's group
MALLORY = 6666
GROUP = -1001234567890
WIPE = "## REQ-wipe\n- ready: yes\nPermanently wipe the old backups bucket and every snapshot of it.\n"


# --- the vault, set up as the README says ------------------------------------------------------------


def _local(api: StrictBotAPI, telegram: str) -> str:
    return f'[notify.telegram]\ntoken = "{TOKEN}"\napi_base = "{api.base}"\npoll_timeout = 0\n{telegram}'


def escalated(
    root: Path, api: StrictBotAPI, inbox: str = ROTATE, telegram: str = f"chat_ids = [{ME}]\nusers = [{ME}]\n"
) -> Path:
    vault = vault_with(root / "Work vault", f"# Inbox\n\n{inbox}", _local(api, telegram), fake_profiles=True)
    tick(Vault.open(vault), wait_settle=False)
    return vault


def world(api: StrictBotAPI) -> None:
    api.private(ME, "Ann", last_name="Example", username="ann")
    api.private(BOB, "Bob")
    api.private(MALLORY, "Mallory")
    api.group(GROUP, "Ops room")


def requests(vault: Path) -> dict[str, Any]:
    return {r.id: r for r in parse_note(INBOX, (vault / INBOX).read_bytes()).requests}


def state_of(vault: Path, rid: str = "REQ-rotate") -> State:
    return requests(vault)[rid].state


def decisions(vault: Path) -> list[str]:
    return [line for line in (vault / INBOX).read_text().splitlines() if line.startswith("- decision:")]


def ran(runs: Path) -> list[str]:
    return runs.read_text().split()


def message_for(api: StrictBotAPI, rid: str, chat: int = ME) -> dict[str, Any]:
    [message] = [m for m in api.sent if m["chat"]["id"] == chat and f"\n{rid} is " in m["text"]]
    return message


def untouched(vault: Path, runs: Path, rid: str = "REQ-rotate") -> None:
    assert decisions(vault) == [], "no decision line for what the person did not answer"
    assert state_of(vault, rid) is State.ESCALATED
    assert ran(runs) == [], "nothing ran"


def pass_(vault: Path) -> list[str]:
    return list(tick(Vault.open(vault), wait_settle=False).warnings)


# --- 2. a new user, following the README -------------------------------------------------------------


def test_happy_path_approve_once_runs_once_and_the_message_says_who_decided(
    tmp_path: Path, runs: Path
) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        assert state_of(vault) is State.ESCALATED
        message = message_for(api, "REQ-rotate")
        assert api.buttons(message) == ["Approve once", "Deny"], "obsidian:// refused once, then left out"
        assert "obsidian://open?vault=Work%20vault" in message["text"], "the link is always in the text"
        approve = api.data(message, "Approve once")
        query = api.press(message, "Approve once")
        pass_(vault)
        assert decisions(vault) == ["- decision: approve — via Telegram button (Ann Example)"]
        assert state_of(vault) is State.DONE and ran(runs) == ["REQ-rotate"]
        assert api.toast(query).startswith("Approved once")
        held = api.held(message)
        assert "Approved once by Ann Example at " in held["text"] and "reply_markup" not in held
        again = api.press(message, data=approve)  # an old client that still shows the button
        pass_(vault)
        assert "already decided" in api.toast(again) and ran(runs) == ["REQ-rotate"]


def test_happy_path_a_typed_deny_with_a_reason(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        api.say(ME, ME, "Deny REQ-rotate not during the freeze")
        pass_(vault)
        assert decisions(vault) == ["- decision: deny — via Telegram (Ann Example): not during the freeze"]
        assert state_of(vault) is State.DENIED and ran(runs) == []


def test_setting_up_an_unknown_chat_is_told_its_id(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, telegram=f"chat_ids = [{ME}]\n")
        api.say(BOB, BOB, "hello bot")
        warnings = pass_(vault)
        assert any(f"ignored a message from chat {BOB} (Bob)" in w for w in warnings), warnings


# --- 3. forged presses ---------------------------------------------------------------------------------


FORGERIES = {
    "another binding": lambda d: "vo1:a:ffffffffffffffff:" + d.rsplit(":", 1)[1],
    "another text hash": lambda d: d.rsplit(":", 1)[0] + ":abcdefabcdef",
    "wrong prefix": lambda d: "vo2" + d[3:],
    "no prefix": lambda d: d[4:],
    "overlong": lambda d: d + "0" * 40,
    "unicode": lambda d: d.replace("a", "а", 1),  # a Cyrillic а as the verb
    "colon injection": lambda d: d.replace(":a:", ":a:x:"),
    "colon injection at the end": lambda d: d + ":",
    "upper-case verb": lambda d: d.replace(":a:", ":A:"),
    "empty": lambda d: "",
    "typed command as data": lambda d: "approve REQ-rotate",
}


@pytest.mark.parametrize("how", sorted(FORGERIES))
def test_forged_callback_data_does_nothing(tmp_path: Path, runs: Path, how: str) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        message = message_for(api, "REQ-rotate")
        query = api.press(message, data=FORGERIES[how](api.data(message, "Approve once")))
        pass_(vault)
        untouched(vault, runs)
        assert query in api.toasts, "every press is answered, so the phone stops spinning"
        assert api.buttons(message) == ["Approve once", "Deny"]


def test_another_requests_real_binding_on_this_message_does_nothing(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, inbox=ROTATE + "\n" + WIPE)
        rotate, wipe = message_for(api, "REQ-rotate"), message_for(api, "REQ-wipe")
        binding = api.data(wipe, "Approve once").split(":")[2]
        shown = api.data(rotate, "Approve once").split(":")[3]
        api.press(rotate, data=f"vo1:a:{binding}:{shown}")
        binding = api.data(rotate, "Approve once").split(":")[2]
        shown = api.data(wipe, "Approve once").split(":")[3]
        api.press(wipe, data=f"vo1:a:{binding}:{shown}")
        pass_(vault)
        assert decisions(vault) == [] and ran(runs) == []
        assert state_of(vault, "REQ-wipe") is State.ESCALATED and state_of(vault) is State.ESCALATED


def test_a_press_from_a_chat_no_longer_in_chat_ids_does_nothing(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, telegram=f"chat_ids = [{ME}, {GROUP}]\nusers = [{ME}]\n")
        in_group = message_for(api, "REQ-rotate", GROUP)
        local = vault / ".vaultops" / "local.toml"
        local.write_text(local.read_text().replace(f"chat_ids = [{ME}, {GROUP}]", f"chat_ids = [{ME}]"))
        query = api.press(in_group, user_id=ME)
        pass_(vault)
        untouched(vault, runs)
        assert "not one of the people" in api.toast(query)


def test_a_press_by_someone_not_in_users_does_nothing(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, telegram=f"chat_ids = [{GROUP}]\nusers = [{ME}]\n")
        in_group = message_for(api, "REQ-rotate", GROUP)
        query = api.press(in_group, user_id=MALLORY)
        warnings = pass_(vault)
        untouched(vault, runs)
        assert "not one of the people" in api.toast(query)
        assert any("Mallory in Ops room (user 6666)" in w for w in warnings), warnings


def test_without_users_no_group_member_can_press(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, telegram=f"chat_ids = [{GROUP}]\n")
        in_group = message_for(api, "REQ-rotate", GROUP)
        api.press(in_group, user_id=ME)
        api.press(in_group, user_id=BOB, button="Deny")
        pass_(vault)
        untouched(vault, runs)


def test_a_press_on_an_inaccessible_message_does_nothing(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        query = api.press(message_for(api, "REQ-rotate"), inaccessible=True)
        pass_(vault)
        untouched(vault, runs)
        assert "too old to answer from here" in api.toast(query)


def test_a_press_whose_message_text_was_changed_or_is_absent_does_nothing(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, inbox=ROTATE + "\n" + WIPE)
        rotate = message_for(api, "REQ-rotate")
        wipe_text = message_for(api, "REQ-wipe")["text"]
        held = api.held(rotate)
        queries = [
            api.press(rotate, shown={**held, "text": held["text"].replace("production", "staging")}),
            api.press(rotate, shown={k: v for k, v in held.items() if k != "text"}),
            api.press(
                rotate, shown={**held, "text": wipe_text}
            ),  # the other request's text under these buttons
        ]
        pass_(vault)
        untouched(vault, runs)
        assert state_of(vault, "REQ-wipe") is State.ESCALATED
        assert all(q in api.toasts for q in queries)
        # a last paragraph naming another request (as a settled message has one) is read as the settled one:
        # it approves the request the buttons were made for, never the one the paragraph names
        api.press(rotate, shown={**held, "text": held["text"] + "\n\nREQ-wipe is escalated."})
        pass_(vault)
        assert state_of(vault, "REQ-wipe") is State.ESCALATED and "REQ-wipe" not in ran(runs)


def test_a_replayed_press_after_a_restart_does_nothing_more(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        message = message_for(api, "REQ-rotate")
        api.press(message)
        with api.lock:
            [update] = [json.loads(json.dumps(u)) for u in api.updates if "callback_query" in u]
        pass_(vault)
        assert ran(runs) == ["REQ-rotate"]
        # the same update again (a server that replays, a state.db restored from a backup)
        api.queries[update["callback_query"]["id"]]["answered"] = False
        api.raw_update(update)
        pass_(vault)
        assert ran(runs) == ["REQ-rotate"] and len(decisions(vault)) == 1


def test_a_press_on_a_message_whose_request_was_edited_does_nothing(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        inbox = vault / INBOX
        inbox.write_text(
            inbox.read_text().replace("production env file", "production env file and the CI secrets")
        )
        query = api.press(message_for(api, "REQ-rotate"))
        pass_(vault)
        assert ran(runs) == [] and not any("Telegram button" in d for d in decisions(vault))
        assert "changed since this message was sent" in api.toast(query)


def test_a_press_answered_late_still_settles_the_message(tmp_path: Path, runs: Path) -> None:
    # Telegram lets a bot answer a callback query only for a short while after the press.  With `vaultops
    # tick` run on a schedule (cron, a systemd timer) every press is older than that when it is read.  The
    # decision is written and runs; the message itself must then still say who decided, its buttons gone.
    # Was: answerCallbackQuery fails ("query is too old") and `Teller.tell_presses` skips `settle_message`
    # because both are in one try (vaultops/engine/tell.py), so the Approve button stays under a decided
    # request, and every later press answers nothing either.
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        message = message_for(api, "REQ-rotate")
        api.press(message, age=60)  # read a minute after the press
        warnings = pass_(vault)
        assert state_of(vault) is State.DONE and ran(runs) == ["REQ-rotate"]
        assert any("could not answer a button press" in w for w in warnings), warnings
        held = api.held(message)
        assert "Approved once by Ann Example" in held["text"], "the message says who decided"
        assert "reply_markup" not in held, "its buttons are gone"


# --- request ids and text that imitate --------------------------------------------------------------


@pytest.mark.parametrize(
    "typed",
    [
        "approve РЕQ-rotate",  # Cyrillic Р and Е
        "approve REQ‐rotate",  # U+2010 hyphen
        "approve REQ-rotatе",  # Cyrillic е at the end: another id
        "approve REQ-rotat",
        "approve REQ-rotatee",
        "approve REQ-rotate-2",
        "approve REQ-",
        "approvee REQ-rotate",
        "approve\u200bREQ-rotate",
        "please approve REQ-rotate",
    ],
)
def test_typed_lookalike_ids_approve_nothing(tmp_path: Path, runs: Path, typed: str) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        api.say(ME, ME, typed)
        pass_(vault)
        untouched(vault, runs)


@pytest.mark.parametrize(
    "typed",
    [
        'approve "REQ-rotate"',
        "approve `REQ-rotate`",
        "approve #REQ-rotate",
        "approve РЕQ-rotate",
        "approve REQ‐rotate",
    ],
)
def test_a_reply_that_names_another_request_does_not_approve_the_one_replied_to(
    tmp_path: Path, runs: Path, typed: str
) -> None:
    # The person replies to REQ-wipe's message but names REQ-rotate (quoted, in backticks, with a '#', or
    # as a lookalike a phone keyboard or a copy-paste produced).  What they named is not REQ-wipe: nothing
    # should be approved (the reply is ignored, or refused as ambiguous).
    # Was: `parse_reply` (vaultops/notify/replies.py) only looks for an id right after the verb; when it
    # finds none there it falls back to the replied-to message's id, and keeps the other id as a comment.
    # REQ-wipe (permanent deletion) is approved and runs:
    # "- decision: approve — via Telegram (…): "REQ-rotate"".
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, inbox=ROTATE + "\n" + WIPE)
        api.say(ME, ME, typed, reply_to=message_for(api, "REQ-wipe"))
        pass_(vault)
        assert state_of(vault, "REQ-wipe") is State.ESCALATED, decisions(vault)
        untouched(vault, runs)


def test_a_reply_without_an_id_answers_the_request_replied_to(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, inbox=ROTATE + "\n" + WIPE)
        api.say(ME, ME, "deny", reply_to=message_for(api, "REQ-wipe"))
        pass_(vault)
        assert state_of(vault, "REQ-wipe") is State.DENIED and state_of(vault) is State.ESCALATED
        assert ran(runs) == []


def test_a_request_whose_text_imitates_vaultops_lines_approves_only_itself(
    tmp_path: Path, runs: Path
) -> None:
    sly = (
        "## REQ-notes\n- ready: yes\nRotate the notes key.\nREQ-wipe is escalated.\n- decision: approve\n"
        "- status: approved @ 2026-05-04T09:00:00+10:00 — approved once by the person\n"
    )
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, inbox=WIPE + "\n" + sly)
        wipe = message_for(api, "REQ-wipe")
        for message in api.sent:
            if "REQ-notes" in message["text"].split("\n", 1)[0] and "Approve once" in api.buttons(message):
                api.press(message)
        pass_(vault)
        assert state_of(vault, "REQ-wipe") is State.ESCALATED
        assert "REQ-wipe" not in ran(runs)
        assert api.buttons(wipe) == ["Approve once", "Deny"]


def test_a_request_text_carrying_the_shortened_sentence_and_ids_cannot_trick_a_press(
    tmp_path: Path, runs: Path
) -> None:
    sly = f"## REQ-sly\n- ready: yes\nRotate the key. REQ-wipe is escalated. {SHORTENED}\n"
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, inbox=WIPE + "\n" + sly)
        [message] = [m for m in api.sent if "\nREQ-sly is " in m["text"]]
        assert "Approve once" not in api.buttons(message)
        api.press(message, data=api.data(message, "Deny").replace(":d:", ":a:"))
        pass_(vault)
        assert decisions(vault) == [] and ran(runs) == []
        assert state_of(vault, "REQ-wipe") is State.ESCALATED


def test_two_ids_that_differ_by_one_character_are_kept_apart(tmp_path: Path, runs: Path) -> None:
    one = ROTATE.replace("REQ-rotate", "REQ-rotate1")
    two = ROTATE.replace("REQ-rotate", "REQ-rotate2")
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, inbox=one + "\n" + two)
        api.press(message_for(api, "REQ-rotate1"))
        api.say(ME, ME, "deny REQ-rotate2.")  # a full stop ends the sentence
        pass_(vault)
        assert ran(runs) == ["REQ-rotate1"]
        assert state_of(vault, "REQ-rotate2") is State.DENIED


# --- typed replies ---------------------------------------------------------------------------------


def test_approve_naming_two_requests_runs_only_the_first(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, inbox=ROTATE + "\n" + WIPE)
        api.say(ME, ME, "approve REQ-rotate REQ-wipe")
        pass_(vault)
        assert state_of(vault, "REQ-wipe") is State.ESCALATED
        assert "REQ-wipe" not in ran(runs)


@pytest.mark.parametrize(
    "typed",
    ["deny REQ-rotate for this request", "approve REQ-rotate fоr this request", "approve REQ-rotate once"],
)
def test_scope_words_never_widen_what_they_should_not(tmp_path: Path, runs: Path, typed: str) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        api.say(ME, ME, typed)
        pass_(vault)
        text = (vault / INBOX).read_text()
        assert "approved for this request" not in text
        assert not any(d.startswith("- decision: approve for this request") for d in decisions(vault))


def test_approve_for_this_request_says_so(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        api.say(ME, ME, "approve REQ-rotate for this request")
        pass_(vault)
        assert decisions(vault) == ["- decision: approve for this request — via Telegram (Ann Example)"]
        assert "approved for this request by the person" in (vault / INBOX).read_text()


def test_a_typed_answer_from_before_the_escalation_does_not_count(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        api.say(ME, ME, "approve REQ-rotate", date=1_000_000_000)
        pass_(vault)
        untouched(vault, runs)


def test_a_typed_answer_from_someone_not_in_users_does_not_count(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, telegram=f"chat_ids = [{GROUP}]\nusers = [{ME}]\n")
        api.say(GROUP, MALLORY, "approve REQ-rotate")
        api.say(GROUP, MALLORY, "/approve@strict_vault_bot REQ-rotate")
        pass_(vault)
        untouched(vault, runs)


def test_a_very_long_message_is_harmless(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        api.say(ME, ME, "deny REQ-rotate " + "why " * 1000)
        api.say(ME, ME, "x" * 4096)
        pass_(vault)
        assert state_of(vault) is State.DENIED and ran(runs) == []
        [line] = decisions(vault)
        assert len(line) < 6000


def test_a_nul_byte_in_a_reply_is_not_written_into_the_note(tmp_path: Path, runs: Path) -> None:
    # A NUL byte from the network must not reach the note.  What should happen: the deny is taken without
    # the NUL (or the message ignored).  Was: `parse_reply`/`decision_line` (vaultops/notify/replies.py,
    # vaultops/engine/heard.py) keep the NUL in the comment; the note gets "- decision: deny — … bad\0idea",
    # and the request then ends as `error` ("the request text contains a NUL byte"), not `denied`.
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        api.raw_update(
            {"message": {"message_id": 99, "date": int(api.now()), "chat": api.chats[ME],
                         "from": api.people[ME], "text": "deny REQ-rotate bad\x00idea"}}
        )  # fmt: skip
        pass_(vault)
        assert b"\x00" not in (vault / INBOX).read_bytes()
        assert state_of(vault) is State.DENIED and ran(runs) == []


def test_an_invalid_surrogate_in_a_reply_does_not_crash_the_pass(tmp_path: Path, runs: Path) -> None:
    # A lone surrogate (valid JSON: "\ud800") from a broken or hostile Bot API.  The pass must go on,
    # and the answer be taken without it or dropped, never a crash on every pass.  Was: the decision line
    # is written, then `StateDB.remember_lines` (vaultops/store/state.py) hashes it with .encode("utf-8"):
    # UnicodeEncodeError out of `vaultops tick`; the update is never acknowledged, so every pass crashes.
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        api.raw_update(
            {"message": {"message_id": 98, "date": int(api.now()), "chat": api.chats[ME],
                         "from": {**api.people[ME], "first_name": "Ann\ud800"},
                         "text": "deny REQ-rotate \ud800"}}
        )  # fmt: skip
        pass_(vault)
        pass_(vault)
        assert ran(runs) == []
        (vault / INBOX).read_text(encoding="utf-8")


def test_a_malformed_sender_id_does_not_crash_the_pass_or_stick(tmp_path: Path, runs: Path) -> None:
    # "Updates are JSON from the network: every field is checked for its type before it is used"
    # (vaultops/notify/telegram.py).  An update whose `from.id` is not a number must be dropped.
    # Was: `Telegram._reply` and `Telegram.may_press` test `user in self.users` on a frozenset, and a list
    # id raises TypeError (unhashable), which is not a TelegramError: `vaultops tick` crashes, the offset is
    # never acknowledged, so every later pass crashes on the same update (and the daemon's listener thread
    # dies without a word).
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api)
        api.raw_update(
            {"message": {"message_id": 97, "date": int(api.now()), "chat": api.chats[ME],
                         "from": {"id": [ME], "is_bot": False, "first_name": "Ann"},
                         "text": "approve REQ-rotate"}}
        )  # fmt: skip
        pass_(vault)
        api.say(ME, ME, "deny REQ-rotate")
        pass_(vault)
        assert state_of(vault) is State.DENIED and ran(runs) == []


# --- what a message shows ----------------------------------------------------------------------------


def test_a_long_request_has_no_approve_and_a_forged_approve_does_nothing(tmp_path: Path, runs: Path) -> None:
    long = "## REQ-rotate\n- ready: yes\nRotate the Stripe secret key. " + "Check the dashboards after. " * 20
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, inbox=long + "\n")
        message = message_for(api, "REQ-rotate")
        assert SHORTENED in message["text"] and api.buttons(message) == ["Deny"]
        query = api.press(message, data=api.data(message, "Deny").replace(":d:", ":a:"))
        pass_(vault)
        untouched(vault, runs)
        assert "did not show everything" in api.toast(query)


SECRETS = {
    "stripe": "sk_live_51HqL0aKz9XyQ2wErTyUiOpAs",
    "github": "ghp_Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz0Xc",
    "aws": "AKIAIOSFODNN7EXAMPL3",
    "telegram": "7771112223:AAGx9Yz8Wv7Ut6Sr5Qp4On3Ml2Kj1Ih0Gf",
    "openai": "sk-proj-Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_a_secret_in_a_request_never_reaches_telegram(tmp_path: Path, runs: Path, kind: str) -> None:
    secret = SECRETS[kind]
    inbox = f"## REQ-rotate\n- ready: yes\nRotate the key {secret} and update the production env file.\n"
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, inbox=inbox)
        message = message_for(api, "REQ-rotate")
        assert "Approve once" not in api.buttons(message), "a message that hid a secret cannot approve"
        api.press(message, "Deny")
        pass_(vault)
        assert state_of(vault) is State.DENIED
        assert secret not in api.everything_sent()
        assert secret[:16] not in api.everything_sent()


def test_the_bot_token_never_shows_when_the_api_echoes_it(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        api.echo_path_in_errors = True
        api.fail["sendmessage"] = [ApiError(502, "Bad Gateway")] * 6
        vault = escalated(tmp_path, api)
        warnings = pass_(vault) + pass_(vault)
        assert api.refused and TOKEN in api.refused[0][2], "the fake did echo the token"
        status = subprocess.run(
            [sys.executable, "-m", "vaultops", "--vault", str(vault), "status", "--json"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        secret_part = TOKEN.split(":", 1)[1]
        assert secret_part not in "\n".join(warnings)
        assert secret_part not in status.stdout + status.stderr
        for path in vault.rglob("*"):
            if path.is_file() and path.name != "local.toml" and ".git" not in path.parts:
                assert secret_part.encode() not in path.read_bytes(), path


def test_a_percent_encoded_token_echoed_by_a_proxy_is_redacted_too() -> None:
    with StrictBotAPI(TOKEN) as api:
        encoded = TOKEN.replace(":", "%3A")
        api.fail["getme"] = [ApiError(502, f"Bad Gateway for /bot{encoded}/getMe")]
        with pytest.raises(TelegramError) as caught:
            Bot(TOKEN, api.base).call("getMe", {})
        assert TOKEN.split(":", 1)[1] not in str(caught.value)


def test_a_message_is_cut_to_telegrams_limit_as_telegram_counts_it() -> None:
    # Telegram counts a message's length in UTF-16 code units (as its entity offsets do): an emoji or a
    # math letter is two.  What should happen: a long notice is cut so that Telegram takes it (and says
    # it was shortened).  Was: `message_text` and `Bot.send` (vaultops/notify/telegram.py) cut
    # at 4096 Python characters, so a notice full of astral characters (a digest, an escalation whose
    # reasons quote emoji) is refused as "message is too long" on every try: the channel turns failing and
    # the person is never told.
    with StrictBotAPI(TOKEN) as api:
        world(api)
        notice = Notice("k#digest", "Work vault: digest", "🔥 deploy " * 900)
        Bot(TOKEN, api.base).send_notice(ME, notice)
        [message] = api.sent
        assert utf16_len(message["text"]) <= 4096


# --- the Bot API's own behaviour ---------------------------------------------------------------------


def test_a_reply_markup_sent_as_a_json_string_or_object_is_taken() -> None:
    # the strict fake's own check: Telegram takes both forms
    with StrictBotAPI(TOKEN) as api:
        world(api)
        bot = Bot(TOKEN, api.base)
        markup = {"inline_keyboard": [[{"text": "Deny", "callback_data": "vo1:d:x:y"}]]}
        bot.call("sendMessage", {"chat_id": str(ME), "text": "a", "reply_markup": json.dumps(markup)})
        bot.call("sendMessage", {"chat_id": ME, "text": "b", "reply_markup": markup})
        assert [m["reply_markup"] for m in api.sent] == [markup, markup]


def test_a_rate_limit_says_when_to_try_again(tmp_path: Path) -> None:
    # 429 with parameters.retry_after: what should happen is no try before that time (and the channel is
    # not counted as failing for waiting as it was told).  This documents what vaultops does now.

    with StrictBotAPI(TOKEN) as api:
        world(api)
        api.fail["sendmessage"] = [ApiError(429, "Too Many Requests: retry after 600", retry_after=600)] * 5
        state = StateDB(tmp_path / "state.db")
        try:
            Outbox(state).queue(Notice("k#1", "t", "body"))
            config = TelegramConfig(token=TOKEN, chat_ids=(ME,), api_base=api.base)
            log = ListLog()
            t0 = 1_800_000_000.0
            for later in (0, 11, 32, 73):
                deliver(state, (), log, telegram=config, now=t0 + later, failing_after=3)
            tries = [c for c in api.calls if c[0] == "sendmessage"]
            # Was: retry_after is not read (vaultops/notify/telegram.py `Bot.call` keeps only the
            # description; the outbox backs off 10 s, 20 s, …), so Telegram is asked again inside the 600 s
            # it asked for, and the chat is declared a failing channel after three tries in ~70 s.
            assert len(tries) == 1, f"asked again {len(tries) - 1} times within retry_after"
        finally:
            state.close()



def test_updates_of_other_kinds_and_from_bots_are_not_answers(tmp_path: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        config = TelegramConfig(
            token=TOKEN, chat_ids=(ME, GROUP), users=(), api_base=api.base, poll_timeout=0
        )
        state = StateDB(tmp_path / "state.db")
        try:
            telegram = Telegram(config, state, ListLog())
            api.raw_update({"edited_message": {"message_id": 1, "date": 1, "chat": api.chats[ME],
                                               "from": api.people[ME],
                                               "text": "approve REQ-rotate"}})  # fmt: skip
            api.raw_update({"channel_post": {"message_id": 2, "date": 1, "chat": api.chats[GROUP],
                                             "text": "approve REQ-rotate"}})  # fmt: skip
            batch = telegram.fetch(timeout=0)
            assert batch.replies == []
        finally:
            state.close()


# --- groups, pasted tokens, other bots' commands -----------------------------------------------------


def test_a_group_title_does_not_choose_the_profile_an_approval_runs_on(tmp_path: Path, runs: Path) -> None:
    # Anyone in a group may rename it (Telegram's "change group info").  Ann (the one listed user) approves
    # from the group; the request asks for `- profile: worker-research`.  What should happen: it runs on
    # worker-research, as the request says.  Was: the decision line is signed "via Telegram button (Ann
    # Example in Ops worker-code)" (`_who`, vaultops/notify/telegram.py), and `_approved`
    # (vaultops/decide/answers.py) takes any word of the answer's comment that is a profile's name as the
    # profile to run on: Mallory's group title picks worker-code (the shell profile) instead.
    inbox = ROTATE.replace("- ready: yes\n", "- ready: yes\n- profile: worker-research\n")
    with StrictBotAPI(TOKEN) as api:
        world(api)
        api.group(GROUP, "Ops worker-code")
        vault = escalated(tmp_path, api, inbox=inbox, telegram=f"chat_ids = [{GROUP}]\nusers = [{ME}]\n")
        api.press(message_for(api, "REQ-rotate", GROUP), user_id=ME)
        pass_(vault)
        assert ran(runs) == ["REQ-rotate"]
        [approved] = [s for s in (vault / INBOX).read_text().splitlines() if "status: approved" in s]
        assert approved.endswith("runs once on worker-research"), approved


@pytest.mark.parametrize("stray", [" ", "\r", "\n"])
def test_a_token_pasted_with_a_stray_space_or_line_end_never_shows(
    tmp_path: Path, runs: Path, stray: str
) -> None:
    # A token copied from BotFather with a trailing space, or read from an env file with CRLF line ends.
    # What should happen: the token is trimmed (or refused by the config check), and whatever fails is a
    # redacted warning; the pass goes on and its output never holds the token.  Was: `Bot.call`
    # (vaultops/notify/telegram.py) catches OSError/ValueError only, and http.client's InvalidURL ("URL can't
    # contain control characters. '/bot<token>/sendMessage'") is neither: it escapes unredacted, and
    # `vaultops tick` dies with a traceback that prints the whole token.
    with StrictBotAPI(TOKEN) as api:
        world(api)
        local = _local(api, f"chat_ids = [{ME}]\n").replace(f'"{TOKEN}"', json.dumps(TOKEN + stray))
        vault = vault_with(tmp_path / "Work vault", f"# Inbox\n\n{ROTATE}", local, fake_profiles=True)
        done = subprocess.run(
            [sys.executable, "-m", "vaultops", "--vault", str(vault), "tick"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert TOKEN.split(":", 1)[1] not in done.stdout + done.stderr
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        assert state_of(vault) is State.ESCALATED


def test_a_command_addressed_to_another_bot_is_not_an_answer(tmp_path: Path, runs: Path) -> None:
    # In a group, "/approve@ci_bot …" is addressed to another bot (Telegram's command syntax); our bot sees
    # it when its privacy mode is off.  What should happen: only "/approve" or "/approve@<this bot>" counts.
    # Was (minor): `_COMMAND` (vaultops/notify/replies.py) takes "@" + any bot name.
    with StrictBotAPI(TOKEN) as api:
        world(api)
        vault = escalated(tmp_path, api, telegram=f"chat_ids = [{GROUP}]\nusers = [{ME}]\n")
        api.say(GROUP, ME, "/approve@ci_deploy_bot REQ-rotate")
        pass_(vault)
        untouched(vault, runs)


# --- the daemon's long poll --------------------------------------------------------------------------


def _daemon_with_telegram(tmp_path: Path, api: StrictBotAPI, inbox: str) -> Daemon:
    extra = _local(api, f"chat_ids = [{ME}]\nusers = [{ME}]\n")
    extra = extra.replace("poll_timeout = 0", "poll_timeout = 5")
    vault = daemon_vault(tmp_path / "Work vault", f"# Inbox\n\n{inbox}", extra=extra)
    daemon = Daemon(vault)
    daemon.wait_ready()
    return daemon


def test_the_daemon_hears_a_press_through_its_long_poll(tmp_path: Path, runs: Path) -> None:
    with StrictBotAPI(TOKEN) as api:
        world(api)
        daemon = _daemon_with_telegram(tmp_path, api, ROTATE)
        try:
            assert wait_for(lambda: any("\nREQ-rotate is " in m["text"] for m in api.sent)), "told"
            api.press(message_for(api, "REQ-rotate"))
            assert wait_for(lambda: state_of(daemon.vault) is State.DONE), daemon.errors()
            assert ran(runs) == ["REQ-rotate"]
            assert not [r for r in api.refused if "Conflict" in r[2]], "one getUpdates caller at a time"
        finally:
            daemon.stop()


def test_a_malformed_update_does_not_deafen_the_daemon(tmp_path: Path, runs: Path) -> None:
    # What should happen: the malformed update is dropped and the next answer is heard.  Was: the TypeError
    # of `Telegram._reply` (see test_a_malformed_sender_id_…) is not a TelegramError, so it ends the
    # listener thread (`ChatListener._run`, vaultops/daemon/listen.py): the daemon runs on, deaf to Telegram.
    with StrictBotAPI(TOKEN) as api:
        world(api)
        daemon = _daemon_with_telegram(tmp_path, api, ROTATE)
        try:
            assert wait_for(lambda: any("\nREQ-rotate is " in m["text"] for m in api.sent)), "told"
            api.raw_update(
                {"message": {"message_id": 96, "date": int(api.now()), "chat": api.chats[ME],
                             "from": {"id": {"n": ME}, "is_bot": False, "first_name": "Ann"},
                             "text": "hello"}}
            )  # fmt: skip
            api.say(ME, ME, "deny REQ-rotate")
            denied = wait_for(lambda: state_of(daemon.vault) is State.DENIED, timeout=15)
            assert denied, daemon.errors()[-1500:]
        finally:
            daemon.stop()


def test_a_secret_split_by_invisible_characters_never_reaches_telegram(tmp_path: Path, runs: Path) -> None:
    secret = "sk_live_51HqL0aKz9XyQ2wErTyUiOpAs"
    hidden = secret[:12] + "\u200b" + secret[12:20] + "\u2060" + secret[20:]
    inbox = f"## REQ-rotate\n- ready: yes\nRotate the key {hidden} and update the production env file.\n"
    with StrictBotAPI(TOKEN) as api:
        world(api)
        escalated(tmp_path, api, inbox=inbox)
        shown = api.everything_sent().replace("\u200b", "").replace("\u2060", "")
        assert secret[8:] not in shown
        assert "Approve once" not in api.buttons(message_for(api, "REQ-rotate"))
