"""A strict Telegram Bot API on 127.0.0.1, written from the Bot API's documentation
(core.telegram.org/bots/api) rather than from vaultops's own fake (``fake_servers.FakeBotAPI``), and
stricter wherever Telegram is:

- every method answers ``{"ok": true, "result": …}`` or ``{"ok": false, "error_code": N, "description": …}``
  (with ``parameters.retry_after`` on a 429); a wrong token is 401, an unknown method 404;
- parameters arrive as JSON, as a form or in the query string; ``reply_markup`` may be an object or a JSON
  string; ``chat_id`` an integer or a string;
- ``sendMessage``: text 1–4096 characters after surrounding whitespace is trimmed, counted in UTF-16 code
  units as Telegram counts text (an emoji is two); the chat must exist; each button has a non-empty text and
  exactly one action; ``callback_data`` 1–64 bytes; a button ``url`` only http, https or tg;
- ``getUpdates``: ``offset`` confirms everything below it (a negative one keeps the last ``-offset``),
  ``limit`` 1–100, ``timeout`` a long poll, ``allowed_updates`` (a list or its JSON) remembered from call
  to call; a second long poll ends the first with 409 Conflict;
- ``answerCallbackQuery``: once per query, only within ``answer_limit`` seconds of the press, its text at
  most 200 characters;
- ``editMessageText``: only the bot's own messages, "message is not modified" for the same content, and an
  edit without ``reply_markup`` removes the keyboard; ``editMessageReplyMarkup`` likewise, an empty
  keyboard taking it off;
- ``sendMessage`` with ``reply_parameters``: the message replied to must be in that chat, unless
  ``allow_sending_without_reply``.

Updates look like Telegram's: ``from`` with ``is_bot``, ``language_code`` and ``username``; private chats
with the person's id, groups with negative ids and titles; a callback query echoes the message with its
``reply_markup``, or an InaccessibleMessage (``date`` 0, no text) for a message the client cannot see.
Every long poll wakes on a condition as soon as an update arrives: no test waits on a clock.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.support.fake_servers import LongPolling

BOT_USER = {"id": 0, "is_bot": True, "first_name": "Vault bot", "username": "strict_vault_bot"}
MAX_TEXT = 4096
MAX_TOAST = 200
LINK_SCHEMES = ("http", "https", "tg")
QUERY_EXPIRED = "Bad Request: query is too old and response timeout expired or query ID is invalid"
CONFLICT = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are exactly the "
    "same as a current content and reply markup of the message"
)


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class ApiError(Exception):
    def __init__(self, code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.retry_after = retry_after

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": False, "error_code": self.code, "description": self.description}
        if self.retry_after is not None:
            out["parameters"] = {"retry_after": self.retry_after}
        return out


def _bad(description: str) -> ApiError:
    return ApiError(400, f"Bad Request: {description}")


def _decoded(raw: Any, what: str) -> Any:
    """An object parameter as it arrived: an object, or its JSON in a string (a form sends it so)."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        raise _bad(f"can't parse {what} JSON object") from None


