"""What ``vaultops link-chat`` reads from a chat service is JSON from the network: any shape gives a list of
chats (or senders) without raising, each once, in the order they first wrote, and only ids Telegram gave."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultops.notify.link import SeenChat, SeenSender, chats_in, senders_in

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
_chat = st.fixed_dictionaries(
    {"id": st.integers(-(10**13), 10**13) | st.booleans() | st.text(max_size=3), "type": _json},
    optional={"title": _json, "first_name": _json, "last_name": _json, "username": _json},
)
_update = st.one_of(
    _json,
    st.fixed_dictionaries({"update_id": st.integers(), "message": st.fixed_dictionaries({"chat": _chat})}),
    st.fixed_dictionaries(
        {
            "callback_query": st.fixed_dictionaries(
                {"from": _json, "message": st.fixed_dictionaries({"chat": _chat})}
            )
        }
    ),
)


def _ids(updates: Any) -> list[int]:
    """The chat ids Telegram's shapes hold, in order, each once."""
    out: list[int] = []
    for update in updates if isinstance(updates, list) else []:
        if not isinstance(update, dict):
            continue
        query: dict[str, Any] = (
            update["callback_query"] if isinstance(update.get("callback_query"), dict) else {}
        )
        for message in (update.get("message"), update.get("edited_message"), query.get("message"),
                        update.get("my_chat_member")):  # fmt: skip
            chat = message.get("chat") if isinstance(message, dict) else None
            ident = chat.get("id") if isinstance(chat, dict) else None
            if isinstance(ident, int) and not isinstance(ident, bool) and ident not in out:
                out.append(ident)
    return out


@settings(max_examples=300, deadline=None)
@given(st.one_of(_json, st.lists(_update, max_size=6)))
def test_any_answer_gives_each_chat_once_in_order_without_raising(updates: Any) -> None:
    chats = chats_in(json.loads(json.dumps(updates)))
    assert [c.id for c in chats] == _ids(json.loads(json.dumps(updates)))
    assert all(isinstance(c.name, str) and c.name and "\n" not in c.name for c in chats)


def test_a_chat_is_named_as_a_person_recognises_it() -> None:
    updates = [
        {"update_id": 1, "message": {"chat": {"id": 4242, "type": "private", "first_name": "Ann",
                                               "last_name": "Lee", "username": "ann"}, "from": {"id": 4242}}},
        {"update_id": 2, "message": {"chat": {"id": -100, "type": "supergroup", "title": "Ops\nroom"},
                                     "from": {"id": 7, "first_name": "Bo"}}},
        {"update_id": 3, "message": {"chat": {"id": -100, "type": "supergroup", "title": "Ops\nroom"},
                                     "from": {"id": 8}}},
    ]  # fmt: skip
    assert chats_in(updates) == [
        SeenChat(4242, "private", "Ann Lee (@ann)", 4242),
        SeenChat(-100, "supergroup", "Ops room", 8),  # the newest writer: the one to add to users
    ]


def test_senders_leave_out_the_bot_and_count_an_address_once() -> None:
    messages: list[dict[str, Any]] = [
        {"sender_email": "Bot@example.org", "sender_full_name": "bot"},
        {"sender_email": "ann@example.org", "sender_full_name": "Ann"},
        {"sender_email": "ANN@example.org", "sender_full_name": "Ann Lee"},
        {"sender_email": 5},
    ]
    assert senders_in(messages, "bot@example.org") == [SeenSender("ANN@example.org", "Ann Lee")]
