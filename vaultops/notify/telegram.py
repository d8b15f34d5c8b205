"""Telegram: a bot that sends the person's notices, with buttons under an escalation, and reads their
presses and ``approve``/``deny`` replies back.

Only the standard library speaks HTTP here, with a timeout on every call, against a configurable API base.

Notices to Telegram go through this module rather than apprise's ``tgram://``: apprise's Telegram plugin
posts to a fixed host (``NotifyTelegram.notify_url = "https://api.telegram.org/bot"``, a class attribute
that no URL parameter changes), so it could not be pointed at a self-hosted Bot API server or at a loopback
fake in tests, while the replies must be read from that same base.  One client for both also keeps the bot
that asks and the bot that listens the same, so a reply to a notice can leave the request id out.
``tgram://`` in ``[notify] urls`` still works, for a bot that only tells.

Replies are read with ``getUpdates`` and an offset kept in state.db (per bot), so each is returned once,
across passes and restarts.  Only chats listed in ``chat_ids`` count (and, with ``users``, only those
people); anything else is logged and dropped.  Nothing here writes into notes: the pipeline turns a
``ChatAnswer`` into the person's decision.

An escalation's buttons carry ``vo1:<verb>:<binding>:<shown>`` (at most 64 bytes, as Telegram allows):
the request as it was when the message was sent (``message.binding``) and a hash of the text the
message showed.  Everything else a press needs comes with it from Telegram (the message, its date,
its buttons, who pressed), so any machine that reads the press can judge it, and a modified client that
sends made-up data gains nothing: the text must match its hash, and an approval must be a button the
message really has.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote

from vaultops.base.redact import redact
from vaultops.config import TelegramConfig
from vaultops.notify.http import HttpFailure, fetch_json
from vaultops.notify.logs import Log
from vaultops.notify.message import ELLIPSIS, SHORTENED, Ask, Notice, one_line
from vaultops.notify.replies import ChatAnswer, Press, Verdict, parse_reply
from vaultops.store.state import StateDB

DEFAULT_API = "https://api.telegram.org"
HTTP_TIMEOUT = 10.0  # seconds for a call, on top of the long poll's own wait
MAX_TEXT = 4096  # Telegram refuses longer messages
_OFFSET_KEY = "telegram.offset."  # + the bot's id: another bot's updates start from their own offset
CALLBACK = "vo1"
NO_PREVIEW = {"is_disabled": True}  # Bot API 7.0's link_preview_options (disable_web_page_preview before)
_VERBS: dict[str, Verdict] = {"a": "approve", "d": "deny"}
_NO_LINK_BUTTONS: set[str] = set()  # API bases that refused an obsidian:// button: asked once per process
_ID_LINE = re.compile(r"(?m)^(?P<id>(?:REQ|PLAN)-[A-Za-z0-9._-]+) is ")


class TelegramError(Exception):
    """A Bot API call that failed; its message is redacted (the token is in every URL).  ``retry_after``:
    the seconds Telegram asked to wait before the next call (a 429), else 0."""

    def __init__(self, message: str, retry_after: float = 0.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Refused:
    """A press that counts for nothing, and why (said to the one who pressed)."""

    press: Press
    why: str


@dataclass(frozen=True, slots=True)
class Batch:
    replies: list[ChatAnswer]
    next_offset: int | None  # to ``ack`` once the replies are safe; None when nothing new came
    refused: list[Refused] = field(default_factory=list)


def shown_digest(text: str) -> str:
    """A hash of the text a message shows, its whitespace as Telegram may have tidied it."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8", "surrogatepass")).hexdigest()[:12]


