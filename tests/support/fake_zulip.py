"""A loopback Zulip server for the notifier tests: the parts of Zulip's REST API (https://zulip.com/api/)
vaultops uses, for one bot, on a real ThreadingHTTPServer on 127.0.0.1 in a daemon thread.

- ``POST /api/v1/messages``: form-encoded ``type`` (``stream`` or ``channel``), ``to``, ``topic``,
  ``content``; refuses a topic over 60 or content over 10000 characters (a real server cuts them, which
  would hide a client that does not), a topic that is not printable, content with a NUL byte, and a
  stream that does not exist.  Answers ``{"result": "success",
  "msg": "", "id": N}``; the message is then in the stream, sent by the bot, as on a real server.
- ``GET /api/v1/messages``: ``anchor`` (an id, ``newest`` or ``oldest``), ``num_before``, ``num_after``,
  ``include_anchor`` (default true), ``narrow`` (JSON; ``stream``/``channel`` operators), and
  ``apply_markdown`` (default true: content rendered as HTML, as Zulip does, so a client that forgets
  ``apply_markdown=false`` reads ``<p>approve …</p>``).  Messages oldest first, with ``id``,
  ``sender_email``, ``sender_full_name``, ``content``, ``subject`` (the topic), ``timestamp``, ``type``,
  ``display_recipient``.
- ``GET /api/v1/users/me``: the bot.

Every call needs HTTP basic auth as ``email:api_key``; otherwise 401 with Zulip's error shape
(``{"result": "error", "msg": …, "code": …}``).  Every request is answered at once: no test waits.
"""

from __future__ import annotations

import base64
import html
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.support.fake_servers import Serving

MAX_TOPIC = 60
MAX_CONTENT = 10000
MAX_FETCH = 5000
STREAM_ID = 7


def _error(code: int, msg: str, kind: str = "BAD_REQUEST", **more: Any) -> tuple[int, Any]:
    return code, {"result": "error", "msg": msg, "code": kind, **more}


