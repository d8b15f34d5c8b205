"""A scripted fake of the Anthropic Messages API, for running the real Claude Code CLI offline.

Only the stdlib: a ``ThreadingHTTPServer`` on 127.0.0.1 (a free port).  Each ``POST /v1/messages`` takes the
next scripted turn and answers it the way the real API does: a streamed SSE answer (``message_start``,
``content_block_start``, ``content_block_delta`` with ``text_delta`` / ``input_json_delta``,
``content_block_stop``, ``message_delta`` with ``stop_reason`` and ``usage``, ``message_stop``), or a JSON
error body with the HTTP status (and ``retry-after``).  With the script used up it answers ``Text("done")``.

    with FakeAnthropic() as api:                       # start() returns the base URL, also in api.base_url
        api.script(ToolUse("Bash", {"command": "echo hi > out.txt"}), Text("all done"))
        ... run ``claude -p`` with ANTHROPIC_BASE_URL=api.base_url ...
        assert len(api.requests) == 2

``requests`` holds the JSON bodies of the scripted ``POST /v1/messages`` calls, in order.  Calls that are not
part of the agent's conversation (a "session title" request, ``count_tokens``, anything else) never consume a
turn: they are answered with a harmless default and recorded in ``side_requests`` as ``(path, body)``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import threading
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass
class Text:
    """An assistant message with one text block; ``stop_reason`` ``end_turn``."""

    text: str


@dataclass
class ToolUse:
    """An assistant message with one ``tool_use`` block; ``stop_reason`` ``tool_use``."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)


@dataclass
class Error:
    """A non-streamed JSON error with this HTTP status (429, 500, 503, 529, 401, 400, …)."""

    status: int
    message: str = "fake error"
    retry_after: float | None = None


@dataclass
class UsageLimit:
    """The account's usage limit reached, as the API tells a Claude subscription: a 429 whose
    ``anthropic-ratelimit-unified-*`` headers say ``rejected`` and when the window resets (an epoch).

    Claude Code reads those headers when it runs on a login's token (``claude_cli.profile(...,
    subscription=True)``), and then says ``You've hit your session limit · resets 12:51am (UTC)`` as its
    result, and prints a ``rate_limit_event`` with ``resetsAt`` in stream-json.  With an API key it says only
    ``API Error: Request rejected (429)``."""

    resets_at: int
    window: str = "five_hour"  # five_hour | seven_day | seven_day_opus | seven_day_sonnet


@dataclass
class Hang:
    """Read the request, send nothing for ``seconds``, then close the connection without an answer.

    ``stop()`` ends a hang at once."""

    seconds: float


Block = Text | ToolUse
Turn = Text | ToolUse | Error | UsageLimit | Hang | list[Block]

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}

_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:20]}{next(_ids):04d}"


