"""The chat's contract: a reply is given again on every fetch until it is acknowledged (so one that never
reached a note is not lost), and never after; a notice sent reaches the chat.  The strict Telegram Bot API
on 127.0.0.1 with ``notify.telegram``, and the twin."""

from __future__ import annotations

from tests.contract.conftest import ChatSide
from vaultops.notify.message import Notice


def test_a_reply_is_delivered_until_it_is_confirmed(chats: ChatSide) -> None:
    assert chats.chat.fetch(timeout=0).replies == []
    chats.say("approve REQ-a")
    first = chats.chat.fetch(timeout=0)
    again = chats.chat.fetch(timeout=0)
    assert [(r.request_id, r.verdict) for r in first.replies] == [("REQ-a", "approve")]
    assert [(r.request_id, r.verdict) for r in again.replies] == [("REQ-a", "approve")]
    assert first.next_offset == again.next_offset is not None
    chats.chat.ack(first.next_offset)
    chats.say("deny REQ-b not now")
    after = chats.chat.fetch(timeout=0)
    assert [(r.request_id, r.verdict) for r in after.replies] == [("REQ-b", "deny")]
    chats.chat.ack(after.next_offset)
    chats.chat.ack(first.next_offset)  # an older offset confirms nothing again
    assert chats.chat.fetch(timeout=0).replies == []


def test_a_notice_sent_reaches_the_chat(chats: ChatSide) -> None:
    chats.sender.send(Notice("REQ-a#escalated", "REQ-a waits for you", "Rotate the key?"))
    assert any("REQ-a waits for you" in text for text in chats.sent())
    assert chats.sender.id == "telegram:4242"