class FakeZulip(Serving):
    """One organisation with one bot and one stream.  ``say`` writes a message as someone;
    ``raw_messages`` (when not None) replaces what ``GET /messages`` returns, as a hostile server might;
    ``fail_with`` makes every call fail with that status and a message that echoes the request's path and
    Authorization header (as a careless proxy might); ``garbage`` answers with a body that is not JSON."""

    def __init__(
        self, email: str, api_key: str, stream: str = "ops", full_name: str = "vaultops bot"
    ) -> None:
        self.email = email
        self.api_key = api_key
        self.stream = stream
        self.full_name = full_name
        self.lock = threading.Lock()
        self.messages: list[dict[str, Any]] = []
        self.sent: list[dict[str, str]] = []  # the form of each message the bot posted
        self.calls: list[tuple[str, str, dict[str, str]]] = []  # (method, path, params)
        self.next_id = 100
        self.raw_messages: Any = None
        self.fail_with: int | None = None
        self.garbage = False
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                code, payload = owner.handle(
                    self.command, self.path, self.headers.get("Authorization") or "", body
                )
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> FakeZulip:
        super().__enter__()
        return self

    @property
    def site(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def say(
        self,
        sender_email: str,
        content: str,
        *,
        name: str = "Ann Person",
        topic: str = "vaultops",
        timestamp: int = 1_770_000_000,
        stream: str | None = None,
    ) -> int:
        """Someone writes ``content`` in the stream (or another one); the message's id."""
        with self.lock:
            return self._add(sender_email, name, stream or self.stream, topic, content, timestamp)

    def _add(self, email: str, name: str, stream: str, topic: str, content: str, timestamp: int) -> int:
        self.next_id += 1
        self.messages.append(
            {
                "id": self.next_id,
                "type": "stream",
                "sender_email": email,
                "sender_full_name": name,
                "sender_id": abs(hash(email)) % 10000,
                "display_recipient": stream,
                "stream_id": STREAM_ID if stream == self.stream else STREAM_ID + 1,
                "subject": topic,
                "content": content,
                "timestamp": timestamp,
                "flags": ["read"],
                "reactions": [],
            }
        )
        return self.next_id

    def topics(self) -> list[str]:
        with self.lock:
            return [form["topic"] for form in self.sent]

    def contents(self) -> list[str]:
        with self.lock:
            return [form["content"] for form in self.sent]

    def asked(self, name: str) -> list[str]:
        """The values of parameter ``name`` in each ``GET /messages``."""
        with self.lock:
            return [params.get(name, "") for method, path, params in self.calls if path == "messages"]

    def handle(self, method: str, raw_path: str, auth: str, body: bytes) -> tuple[int, Any]:
        parts = urlsplit(raw_path)
        path = parts.path.removeprefix("/api/v1/")
        params = dict(parse_qsl(parts.query if method == "GET" else body.decode(), keep_blank_values=True))
        with self.lock:
            if self.fail_with is not None:
                return _error(self.fail_with, f"upstream failed for {raw_path} with {auth}", "UPSTREAM")
            if self.garbage:
                return 200, b"<html>502 Bad Gateway</html>"
            expected = "Basic " + base64.b64encode(f"{self.email}:{self.api_key}".encode()).decode()
            if auth != expected:
                return _error(401, "Invalid API key", "INVALID_API_KEY")
            self.calls.append((method, path, params))
            if (method, path) == ("POST", "messages"):
                return self._post_message(params)
            if (method, path) == ("GET", "messages"):
                return self._get_messages(params)
            if (method, path) == ("GET", "users/me"):
                return 200, {
                    "result": "success",
                    "msg": "",
                    "email": self.email,
                    "full_name": self.full_name,
                    "user_id": 1,
                    "is_bot": True,
                }
        return _error(404, "Invalid endpoint", "BAD_REQUEST")

    def _post_message(self, form: dict[str, str]) -> tuple[int, Any]:
        if form.get("type") not in ("stream", "channel"):
            return _error(400, "Invalid type", "BAD_REQUEST")
        to, topic, content = form.get("to", ""), form.get("topic", ""), form.get("content", "")
        if to != self.stream:
            return _error(400, f"Channel '{to}' does not exist", "STREAM_DOES_NOT_EXIST", stream=to)
        if not topic.strip() or len(topic) > MAX_TOPIC:
            return _error(400, f"Topic is empty or longer than {MAX_TOPIC} characters", "BAD_REQUEST")
        if not topic.isprintable():
            return _error(400, "Invalid characters in topic!", "BAD_REQUEST")
        if not content.strip() or len(content) > MAX_CONTENT:
            return _error(400, f"Message is empty or longer than {MAX_CONTENT} characters", "BAD_REQUEST")
        if "\0" in content:
            return _error(400, "Message must not contain null bytes", "BAD_REQUEST")
        self.sent.append(form)
        ident = self._add(self.email, self.full_name, to, topic, content, 1_770_000_000 + self.next_id)
        return 200, {"result": "success", "msg": "", "id": ident}

    def _get_messages(self, params: dict[str, str]) -> tuple[int, Any]:
        try:
            narrow = json.loads(params.get("narrow", "[]"))
            before, after = int(params.get("num_before", "0")), int(params.get("num_after", "0"))
        except ValueError:
            return _error(400, "Invalid parameters", "BAD_REQUEST")
        if before < 0 or after < 0 or before + after > MAX_FETCH:
            return _error(400, f"Too many messages requested (maximum {MAX_FETCH}).", "BAD_REQUEST")
        found = list(self.messages)
        for term in narrow:
            if term.get("operator") in ("stream", "channel"):
                found = [m for m in found if m["display_recipient"].casefold() == term["operand"].casefold()]
        include = params.get("include_anchor", "true") == "true"
        anchor = params.get("anchor", "")
        if anchor == "newest":
            point = max((m["id"] for m in found), default=0)
        elif anchor == "oldest":
            point = 0
        elif anchor.isdigit():
            point = int(anchor)
        else:
            return _error(400, "Invalid anchor", "BAD_REQUEST")
        older = [m for m in found if m["id"] < point][-before:] if before else []
        at = [m for m in found if m["id"] == point and include]
        newer = [m for m in found if m["id"] > point][:after]
        chosen = older + at + newer
        if params.get("apply_markdown", "true") == "true":
            chosen = [{**m, "content": f"<p>{html.escape(m['content'])}</p>"} for m in chosen]
        if self.raw_messages is not None:
            chosen = self.raw_messages
        return 200, {
            "result": "success",
            "msg": "",
            "anchor": point,
            "found_anchor": bool(at),
            "found_newest": not [m for m in found if m["id"] > point][after:],
            "found_oldest": len(older) == len([m for m in found if m["id"] < point]),
            "history_limited": False,
            "messages": chosen,
        }