def _chunks(text: str, parts: int = 2) -> list[str]:
    """Split ``text`` into up to ``parts`` non-empty pieces, as the real API streams deltas."""
    if len(text) < 2:
        return [text]
    step = -(-len(text) // parts)
    return [text[i : i + step] for i in range(0, len(text), step)]


def sse_events(blocks: list[Block], model: str, input_tokens: int) -> list[tuple[str, dict[str, Any]]]:
    """The ``(event, data)`` pairs of one streamed assistant message made of ``blocks``."""
    output_tokens = 0
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": _id("msg"),
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": input_tokens,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "output_tokens": 1,
                    },
                },
            },
        ),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(blocks):
        if isinstance(block, Text):
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _chunks(block.text)]
            output_tokens += max(1, len(block.text) // 4)
        else:
            start = {"type": "tool_use", "id": _id("toolu"), "name": block.name, "input": {}}
            arguments = json.dumps(block.input)
            deltas = [{"type": "input_json_delta", "partial_json": ""}]
            deltas += [{"type": "input_json_delta", "partial_json": piece} for piece in _chunks(arguments, 3)]
            output_tokens += max(1, len(arguments) // 4)
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        )
        for delta in deltas:
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop_reason = "tool_use" if any(isinstance(b, ToolUse) for b in blocks) else "end_turn"
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def is_side_request(body: dict[str, Any]) -> bool:
    """The "session title" request (made without CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC), not an agent turn.

    It asks for structured output ``{"title": …}`` with a system prompt about a title; ``thinking`` is off and
    ``tools`` is empty.  An agent turn may have no tools too (``--tools ""``), so the tools are no sign."""
    output_format = (body.get("output_config") or {}).get("format") or {}
    properties = (output_format.get("schema") or {}).get("properties") or {}
    if set(properties) == {"title"}:
        return True
    system = body.get("system")
    texts = (
        [system]
        if isinstance(system, str)
        else [b.get("text", "") for b in system or [] if isinstance(b, dict)]
    )
    return any("Generate a concise" in text and "title" in text for text in texts)


class FakeAnthropic:
    """The fake API server; see the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turns: deque[Turn] = deque()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        self.requests: list[dict[str, Any]] = []
        self.side_requests: list[tuple[str, Any]] = []
        self.heads = 0
        self.base_url = ""
        # what every scripted turn's message_start says its input was (None: about the request's size),
        # so that a test can make each turn cost what it likes
        self.input_tokens: int | None = None

    # -- life cycle -------------------------------------------------------------------------------------
    def start(self) -> str:
        fake = self

        class Handler(_Handler):
            api = fake

        self._stopping.clear()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="fake-anthropic",
            daemon=True,
        )
        self._thread.start()
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self.base_url

    def stop(self) -> None:
        """Stop serving: the port is closed (later connections are refused), open keep-alive connections are
        cut, and hangs end at once."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with self._lock:
            connections, self._connections = list(self._connections), set()
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeAnthropic:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- script -----------------------------------------------------------------------------------------
    def script(self, *turns: Turn) -> None:
        """Queue ``turns``: each scripted ``POST /v1/messages`` consumes one (then ``Text("done")``)."""
        with self._lock:
            self._turns.extend(turns)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._turns)

    def _next(self, body: dict[str, Any]) -> Turn:
        with self._lock:
            self.requests.append(body)
            return self._turns.popleft() if self._turns else Text("done")

    def _side(self, path: str, body: Any) -> None:
        with self._lock:
            self.side_requests.append((path, body))


class _Handler(BaseHTTPRequestHandler):
    api: FakeAnthropic
    protocol_version = "HTTP/1.1"
    server_version = "fake-anthropic"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # keep the test output clean
        pass

    def setup(self) -> None:
        super().setup()
        with self.api._lock:
            self.api._connections.add(self.connection)

    def finish(self) -> None:
        with self.api._lock:
            self.api._connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def handle_one_request(self) -> None:
        if self.api._stopping.is_set():
            self.close_connection = True
            return
        try:
            super().handle_one_request()
        except OSError:  # the client went away (killed CLI, stop()): not the test's business
            self.close_connection = True

    def do_HEAD(self) -> None:
        with self.api._lock:
            self.api.heads += 1
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._json(404, _error_body(404, f"no such path: {self.path}"))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0]
        if path == "/v1/messages/count_tokens":
            self.api._side(path, body)
            self._json(200, {"input_tokens": len(raw) // 40 + 1})
            return
        if path != "/v1/messages" or not isinstance(body, dict):
            self.api._side(path, body)
            self._json(404, _error_body(404, f"no such path: {self.path}"))
            return
        if is_side_request(body):
            self.api._side(path, body)
            self._stream([Text(json.dumps({"title": "Fake session title"}))], body, len(raw))
            return
        turn = self.api._next(body)
        if isinstance(turn, Error):
            headers = {} if turn.retry_after is None else {"retry-after": f"{turn.retry_after:g}"}
            self._json(turn.status, _error_body(turn.status, turn.message), headers)
        elif isinstance(turn, UsageLimit):
            headers = {
                "anthropic-ratelimit-unified-status": "rejected",
                "anthropic-ratelimit-unified-reset": str(turn.resets_at),
                "anthropic-ratelimit-unified-representative-claim": turn.window,
            }
            message = "This request would exceed your account's rate limit. Please try again later."
            self._json(429, _error_body(429, message), headers)
        elif isinstance(turn, Hang):
            self.api._stopping.wait(turn.seconds)
            self.close_connection = True
        else:
            self._stream(turn if isinstance(turn, list) else [turn], body, len(raw))

    # -- answers ----------------------------------------------------------------------------------------
    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", _id("req"))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, blocks: list[Block], body: dict[str, Any], size: int) -> None:
        model = str(body.get("model") or "claude-fake")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", _id("req"))
        self.end_headers()
        tokens = self.api.input_tokens if self.api.input_tokens is not None else size // 40 + 1
        for event, data in sse_events(blocks, model, tokens):
            chunk = f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _error_body(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}