def keyboard(ask: Ask, text: str, open_url: str = "", link_button: bool = True) -> dict[str, Any]:
    """The buttons under an escalation: Approve once (only when the message shows everything it asks
    about), Deny, and Open (the request in Obsidian)."""
    shown = shown_digest(text)
    row = []
    if ask.whole and SHORTENED not in text:
        row.append({"text": "Approve once", "callback_data": f"{CALLBACK}:a:{ask.binding}:{shown}"})
    row.append({"text": "Deny", "callback_data": f"{CALLBACK}:d:{ask.binding}:{shown}"})
    rows = [row]
    if open_url:
        url = open_url.replace("{link}", quote(ask.link, safe=""))
        rows.append([{"text": "Open in Obsidian", "url": url}])
    elif link_button:
        rows.append([{"text": "Open in Obsidian", "url": ask.link}])
    return {"inline_keyboard": rows}


ASKED_KEPT = 8  # messages remembered per request and chat, the newest: older ones lose nothing more


def asked_again(
    sent: list[tuple[int, str]], binding: str, message_id: int
) -> tuple[list[int], list[tuple[int, str]]]:
    """Of the messages ``sent`` about a request, as (message id, binding), those a new message
    ``message_id`` bound to ``binding`` supersedes (another version of the request: their buttons go),
    and the ones to remember now."""
    drop = [m for m, b in sent if b != binding]
    keep = [(m, b) for m, b in sent if b == binding and m != message_id] + [(message_id, binding)]
    return drop, keep[-ASKED_KEPT:]


def telegram_length(text: str) -> int:
    """How long Telegram counts ``text``: in UTF-16 code units (an emoji is two)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def cut_to(text: str, units: int) -> str:
    """The longest prefix of ``text`` Telegram counts as at most ``units`` long."""
    if telegram_length(text) <= units:
        return text
    out, used = [], 0
    for c in text:
        used += 2 if ord(c) > 0xFFFF else 1
        if used > units:
            break
        out.append(c)
    return "".join(out)


def message_text(notice: Notice) -> str:
    """The notice as one Telegram message: cut to Telegram's limit, and said to be cut."""
    text = f"{notice.title}\n\n{notice.body}"
    if telegram_length(text) <= MAX_TEXT:
        return text
    return cut_to(text, MAX_TEXT - len(SHORTENED) - 2) + ELLIPSIS + "\n" + SHORTENED


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
            payload = fetch_json(request, timeout or self.timeout, _description)
        except HttpFailure as exc:
            raise TelegramError(self._redact(f"{method}: {exc}"), _retry_after(exc.body)) from None
        if not isinstance(payload, dict) or payload.get("ok") is not True:
            said = _str(_obj(payload).get("description"))
            raise TelegramError(self._redact(f"{method}: {said or 'the answer was not ok'}"))
        return payload.get("result")

    def send(self, chat_id: int, text: str, markup: Mapping[str, Any] | None = None) -> int:
        """Send ``text`` as plain text (no markup to escape); the message's id."""
        if telegram_length(text) > MAX_TEXT:
            text = cut_to(text, MAX_TEXT - 1) + "…"
        params: dict[str, Any] = {"chat_id": chat_id, "text": text, "link_preview_options": NO_PREVIEW}
        if markup is not None:
            params["reply_markup"] = markup
        result = self.call("sendMessage", params)
        return int(result.get("message_id", 0)) if isinstance(result, dict) else 0

    def send_notice(self, chat_id: int, notice: Notice, open_url: str = "") -> int:
        text = message_text(notice)
        if notice.ask is None:
            return self.send(chat_id, text)
        links = self.api_base not in _NO_LINK_BUTTONS
        try:
            return self.send(chat_id, text, keyboard(notice.ask, text, open_url, links))
        except TelegramError as exc:
            # Telegram refuses a whole message whose button holds a link of a scheme it does not open
            # (obsidian://): sent again without that button, the link still in the text
            if open_url or not links or not _refused_link(str(exc)):
                raise
            _NO_LINK_BUTTONS.add(self.api_base)
            return self.send(chat_id, text, keyboard(notice.ask, text, link_button=False))

    def answer_press(self, press: Press, toast: str) -> None:
        """The short message the person sees where they pressed (Telegram allows 200 characters)."""
        params: dict[str, Any] = {"callback_query_id": press.callback_id, "text": cut_to(toast, 200)}
        params["show_alert"] = len(toast) > 60  # a long one is a dialog to read, not a fleeting toast
        self.call("answerCallbackQuery", params)

    def settle_message(self, press: Press, outcome: str) -> None:
        """The message, its buttons gone, saying what was decided and by whom."""
        text = f"{press.text}\n\n{outcome}"
        if telegram_length(text) > MAX_TEXT:
            text = cut_to(press.text, MAX_TEXT - telegram_length(outcome) - 3) + ELLIPSIS + "\n\n" + outcome
        params = {"chat_id": press.chat_id, "message_id": press.message_id, "text": text}
        self.call("editMessageText", {**params, "link_preview_options": NO_PREVIEW})

    def reply(self, chat_id: int, message_id: int, text: str) -> None:
        """``text`` as a reply to message ``message_id`` (sent anyway, should that message be gone)."""
        if telegram_length(text) > MAX_TEXT:
            text = cut_to(text, MAX_TEXT - 1) + ELLIPSIS
        reply_to = {"message_id": message_id, "allow_sending_without_reply": True}
        params = {"chat_id": chat_id, "text": text, "reply_parameters": reply_to}
        self.call("sendMessage", {**params, "link_preview_options": NO_PREVIEW})

    def drop_buttons(self, chat_id: int, message_id: int) -> None:
        """Take the buttons off a message (an escalation a newer message asks again)."""
        markup: dict[str, list[Any]] = {"inline_keyboard": []}
        self.call(
            "editMessageReplyMarkup", {"chat_id": chat_id, "message_id": message_id, "reply_markup": markup}
        )