class StrictBotAPI(LongPolling):
    """One bot (``token``), its chats, and the people in them.  ``private(user_id)`` and ``group(id, title)``
    make chats the bot can write to; ``say`` and ``press`` are what people do there."""

    def __init__(self, token: str, *, answer_limit: float = 15.0) -> None:
        self.token = token
        self.bot_id = int(token.split(":", 1)[0])
        self.answer_limit = answer_limit
        self.now = time.time  # the server's clock
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)
        self.chats: dict[int, dict[str, Any]] = {}
        self.people: dict[int, dict[str, Any]] = {}
        self.messages: dict[tuple[int, int], dict[str, Any]] = {}
        self.sent: list[dict[str, Any]] = []  # each sendMessage accepted, as a Message
        self.refused: list[tuple[str, dict[str, Any], str]] = []  # (method, params, description)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.edits: list[dict[str, Any]] = []
        self.toasts: dict[str, dict[str, Any]] = {}
        self.queries: dict[str, dict[str, Any]] = {}  # id -> {"at": time, "answered": bool}
        self.updates: list[dict[str, Any]] = []
        self.allowed: list[str] | None = None
        self.next_update = 700_000_000
        self.next_message: dict[int, int] = {}
        self.next_query = 4_411_000_000_000_000_000
        self.poll_generation = 0
        self.closing = False
        self.fail: dict[str, list[ApiError]] = {}  # method -> errors to answer in turn
        self.echo_path_in_errors = False  # a careless proxy quoting the request in its error
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                status, payload = owner.handle(self.path, self.headers.get("Content-Type", ""), body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

            do_POST = _serve
            do_GET = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    # --- lifetime -----------------------------------------------------------------------------------

    def __enter__(self) -> StrictBotAPI:
        super().__enter__()
        return self

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # --- the world: chats and people ------------------------------------------------------------------

    def person(self, user_id: int, first_name: str, **extra: Any) -> dict[str, Any]:
        user = {"id": user_id, "is_bot": False, "first_name": first_name, "language_code": "en"}
        user["username"] = extra.pop("username", first_name.lower().replace(" ", "_") or f"u{user_id}")
        user.update(extra)
        self.people[user_id] = user
        return user

    def private(self, user_id: int, first_name: str = "Ann", **extra: Any) -> int:
        user = self.person(user_id, first_name, **extra)
        chat = {"id": user_id, "type": "private", "first_name": first_name, "username": user["username"]}
        self.chats[user_id] = chat
        return user_id

    def group(self, chat_id: int, title: str = "Ops", kind: str = "supergroup") -> int:
        assert chat_id < 0, "group and supergroup ids are negative"
        self.chats[chat_id] = {"id": chat_id, "title": title, "type": kind}
        return chat_id

    # --- what people do -------------------------------------------------------------------------------

    def _add(self, update: dict[str, Any]) -> int:
        self.next_update += 1
        update["update_id"] = self.next_update
        self.updates.append(update)
        self.arrived.notify_all()
        return self.next_update

    def _new_id(self, chat_id: int) -> int:
        self.next_message[chat_id] = self.next_message.get(chat_id, 0) + 1
        return self.next_message[chat_id]

    def say(
        self,
        chat_id: int,
        user_id: int,
        text: str,
        *,
        reply_to: dict[str, Any] | None = None,
        date: int | None = None,
    ) -> int:
        """``user_id`` writes ``text`` in ``chat_id`` (a reply to ``reply_to``, a message as sent); the
        update's id."""
        with self.lock:
            message: dict[str, Any] = {
                "message_id": self._new_id(chat_id),
                "from": dict(self.people[user_id]),
                "chat": dict(self.chats[chat_id]),
                "date": int(self.now()) if date is None else date,
                "text": text,
            }
            if reply_to is not None:
                message["reply_to_message"] = json.loads(
                    json.dumps(self.messages[(reply_to["chat"]["id"], reply_to["message_id"])])
                )
            self.messages[(chat_id, message["message_id"])] = message  # in the chat: a reply may name it
            return self._add({"message": message})

    def press(
        self,
        message: dict[str, Any],
        button: str = "Approve once",
        *,
        user_id: int | None = None,
        data: str | None = None,
        inaccessible: bool = False,
        age: float = 0.0,
        shown: dict[str, Any] | None = None,
    ) -> str:
        """``user_id`` (default: the chat's own person) presses ``button`` under ``message``; ``data``: what a
        modified client sends instead; ``inaccessible``: the client no longer has the message;
        ``age``: the press happened that many seconds ago; ``shown``: the message as the query carries it
        (default: as the server holds it now).  The callback query's id."""
        with self.lock:
            chat_id = message["chat"]["id"]
            held = self.messages[(chat_id, message["message_id"])]
            if data is None:
                buttons = [b for row in held.get("reply_markup", {}).get("inline_keyboard", []) for b in row]
                [found] = [b for b in buttons if b["text"] == button]
                data = found["callback_data"]
            who = chat_id if user_id is None else user_id
            self.next_query += 1
            query_id = str(self.next_query)
            if inaccessible:
                carried: dict[str, Any] = {
                    "chat": dict(held["chat"]),
                    "message_id": held["message_id"],
                    "date": 0,
                }
            else:
                carried = json.loads(json.dumps(held if shown is None else shown))
            query = {
                "id": query_id,
                "from": dict(self.people[who]),
                "message": carried,
                "chat_instance": f"-{abs(chat_id) * 7919 % 10**18}",
                "data": data,
            }
            self.queries[query_id] = {"at": self.now() - age, "answered": False}
            self._add({"callback_query": query})
            return query_id

    def raw_update(self, update: dict[str, Any]) -> int:
        """An update exactly as given (a hostile or broken server)."""
        with self.lock:
            return self._add(update)

    # --- looking at what the bot did -------------------------------------------------------------------

    def held(self, message: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            return json.loads(json.dumps(self.messages[(message["chat"]["id"], message["message_id"])]))

    def buttons(self, message: dict[str, Any]) -> list[str]:
        rows = self.held(message).get("reply_markup", {}).get("inline_keyboard", [])
        return [b["text"] for row in rows for b in row]

    def data(self, message: dict[str, Any], button: str) -> str:
        rows = self.held(message).get("reply_markup", {}).get("inline_keyboard", [])
        [found] = [b["callback_data"] for row in rows for b in row if b["text"] == button]
        return str(found)

    def toast(self, query_id: str) -> str:
        with self.lock:
            return str(self.toasts[query_id].get("text", ""))

    def everything_sent(self) -> str:
        """All text the bot made Telegram show: messages, edits, toasts, button labels and links."""
        with self.lock:
            parts = [json.dumps(params, ensure_ascii=False) for _, params in self.calls]
        return "\n".join(parts)

    # --- the API ---------------------------------------------------------------------------------------

    def handle(self, path: str, content_type: str, body: bytes) -> tuple[int, dict[str, Any]]:
        try:
            method, params = self._parse(path, content_type, body)
            with self.lock:
                self.calls.append((method, params))
                queued = self.fail.get(method)
                if queued:
                    raise queued.pop(0)
            result = self._dispatch(method, params)
            return 200, {"ok": True, "result": result}
        except ApiError as exc:
            payload = exc.payload()
            if self.echo_path_in_errors:
                payload["description"] += f" (while serving POST {path} for {urlsplit(path).path!r})"
            with self.lock:
                self.refused.append((path.rsplit("/", 1)[-1], {}, payload["description"]))
            return exc.code, payload

    def _parse(self, path: str, content_type: str, body: bytes) -> tuple[str, dict[str, Any]]:
        parts = urlsplit(path)
        m = re.fullmatch(r"/bot([^/]+)/([A-Za-z]+)", parts.path)
        if m is None:
            raise ApiError(404, "Not Found")
        if m[1] != self.token:
            raise ApiError(401, "Unauthorized")
        params: dict[str, Any] = dict(parse_qsl(parts.query))
        if body:
            if content_type.startswith("application/json"):
                try:
                    loaded = json.loads(body)
                except ValueError:
                    raise _bad("can't parse JSON") from None
                if not isinstance(loaded, dict):
                    raise _bad("parameters must be a JSON object")
                params.update(loaded)
            else:
                params.update(parse_qsl(body.decode("utf-8")))
        return m[2].lower(), params

    def _dispatch(self, method: str, params: dict[str, Any]) -> Any:
        if method == "getme":
            return {**BOT_USER, "id": self.bot_id, "can_join_groups": True}
        if method == "sendmessage":
            return self._send(params)
        if method == "getupdates":
            return self._get_updates(params)
        if method == "answercallbackquery":
            return self._answer(params)
        if method == "editmessagetext":
            return self._edit(params)
        if method == "editmessagereplymarkup":
            return self._edit_markup(params)
        raise ApiError(404, "Not Found")

    def _chat(self, value: Any) -> dict[str, Any]:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise _bad("chat_id is not a valid integer or string")
        if isinstance(value, str):
            if value.startswith("@"):
                found = [c for c in self.chats.values() if c.get("username") == value[1:]]
                if not found:
                    raise _bad("chat not found")
                return found[0]
            if not re.fullmatch(r"-?[0-9]+", value):
                raise _bad("chat not found")
            value = int(value)
        if value not in self.chats:
            raise _bad("chat not found")
        return self.chats[value]

    def _text(self, params: dict[str, Any], *, limit: int = MAX_TEXT) -> str:
        text = params.get("text")
        if not isinstance(text, str):
            raise _bad("message text is empty")
        text = text.strip()
        if not text:
            raise _bad("message text is empty")
        if "\0" in text:
            raise _bad("text must be encoded in UTF-8")  # what Telegram says of a NUL, roughly
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise _bad("strings must be encoded in UTF-8") from None
        if utf16_len(text) > limit:
            raise _bad("message is too long")
        if params.get("parse_mode") not in (None, "", "HTML", "Markdown", "MarkdownV2"):
            raise _bad("unsupported parse_mode")
        return text

    def _markup(self, raw: Any) -> dict[str, Any] | None:
        if raw is None:
            return None
        raw = _decoded(raw, "reply keyboard markup")
        if not isinstance(raw, dict) or not isinstance(raw.get("inline_keyboard"), list):
            raise _bad("can't parse reply keyboard markup JSON object")
        rows = raw["inline_keyboard"]
        for row in rows:
            if not isinstance(row, list):
                raise _bad("can't parse inline keyboard button: InlineKeyboardButton must be an Object")
            for button in row:
                if not isinstance(button, dict):
                    raise _bad("can't parse inline keyboard button: InlineKeyboardButton must be an Object")
                label = button.get("text")
                if not isinstance(label, str) or not label.strip():
                    raise _bad(
                        "can't parse inline keyboard button: "
                        "Text buttons are unallowed in the inline keyboard"
                    )
                actions = [k for k in button if k != "text"]
                if len(actions) != 1:
                    raise _bad("can't parse inline keyboard button: exactly one optional field must be used")
                if "callback_data" in button:
                    data = button["callback_data"]
                    if not isinstance(data, str) or not 1 <= len(data.encode("utf-8")) <= 64:
                        raise _bad("BUTTON_DATA_INVALID")
                elif "url" in button:
                    url = button["url"]
                    scheme = url.split(":", 1)[0].lower() if isinstance(url, str) and ":" in url else ""
                    if scheme not in LINK_SCHEMES:
                        raise _bad(f"inline keyboard button URL '{url}' is invalid: Unsupported URL protocol")
                else:
                    raise _bad("can't parse inline keyboard button: unsupported button type")
        return {"inline_keyboard": rows}

    def _entities(self, text: str) -> list[dict[str, Any]]:
        out = []
        for m in re.finditer(r"https?://\S+", text):
            offset = utf16_len(text[: m.start()])
            out.append({"offset": offset, "length": utf16_len(m.group()), "type": "url"})
        return out

    def _send(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            chat = self._chat(params.get("chat_id"))
            text = self._text(params)
            markup = self._markup(params.get("reply_markup"))
            for flag in ("disable_web_page_preview", "disable_notification", "protect_content"):
                if flag in params and not isinstance(params[flag], bool | str):
                    raise _bad(f"{flag} must be a Boolean")
            message: dict[str, Any] = {
                "message_id": self._new_id(chat["id"]),
                "from": {**BOT_USER, "id": self.bot_id},
                "chat": dict(chat),
                "date": int(self.now()),
                "text": text,
            }
            entities = self._entities(text)
            if entities:
                message["entities"] = entities
            if markup is not None:
                message["reply_markup"] = markup
            replied = self._replied(chat, params.get("reply_parameters"))
            if replied is not None:
                message["reply_to_message"] = replied
            self.messages[(chat["id"], message["message_id"])] = message
            self.sent.append(json.loads(json.dumps(message)))
            return message

    def _replied(self, chat: dict[str, Any], raw: Any) -> dict[str, Any] | None:
        """The message a ``reply_parameters`` names (Bot API 7.0), in this chat; none when it is gone and
        ``allow_sending_without_reply`` says to send anyway."""
        if raw is None:
            return None
        raw = _decoded(raw, "reply parameters")
        if not isinstance(raw, dict) or isinstance(raw.get("message_id"), bool):
            raise _bad("can't parse reply parameters JSON object")
        message_id = raw.get("message_id")
        found = self.messages.get((chat["id"], message_id)) if isinstance(message_id, int) else None
        if found is None and not raw.get("allow_sending_without_reply"):
            raise _bad("message to be replied not found")
        return {k: v for k, v in found.items() if k != "reply_to_message"} if found is not None else None

    def _edit_markup(self, params: dict[str, Any]) -> dict[str, Any]:
        """``editMessageReplyMarkup``: the bot's own message, its keyboard replaced (none, or an empty one,
        takes it off), "message is not modified" when nothing changes."""
        with self.lock:
            chat = self._chat(params.get("chat_id"))
            key = (chat["id"], params.get("message_id"))
            if key not in self.messages:
                raise _bad("message to edit not found")
            message = self.messages[key]
            if message.get("from", {}).get("id") != self.bot_id:
                raise _bad("message can't be edited")
            markup = self._markup(params.get("reply_markup"))
            if markup is not None and not markup["inline_keyboard"]:
                markup = None
            if markup == message.get("reply_markup"):
                raise _bad(NOT_MODIFIED[len("Bad Request: ") :])
            edited = {k: v for k, v in message.items() if k != "reply_markup"}
            edited["edit_date"] = int(self.now())
            if markup is not None:
                edited["reply_markup"] = markup
            self.messages[key] = edited
            self.edits.append(dict(params))
            return dict(json.loads(json.dumps(edited)))

    def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        def number(name: str, default: int) -> int:
            value = params.get(name, default)
            if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise _bad(f'parameter "{name}" is not a number')
            return int(value)

        offset = number("offset", 0)
        limit = number("limit", 100)
        wait = number("timeout", 0)
        if not 1 <= limit <= 100:
            limit = 100 if limit > 100 else 1
        allowed = params.get("allowed_updates")
        if isinstance(allowed, str):
            try:
                allowed = json.loads(allowed)
            except ValueError:
                raise _bad("can't parse allowed updates JSON") from None
        with self.arrived:
            if allowed is not None:
                if not isinstance(allowed, list) or not all(isinstance(a, str) for a in allowed):
                    raise _bad("allowed_updates must be an Array of String")
                self.allowed = allowed or None
            self.poll_generation += 1
            mine = self.poll_generation
            self.arrived.notify_all()  # an older long poll sees it is not the newest any more
            if offset > 0:
                self.updates = [u for u in self.updates if u["update_id"] >= offset]
            elif offset < 0:
                self.updates = self.updates[offset:]

            def ready() -> list[dict[str, Any]]:
                kinds = self.allowed or ["message", "callback_query", "edited_message"]
                return [u for u in self.updates if any(k in u for k in kinds)]

            deadline = time.monotonic() + max(wait, 0)
            while not ready() and not self.closing and time.monotonic() < deadline:
                self.arrived.wait(deadline - time.monotonic())
                if self.poll_generation != mine:
                    raise ApiError(409, CONFLICT)
            return json.loads(json.dumps(ready()[:limit]))

    def _answer(self, params: dict[str, Any]) -> bool:
        with self.lock:
            query_id = params.get("callback_query_id")
            query = self.queries.get(query_id) if isinstance(query_id, str) else None
            if query is None or query["answered"] or self.now() - query["at"] > self.answer_limit:
                raise _bad(QUERY_EXPIRED[len("Bad Request: ") :])
            text = params.get("text", "")
            if not isinstance(text, str):
                raise _bad("text must be a String")
            if utf16_len(text) > MAX_TOAST:
                raise _bad("MESSAGE_TOO_LONG")
            if "show_alert" in params and not isinstance(params["show_alert"], bool):
                raise _bad("show_alert must be a Boolean")
            query["answered"] = True
            self.toasts[query_id] = dict(params)
            return True

    def _edit(self, params: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            if "inline_message_id" in params:
                raise _bad("message to edit not found")
            chat = self._chat(params.get("chat_id"))
            message_id = params.get("message_id")
            if isinstance(message_id, str) and message_id.isdigit():
                message_id = int(message_id)
            key = (chat["id"], message_id)
            if key not in self.messages:
                raise _bad("message to edit not found")
            message = self.messages[key]
            if message.get("from", {}).get("id") != self.bot_id:
                raise _bad("message can't be edited")
            text = self._text(params)
            markup = self._markup(params.get("reply_markup"))
            if text == message["text"] and markup == message.get("reply_markup"):
                raise _bad(NOT_MODIFIED[len("Bad Request: ") :])
            edited = {k: v for k, v in message.items() if k not in ("reply_markup", "entities")}
            edited["text"] = text
            edited["edit_date"] = int(self.now())
            entities = self._entities(text)
            if entities:
                edited["entities"] = entities
            if markup is not None:
                edited["reply_markup"] = markup
            self.messages[key] = edited
            self.edits.append(dict(params))
            return json.loads(json.dumps(edited))
