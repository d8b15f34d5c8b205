"""Telegram: a bot that sends the person's notices and reads their ``approve``/``deny`` replies back.

Only the standard library speaks HTTP here, with a timeout on every call, against a configurable API base.

Notices to Telegram go through this module rather than apprise's ``tgram://``: apprise's Telegram plugin
posts to a fixed host (``NotifyTelegram.notify_url = "https://api.telegram.org/bot"``, a class attribute
that no URL parameter changes), so it could not be pointed at a self-hosted Bot API server or at a loopback
fake in tests, while the replies must be read from that same base.  One client for both also keeps the bot
that asks and the bot that listens the same, so a reply to a notice can leave the request id out.
``tgram://`` in ``[notify] urls`` still works, for a bot that only tells.

Replies are read with ``getUpdates`` and an offset kept in state.db (per bot), so each is returned once,
across passes and restarts.  Only chats listed in ``chat_ids`` count; anything else is logged and dropped.
Nothing here writes into notes: the pipeline turns a ``Reply`` into the person's decision.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vaultops.base.redact import redact
from vaultops.config import TelegramConfig
from vaultops.notify.logs import Log
from vaultops.notify.message import Notice, one_line
from vaultops.notify.replies import Verdict, parse_reply
from vaultops.store.state import StateDB

DEFAULT_API = "https://api.telegram.org"
HTTP_TIMEOUT = 10.0  # seconds for a call, on top of the long poll's own wait
MAX_TEXT = 4096  # Telegram refuses longer messages
_OFFSET_KEY = "telegram.offset."  # + the bot's id: another bot's updates start from their own offset


class TelegramError(Exception):
    """A Bot API call that failed; its message is redacted (the token is in every URL)."""


@dataclass(frozen=True, slots=True)
class Reply:
    request_id: str
    verdict: Verdict
    comment: str
    who: str  # the sender's name, with the group's title in a group chat
    chat_id: int
    update_id: int
    message_id: int  # to answer in the thread
    date: int  # when it was written (Unix time): an answer from before an escalation must not count


@dataclass(frozen=True, slots=True)
class Batch:
    replies: list[Reply]
    next_offset: int | None  # to ``ack`` once the replies are safe; None when nothing new came


class Bot:
    def __init__(self, token: str, api_base: str = DEFAULT_API, timeout: float = HTTP_TIMEOUT) -> None:
        self._token = token
        self.api_base = api_base.rstrip("/")
        self.timeout = timeout

    def __repr__(self) -> str:  # never the token
        return f"Bot({self.id!r}, api_base={self.api_base!r})"

    @property
    def id(self) -> str:
        """The bot's number: the part of the token before the colon, which is not the secret."""
        return self._token.partition(":")[0]

    def _redact(self, text: str) -> str:
        return redact(text.replace(self._token, "[REDACTED:telegram]") if self._token else text)

    def call(self, method: str, params: Mapping[str, Any], timeout: float | None = None) -> Any:
        """The ``result`` of a Bot API method; TelegramError when it cannot be had."""
        request = urllib.request.Request(
            f"{self.api_base}/bot{self._token}/{method}",
            data=json.dumps(params).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout or self.timeout) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = _description(exc.read()) or str(exc.reason)
            raise TelegramError(self._redact(f"{method}: HTTP {exc.code}: {detail}")) from None
        except urllib.error.URLError as exc:
            raise TelegramError(self._redact(f"{method}: {exc.reason}")) from None
        except (OSError, ValueError) as exc:  # timeouts, resets, a body that is not JSON
            raise TelegramError(self._redact(f"{method}: {type(exc).__name__}: {exc}")) from None
        if not isinstance(payload, dict) or payload.get("ok") is not True:
            said = _str(_obj(payload).get("description"))
            raise TelegramError(self._redact(f"{method}: {said or 'the answer was not ok'}"))
        return payload.get("result")

    def send(self, chat_id: int, text: str) -> int:
        """Send ``text`` as plain text (no markup to escape); the message's id."""
        if len(text) > MAX_TEXT:
            text = text[: MAX_TEXT - 1] + "…"
        params = {"chat_id": chat_id, "text": text, "disable_web_page_preview": True}
        result = self.call("sendMessage", params)
        return int(result.get("message_id", 0)) if isinstance(result, dict) else 0

    def send_notice(self, chat_id: int, notice: Notice) -> int:
        return self.send(chat_id, f"{notice.title}\n\n{notice.body}")


