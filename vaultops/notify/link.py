"""Who has written to the bot: the chats (Telegram) or the senders (Zulip) ``vaultops link-chat`` offers to
link, read from the chat service without acknowledging anything.

Telegram: ``getUpdates`` without an offset returns every update not yet confirmed and confirms none, so the
daemon still gets each one afterwards (it offers the same ``allowed_updates`` as the daemon's own polls, which
Telegram remembers from call to call).  Zulip: the stream's newest messages, as the daemon's first look reads
them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vaultops.notify.message import one_line, shorten
from vaultops.notify.telegram import Bot, TelegramError
from vaultops.notify.zulip import FIRST_LOOK, ZulipClient

LOOK = 100  # updates or messages read: Telegram keeps at most 100 unconfirmed updates per call anyway
NAME = 60  # characters of a name shown


@dataclass(frozen=True, slots=True)
class SeenChat:
    """A chat that wrote to the bot: its id, its kind (private, group, supergroup, channel), a name to
    recognise it by, and the id of the person who wrote last (for ``users`` in a group)."""

    id: int
    kind: str
    name: str
    user: int = 0


@dataclass(frozen=True, slots=True)
class SeenSender:
    """Someone who wrote in the Zulip stream: the address ``senders`` lists, and their name."""

    email: str
    name: str


def _obj(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _name(chat: Mapping[str, Any], sender: Mapping[str, Any]) -> str:
    title = _str(chat.get("title"))
    person = " ".join(p for p in (_str(chat.get("first_name")), _str(chat.get("last_name"))) if p)
    person = person or " ".join(
        p for p in (_str(sender.get("first_name")), _str(sender.get("last_name"))) if p
    )
    handle = _str(chat.get("username")) or _str(sender.get("username"))
    name = title or person or (f"@{handle}" if handle else "")
    if handle and name != f"@{handle}":
        name += f" (@{handle})"
    return shorten(one_line(name), NAME) or "(no name)"


def chats_in(updates: object) -> list[SeenChat]:
    """The chats in a ``getUpdates`` answer, each once (the newest sender kept), in the order they first
    wrote.  Anything not shaped as Telegram shapes it is left out."""
    seen: dict[int, SeenChat] = {}
    for update in updates if isinstance(updates, list) else []:
        update = _obj(update)
        query = _obj(update.get("callback_query"))
        for message, sender in (
            (_obj(update.get("message")), None),
            (_obj(update.get("edited_message")), None),
            (_obj(query.get("message")), _obj(query.get("from"))),
            (_obj(update.get("my_chat_member")), None),
        ):
            chat = _obj(message.get("chat"))
            ident = chat.get("id")
            if not isinstance(ident, int) or isinstance(ident, bool):
                continue
            who = sender if sender is not None else _obj(message.get("from"))
            user = who.get("id")
            found = SeenChat(
                ident, _str(chat.get("type")) or "chat", _name(chat, who),
                user if isinstance(user, int) and not isinstance(user, bool) else 0,
            )  # fmt: skip
            seen[ident] = found  # a dict keeps the place of its first write
    return list(seen.values())


def telegram_chats(bot: Bot) -> list[SeenChat]:
    """The chats that wrote to the bot and whose updates nobody has confirmed yet; TelegramError when the
    Bot API cannot be read."""
    params = {"timeout": 0, "limit": LOOK, "allowed_updates": ["message", "callback_query"]}
    updates = bot.call("getUpdates", params)
    if not isinstance(updates, list):
        raise TelegramError("getUpdates: the answer was not a list of updates")
    return chats_in(updates)


def senders_in(messages: list[dict[str, Any]], own: str) -> list[SeenSender]:
    """The people who wrote these messages, each once, newest name kept; the bot itself (``own``) left out."""
    seen: dict[str, SeenSender] = {}
    for message in messages:
        email = _str(message.get("sender_email")).strip()
        if not email or email.lower() == own.strip().lower():
            continue
        name = shorten(one_line(_str(message.get("sender_full_name"))), NAME)
        seen[email.lower()] = SeenSender(email, name or email)
    return list(seen.values())


def zulip_senders(client: ZulipClient, stream: str) -> list[SeenSender]:
    """Who wrote among the stream's newest messages; ZulipError when it cannot be read."""
    return senders_in(client.messages_after(stream, None, max(FIRST_LOOK, LOOK)), client.email)