def _refused_link(error: str) -> bool:
    low = error.lower()
    return "button_url_invalid" in low or ("url" in low and ("protocol" in low or "invalid" in low))


def _retry_after(body: bytes) -> float:
    try:
        wait = _obj(_obj(json.loads(body)).get("parameters")).get("retry_after")
    except ValueError:
        return 0.0
    return float(wait) if isinstance(wait, int | float) and not isinstance(wait, bool) and wait > 0 else 0.0


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
        self.users = frozenset(config.users)
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
        params: dict[str, Any] = {"timeout": int(wait), "allowed_updates": ["message", "callback_query"]}
        if self.offset is not None:
            params["offset"] = self.offset
        updates = self.bot.call("getUpdates", params, timeout=wait + self.bot.timeout)
        if not isinstance(updates, list):
            raise TelegramError("getUpdates: the answer was not a list of updates")
        replies: list[ChatAnswer] = []
        refused: list[Refused] = []
        next_offset: int | None = None
        for update in updates:
            if not isinstance(update, dict) or not isinstance(update.get("update_id"), int):
                continue
            next_offset = max(next_offset or 0, update["update_id"] + 1)
            try:
                heard = self._heard(update)
            except Exception as exc:  # an update no rule foresaw must not stop every later one
                self.log.warn(f"telegram: update {update['update_id']} skipped, unreadable ({exc!r})")
                continue
            if isinstance(heard, Refused):
                refused.append(heard)
            elif heard is not None:
                replies.append(heard)
        return Batch(replies, next_offset, refused)

    def _heard(self, update: Mapping[str, Any]) -> ChatAnswer | Refused | None:
        if isinstance(update.get("callback_query"), dict):
            return self._press(update["callback_query"])
        return self._reply(update)

    @property
    def username(self) -> str:
        """The bot's @name, asked of Telegram once and kept: a command for another bot is not an answer."""
        key = "telegram.username." + self.bot.id
        known = self.state.get(key)
        if known:
            return known
        try:
            name = _str(_obj(self.bot.call("getMe", {})).get("username"))
        except TelegramError:
            return ""
        if name:
            self.state.set(key, name)
        return name

    def poll(self, timeout: float | None = None) -> list[ChatAnswer]:
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

    def _reply(self, update: Mapping[str, Any]) -> ChatAnswer | None:
        message = update.get("message")
        if not isinstance(message, dict):
            return None  # edits, joins: not answers
        chat_id = _obj(message.get("chat")).get("id")
        who = _who(message)
        if not isinstance(chat_id, int) or chat_id not in self.chat_ids:
            # The id is logged so that a person setting up can copy it into chat_ids.
            self.log.info("telegram-ignored", chat_id=chat_id, who=who, why="chat not in chat_ids")
            return None
        user = _int(_obj(message.get("from")).get("id"))
        if self.users and user not in self.users:
            self.log.info("telegram-ignored", chat_id=chat_id, who=f"{who} (user {user})", why="not in users")
            return None
        replied_to = _str(_obj(message.get("reply_to_message")).get("text"))
        text = _str(message.get("text"))
        addressed = "@" in text.split(maxsplit=1)[0] if text.strip() else False
        parsed = parse_reply(text, replied_to, self.username if addressed else "")
        if parsed is None:
            self.log.info("telegram-ignored", chat_id=chat_id, who=who, why="not approve/deny REQ-…")
            return None
        return ChatAnswer(
            request_id=parsed.request_id,
            verdict=parsed.verdict,
            comment=parsed.comment,
            who=who,
            via="Telegram",
            date=_int(message.get("date")),
            scope=parsed.scope,
            chat_id=chat_id,
            message_id=_int(message.get("message_id")),
        )

    def may_press(self, chat: Mapping[str, Any], user: int) -> bool:
        """Anyone in a group can press a button: a press counts from a listed chat, by a listed user, or
        (no ``users`` listed) in a private chat by its own person."""
        chat_id = chat.get("id")
        if not isinstance(chat_id, int) or chat_id not in self.chat_ids:
            return False
        if self.users:
            return user in self.users
        return chat.get("type") == "private" and user == chat_id

    def _press(self, query: Mapping[str, Any]) -> ChatAnswer | Refused | None:
        message = _obj(query.get("message"))
        chat = _obj(message.get("chat"))
        data = _str(query.get("data")).split(":")
        text = _str(message.get("text"))
        user = _obj(query.get("from"))
        press = Press(
            binding=data[2] if len(data) == 4 else "",
            sent=_int(message.get("date")),
            callback_id=_str(query.get("id")),
            chat_id=_int(chat.get("id")),
            message_id=_int(message.get("message_id")),
            text=text,
        )
        if not press.callback_id:
            return None
        who = _who({"from": user, "chat": chat})
        if not self.may_press(chat, _int(user.get("id"))):
            self.log.info(
                "telegram-ignored", chat_id=chat.get("id"), who=f"{who} (user {user.get('id')})",
                why="a press by someone not in users (or chat not in chat_ids)",
            )  # fmt: skip
            return Refused(press, "You are not one of the people whose answers count here.")
        if len(data) != 4 or data[0] != CALLBACK or data[1] not in _VERBS:
            return Refused(press, "This button is not one of vaultops's.")
        if not text or not press.sent:
            return Refused(press, "This message is too old to answer from here: answer in the note.")
        if shown_digest(text) != data[3]:
            # settled since (``settle_message`` added a paragraph): judged as sent, so it says "decided"
            text = text.rsplit("\n\n", 1)[0]
            if shown_digest(text) != data[3]:
                return Refused(press, "This message is not the one its buttons were made for: use the note.")
            press = replace(press, text=text)
        found = _ID_LINE.search(text)
        if found is None:
            return Refused(press, "This message names no request: answer in the note.")
        verdict = _VERBS[data[1]]
        offered = _callbacks(message.get("reply_markup"))
        whole = SHORTENED not in text and (offered is None or ":".join(data) in offered)
        if verdict == "approve" and not whole:
            return Refused(press, "This message did not show everything, so it cannot approve: see the note.")
        return ChatAnswer(found["id"], verdict, "", who, "Telegram button", 0, press=press)


def _callbacks(markup: object) -> set[str] | None:
    """The callback data of a message's buttons, as Telegram sent the message; None when not sent."""
    rows = _obj(markup).get("inline_keyboard")
    if not isinstance(rows, list):
        return None
    return {
        _str(button.get("callback_data"))
        for row in rows
        if isinstance(row, list)
        for button in row
        if isinstance(button, dict)
    }