def _description(body: bytes) -> str:
    try:
        payload = json.loads(body)
    except ValueError:
        return ""
    return str(payload.get("description") or "") if isinstance(payload, dict) else ""


# Updates are JSON from the network: every field is checked for its type before it is used.
def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _obj(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _who(message: Mapping[str, Any]) -> str:
    sender = _obj(message.get("from"))
    chat = _obj(message.get("chat"))
    parts = [_str(sender.get(k)).strip() for k in ("first_name", "last_name")]
    name = " ".join(p for p in parts if p)
    if not name and _str(sender.get("username")):
        name = "@" + _str(sender.get("username"))
    title = _str(chat.get("title"))
    who = f"{name} in {title}" if name and title else name or title or f"chat {chat.get('id')}"
    return one_line(who)  # it signs a line in a note: one line, whatever the profile holds


class Telegram:
    """The bot of ``[notify.telegram]``, the chats it trusts, and where its updates were read up to."""

    def __init__(self, config: TelegramConfig, state: StateDB, log: Log, bot: Bot | None = None) -> None:
        token = config.token.get_secret_value()
        self.bot = bot if bot is not None else Bot(token, config.api_base)
        self.chat_ids = frozenset(config.chat_ids)
        self.poll_timeout = config.poll_timeout
        self.state = state
        self.log = log

    @property
    def offset(self) -> int | None:
        stored = self.state.get(_OFFSET_KEY + self.bot.id)
        return int(stored) if stored else None

    def ack(self, next_offset: int | None) -> None:
        """Replies up to ``next_offset`` are safe: never return them again (Telegram forgets them too on
        the next call)."""
        current = self.offset
        if next_offset is not None and (current is None or next_offset > current):
            self.state.set(_OFFSET_KEY + self.bot.id, str(next_offset))

    def fetch(self, timeout: float | None = None) -> Batch:
        """Replies since the last ``ack``, without acknowledging them: a caller that must not lose one
        acks after writing them down (at least once).  Waits up to ``timeout`` seconds (default
        ``poll_timeout``) for something to arrive.  TelegramError when the Bot API cannot be read."""
        wait = self.poll_timeout if timeout is None else timeout
        params: dict[str, Any] = {"timeout": int(wait), "allowed_updates": ["message"]}
        if self.offset is not None:
            params["offset"] = self.offset
        updates = self.bot.call("getUpdates", params, timeout=wait + self.bot.timeout)
        if not isinstance(updates, list):
            raise TelegramError("getUpdates: the answer was not a list of updates")
        replies: list[Reply] = []
        next_offset: int | None = None
        for update in updates:
            if not isinstance(update, dict) or not isinstance(update.get("update_id"), int):
                continue
            next_offset = max(next_offset or 0, update["update_id"] + 1)
            reply = self._reply(update)
            if reply is not None:
                replies.append(reply)
        return Batch(replies, next_offset)

    def poll(self, timeout: float | None = None) -> list[Reply]:
        """New replies, each returned once (acknowledged at once, so a crash before they are written down
        loses them: the person sees no acknowledgement and answers again).  Errors are logged, not raised:
        a chat service that is down must not stop a pass."""
        try:
            batch = self.fetch(timeout)
        except TelegramError as exc:
            self.log.warn(f"telegram: cannot read replies: {exc}")
            return []
        self.ack(batch.next_offset)
        return batch.replies

    def _reply(self, update: Mapping[str, Any]) -> Reply | None:
        message = update.get("message")
        if not isinstance(message, dict):
            return None  # edits, joins, callbacks: not answers
        chat_id = _obj(message.get("chat")).get("id")
        who = _who(message)
        if not isinstance(chat_id, int) or chat_id not in self.chat_ids:
            # The id is logged so that a person setting up can copy it into chat_ids.
            self.log.info("telegram-ignored", chat_id=chat_id, who=who, why="chat not in chat_ids")
            return None
        replied_to = _str(_obj(message.get("reply_to_message")).get("text"))
        parsed = parse_reply(_str(message.get("text")), replied_to)
        if parsed is None:
            self.log.info("telegram-ignored", chat_id=chat_id, who=who, why="not approve/deny REQ-…")
            return None
        return Reply(
            request_id=parsed.request_id,
            verdict=parsed.verdict,
            comment=parsed.comment,
            who=who,
            chat_id=chat_id,
            update_id=int(update["update_id"]),
            message_id=_int(message.get("message_id")),
            date=_int(message.get("date")),
        )
