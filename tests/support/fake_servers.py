"""Real HTTP servers on 127.0.0.1 for the notifier tests: a JSON sink (what apprise's ``json://`` posts to)
and a Telegram-compatible Bot API (sendMessage, getUpdates with offset semantics, getMe).

Each runs a stdlib ThreadingHTTPServer in a daemon thread, as a context manager; every request is answered
at once (getUpdates never waits), so no test depends on timing.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class _Server:
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
                self.wfile.write(data)

            do_GET = do_POST

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def handle(self, path: str, body: bytes) -> tuple[int, Any]:
        raise NotImplementedError

    def __enter__(self) -> _Server:
        self.thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


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


class FakeBotAPI(_Server):
    """The parts of the Telegram Bot API vaultops uses, for one bot token.

    getUpdates follows Telegram: updates with an id below ``offset`` are confirmed and forgotten for good;
    the rest are returned, oldest first.  ``fail_with`` makes the next calls fail with that status and a
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

    def __enter__(self) -> FakeBotAPI:
        super().__enter__()
        return self

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def say(
        self,
        chat_id: int,
        text: str,
        *,
        first_name: str = "Ann",
        title: str | None = None,
        reply_to: str | None = None,
        date: int = 1_770_000_000,
    ) -> int:
        """The person (or a stranger) writes ``text`` in a chat; the update's id."""
        chat: dict[str, Any] = {"id": chat_id, "type": "group" if title else "private"}
        if title:
            chat["title"] = title
        message: dict[str, Any] = {
            "message_id": self.next_message,
            "date": date,
            "chat": chat,
            "from": {"id": abs(chat_id), "is_bot": False, "first_name": first_name},
            "text": text,
        }
        if reply_to is not None:
            message["reply_to_message"] = {"message_id": 1, "date": date - 5, "chat": chat, "text": reply_to}
        with self.lock:
            self.next_message += 1
            self.next_update += 1
            self.updates.append({"update_id": self.next_update, "message": message})
            return self.next_update

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
                self.sent.append(params)
                self.next_message += 1
                return 200, {"ok": True, "result": {"message_id": self.next_message, "text": params["text"]}}
            if method == "getUpdates":
                offset = params.get("offset")
                if offset is not None:
                    self.updates = [u for u in self.updates if u["update_id"] >= offset]
                return 200, {"ok": True, "result": list(self.updates)}
        return 404, {"ok": False, "description": "Not Found"}

    def offsets_asked(self) -> list[int | None]:
        with self.lock:
            return [params.get("offset") for method, params in self.calls if method == "getUpdates"]
