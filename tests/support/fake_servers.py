"""Real HTTP servers on 127.0.0.1 for the notifier tests: a JSON sink (what apprise's ``json://`` posts to)
and a Telegram-compatible Bot API (sendMessage with inline keyboards, getUpdates with offset semantics and
long polling, callback queries, answerCallbackQuery, editMessageText, getMe).

Each runs a stdlib ThreadingHTTPServer in a daemon thread, as a context manager.  getUpdates waits, as
Telegram's does, only until an update arrives (or its ``timeout`` passes): a test that presses a button
is answered at once, so no test depends on timing.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class Serving:
    """A server in a daemon thread, as a context manager (``httpd`` and ``thread`` made by the subclass)."""

    httpd: ThreadingHTTPServer
    thread: threading.Thread

    def __enter__(self) -> Serving:
        self.thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


class LongPolling(Serving):
    """A server whose long polls wait on ``arrived`` (made by the subclass); closing wakes them at once."""

    arrived: threading.Condition
    closing = False

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with self.arrived:
            self.closing = True
            self.arrived.notify_all()
        super().__exit__(kind, exc, tb)


class _Server(Serving):
    def __init__(self) -> None:
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                code, payload = owner.handle(self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a long poll left behind
                    self.wfile.write(data)

            do_GET = do_POST

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def handle(self, path: str, body: bytes) -> tuple[int, Any]:
        raise NotImplementedError


class JsonSink(_Server):
    """Keeps every JSON body posted to it; answers with ``codes`` in turn, then 200."""

    def __init__(self, codes: list[int] | None = None) -> None:
        super().__init__()
        self.codes = list(codes or [])
        self.received: list[tuple[str, dict[str, Any]]] = []  # (path, body)

    def __enter__(self) -> JsonSink:
        super().__enter__()
        return self

    def url(self, path: str = "/hook") -> str:
        return f"json://127.0.0.1:{self.port}{path}"

    def handle(self, path: str, body: bytes) -> tuple[int, Any]:
        with self.lock:
            self.received.append((path, json.loads(body or b"{}")))
            code = self.codes.pop(0) if self.codes else 200
        return code, {"ok": code == 200}

    def messages(self) -> list[str]:
        with self.lock:
            return [body.get("message", "") for _, body in self.received]


UNSUPPORTED = "Unsupported URL protocol"


class FakeBotAPI(LongPolling, _Server):
    """The parts of the Telegram Bot API vaultops uses, for one bot token.

    getUpdates follows Telegram: updates with an id below ``offset`` are confirmed and forgotten for good;
    the rest are returned, oldest first, and with none a call waits up to its ``timeout``.  sendMessage
    refuses what Telegram refuses (text over 4096 characters, callback data over 64 bytes, a button link
    that is not http(s) or tg://).  ``fail_with`` makes the next calls fail with that status and a
    description that echoes the request path (as a careless proxy might), to test redaction.
    """

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token
        self.updates: list[dict[str, Any]] = []
        self.next_update = 1000
        self.next_message = 1
        self.sent: list[dict[str, Any]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.fail_with: int | None = None
        self.arrived = threading.Condition(self.lock)
        self.messages: dict[tuple[int, int], dict[str, Any]] = {}  # (chat, message id) -> as shown now
        self.toasts: dict[str, dict[str, Any]] = {}  # callback query id -> answerCallbackQuery's params
        self.edits: list[dict[str, Any]] = []
        self.clock = time.time  # the server's clock: a message's date
        self.link_schemes = ("http", "https", "tg")  # what a button's url may be, as Telegram allows

    def __enter__(self) -> FakeBotAPI:
        super().__enter__()
        return self

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _add(self, update: dict[str, Any]) -> int:
        self.next_update += 1
        update["update_id"] = self.next_update
        self.updates.append(update)
        self.arrived.notify_all()
        return self.next_update

    def say(
        self,
        chat_id: int,
        text: str,
        *,
        first_name: str = "Ann",
        title: str | None = None,
        reply_to: str | None = None,
        date: int = 1_770_000_000,
        user_id: int | None = None,
    ) -> int:
        """The person (or a stranger) writes ``text`` in a chat; the update's id."""
        chat: dict[str, Any] = {"id": chat_id, "type": "group" if title else "private"}
        if title:
            chat["title"] = title
        message: dict[str, Any] = {
            "message_id": self.next_message,
            "date": date,
            "chat": chat,
            "from": {"id": abs(chat_id) if user_id is None else user_id, "is_bot": False},
            "text": text,
        }
        message["from"]["first_name"] = first_name
        if reply_to is not None:
            message["reply_to_message"] = {"message_id": 1, "date": date - 5, "chat": chat, "text": reply_to}
        with self.lock:
            self.next_message += 1
            return self._add({"message": message})

    def press(
        self,
        message: dict[str, Any],
        button: str = "Approve once",
        *,
        user_id: int | None = None,
        first_name: str = "Ann",
        data: str | None = None,
    ) -> str:
        """Someone presses ``button`` under ``message`` (as ``sent`` or ``shown`` has it); ``data``
        instead: a modified client sending made-up callback data.  The callback query's id."""
        with self.lock:
            chat_id = int(message["chat_id"]) if "chat_id" in message else int(message["chat"]["id"])
            shown = self.messages[(chat_id, int(message["message_id"]))]
            if data is None:
                buttons = [b for row in shown.get("reply_markup", {}).get("inline_keyboard", []) for b in row]
                [found] = [b for b in buttons if b["text"] == button]
                data = str(found["callback_data"])
            query_id = f"q{self.next_update + 1}"
            user = {"id": chat_id if user_id is None else user_id, "is_bot": False, "first_name": first_name}
            query = {
                "id": query_id,
                "from": user,
                "message": json.loads(json.dumps(shown)),
                "chat_instance": "ci1",
                "data": data,
            }
            self._add({"callback_query": query})
            return query_id

    def shown(self, message: dict[str, Any]) -> dict[str, Any]:
        """A sent message as the chat shows it now (after any edit)."""
        with self.lock:
            return dict(self.messages[(int(message["chat_id"]), int(message["message_id"]))])

    def buttons(self, message: dict[str, Any]) -> list[str]:
        markup = self.shown(message).get("reply_markup", {})
        return [b["text"] for row in markup.get("inline_keyboard", []) for b in row]

    def _refusal(self, params: dict[str, Any]) -> str:
        text = params.get("text")
        if not isinstance(text, str) or not text.strip():
            return "Bad Request: message text is empty"
        if len(text) > 4096:
            return "Bad Request: message is too long"
        for row in (params.get("reply_markup") or {}).get("inline_keyboard", []):
            for button in row:
                data = button.get("callback_data")
                if data is not None and not 1 <= len(str(data).encode()) <= 64:
                    return "Bad Request: BUTTON_DATA_INVALID"
                url = button.get("url")
                if url is not None and not re.match(rf"(?:{'|'.join(self.link_schemes)})://", str(url)):
                    return f"Bad Request: inline keyboard button URL '{url}' is invalid: " + UNSUPPORTED
        return ""

    def handle(self, path: str, body: bytes) -> tuple[int, Any]:
        prefix = f"/bot{self.token}/"
        params = json.loads(body or b"{}")
        with self.lock:
            if self.fail_with is not None:
                return self.fail_with, {"ok": False, "description": f"upstream failed for {path}"}
            if not path.startswith(prefix):
                return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
            method = path[len(prefix) :]
            self.calls.append((method, params))
            if method == "getMe":
                return 200, {"ok": True, "result": {"id": 1, "is_bot": True, "username": "vaultops_test_bot"}}
            if method == "sendMessage":
                refused = self._refusal(params)
                if refused:
                    return 400, {"ok": False, "error_code": 400, "description": refused}
                self.next_message += 1
                params["message_id"] = self.next_message
                self.sent.append(params)
                chat = {"id": params["chat_id"], "type": "private" if params["chat_id"] > 0 else "group"}
                message = {"message_id": self.next_message, "date": int(self.clock()), "chat": chat}
                message["text"] = params["text"]
                if params.get("reply_markup"):
                    message["reply_markup"] = params["reply_markup"]
                self.messages[(params["chat_id"], self.next_message)] = message
                return 200, {"ok": True, "result": message}
            if method == "answerCallbackQuery":
                query = str(params.get("callback_query_id"))
                if query in self.toasts:
                    return 400, {"ok": False, "description": "Bad Request: query is too old or answered"}
                self.toasts[query] = params
                return 200, {"ok": True, "result": True}
            if method == "editMessageText":
                key = (params.get("chat_id"), params.get("message_id"))
                if key not in self.messages:
                    return 400, {"ok": False, "description": "Bad Request: message to edit not found"}
                message = dict(self.messages[key], text=params["text"])
                message.pop("reply_markup", None)
                if params.get("reply_markup"):
                    message["reply_markup"] = params["reply_markup"]
                self.messages[key] = message
                self.edits.append(params)
                return 200, {"ok": True, "result": message}
            if method == "editMessageReplyMarkup":  # an empty keyboard takes the buttons off
                key = (params.get("chat_id"), params.get("message_id"))
                if key not in self.messages:
                    return 400, {"ok": False, "description": "Bad Request: message to edit not found"}
                message = dict(self.messages[key])
                message.pop("reply_markup", None)
                if (params.get("reply_markup") or {}).get("inline_keyboard"):
                    message["reply_markup"] = params["reply_markup"]
                self.messages[key] = message
                self.edits.append(params)
                return 200, {"ok": True, "result": message}
            if method == "getUpdates":
                offset = params.get("offset")
                if offset is not None:
                    self.updates = [u for u in self.updates if u["update_id"] >= offset]
                deadline = time.monotonic() + float(params.get("timeout") or 0)
                while not self.updates and not self.closing and time.monotonic() < deadline:
                    self.arrived.wait(deadline - time.monotonic())
                return 200, {"ok": True, "result": list(self.updates)}
        return 404, {"ok": False, "description": "Not Found"}

    def offsets_asked(self) -> list[int | None]:
        with self.lock:
            return [params.get("offset") for method, params in self.calls if method == "getUpdates"]


class ListLog:
    """A notifier's log (``vaultops.notify.logs.Log``) that keeps what it is told."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def info(self, event: str, **fields: Any) -> None:
        self.lines.append((event, fields))

    def warn(self, message: str) -> None:
        self.lines.append(("warning", {"message": message}))

    def text(self) -> str:
        return "\n".join(f"{event} {fields}" for event, fields in self.lines)

    def events(self, name: str) -> list[dict[str, Any]]:
        return [fields for event, fields in self.lines if event == name]
