"""Zulip: notices posted to a stream's topics by a bot, and the person's ``approve``/``deny`` read back.

Only the standard library speaks HTTP here, with a timeout on every call, against the configured site.
Zulip's REST API (https://zulip.com/api/): every call authenticates with HTTP basic auth as
``email:api_key``, takes form-encoded parameters (JSON values, such as a narrow, JSON-encoded), and
answers ``{"result": "success", …}`` or ``{"result": "error", "msg": …, "code": …}``.  Used:

- ``POST /api/v1/messages`` (``type=stream``, ``to``, ``topic``, ``content``): a notice; answers ``id``.
- ``GET /api/v1/messages`` (``anchor``, ``num_before``, ``num_after``, ``include_anchor``, ``narrow``,
  ``apply_markdown=false``): the stream's messages after the last one read, as the Markdown typed.
- ``GET /api/v1/users/me``: who the key belongs to, for ``vaultops doctor`` (it sends nothing).

Answers are read from the stream, and the id of the newest message read is kept in state.db (per site
and stream), so each is returned once, across passes and restarts.  Only the addresses in ``senders``
count; anyone else is logged and dropped.  Nothing here writes into notes: the pipeline turns a
``ChatAnswer`` into the person's decision.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vaultops.base.redact import redact
from vaultops.config import ZulipConfig
from vaultops.notify.http import HttpFailure, fetch_json
from vaultops.notify.logs import Log
from vaultops.notify.message import ELLIPSIS, Notice, one_line, shorten
from vaultops.notify.replies import ChatAnswer, parse_reply
from vaultops.store.state import StateDB

HTTP_TIMEOUT = 10.0  # seconds for a call
# Zulip's own limits (zerver: MAX_TOPIC_NAME_LENGTH, settings.MAX_MESSAGE_LENGTH), in characters.  The
# server would cut a longer message itself, with a note of its own; cutting here ends it with "…", as
# every other channel does.
MAX_TOPIC = 60
MAX_CONTENT = 10000
# The first read of a stream (nothing stored yet) looks at this many of its newest messages, no more: a
# bot added to a busy stream must not replay its history, while an answer typed while vaultops was being
# set up is still seen.  An answer older than its escalation is refused later by its date anyway.
FIRST_LOOK = 20
BATCH = 100  # messages per read after that; more wait for the next pass (Zulip suggests ≤ 1000)
_ANCHOR_KEY = "zulip.anchor."  # + site and stream: another stream is read from its own place
WHO_LIMIT = 100  # characters of a sender's name: it signs a line in a note

# A leading mention of the bot (or anyone): @**Name**, @_**Name** (silent), either with |user_id.
_MENTION = re.compile(r"\A\s*@_?\*\*[^*\n]+?(?:\|\d+)?\*\*")
# What the web app's "Quote and reply" puts after the mention of the quoted person: "[said](link):".
_SAID = re.compile(r"\A\s*\[[^\]\n]*\]\([^)\n]*\):")
_QUOTE_FENCE = re.compile(r"\A\s*(```+|~~~+)\s*quote\s*\Z", re.IGNORECASE)
# Any mention in a notice's own text (@**all**, @*group*, a name an agent wrote): made silent, so only
# the mention vaultops adds on purpose notifies anyone.
_LOUD = re.compile(r"@(?=\*)")


class ZulipError(Exception):
    """A Zulip API call that failed; its message is redacted (never the API key)."""


@dataclass(frozen=True, slots=True)
class ZulipBatch:
    answers: list[ChatAnswer]
    next_anchor: int | None  # to ``ack`` once the answers are safe; None when nothing new came


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _obj(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _form(params: Mapping[str, object]) -> str:
    """Zulip's parameter encoding: strings as they are, booleans as true/false, the rest as JSON."""
    pairs: list[tuple[str, str]] = []
    for name, value in params.items():
        if isinstance(value, bool):
            pairs.append((name, "true" if value else "false"))
        elif isinstance(value, str):
            pairs.append((name, value))
        else:
            pairs.append((name, json.dumps(value)))
    return urllib.parse.urlencode(pairs)


def site_host(site: str) -> str:
    """The site without its scheme (``chat.example.com``, with a path when it has one): names the site
    in ids and state keys, with no secret in it."""
    parts = urllib.parse.urlsplit(site.strip())
    return (parts.netloc.rpartition("@")[2].lower() + parts.path.rstrip("/")) or site


class ZulipClient:
    def __init__(self, site: str, email: str, api_key: str, timeout: float = HTTP_TIMEOUT) -> None:
        self.site = site.strip().rstrip("/")
        self.email = email
        self._key = api_key
        self.timeout = timeout

    def __repr__(self) -> str:  # never the key
        return f"ZulipClient({self.site!r}, email={self.email!r})"

    def _redact(self, text: str) -> str:
        if self._key:
            # A proxy that echoes the request could quote the Authorization header too.
            basic = base64.b64encode(f"{self.email}:{self._key}".encode()).decode()
            text = text.replace(basic, "[REDACTED:zulip]").replace(self._key, "[REDACTED:zulip]")
        return redact(text, [self._key] if self._key else [])

    def call(self, method: str, path: str, params: Mapping[str, object]) -> dict[str, Any]:
        """The answer of ``method path`` (``/api/v1/`` + path) when its result is success; ZulipError
        when it cannot be had or says error."""
        what = f"{method} {path}"
        query = _form(params)
        url = f"{self.site}/api/v1/{path.lstrip('/')}"
        data = None
        if method == "GET":
            url += f"?{query}" if query else ""
        else:
            data = query.encode()
        basic = base64.b64encode(f"{self.email}:{self._key}".encode()).decode()
        headers = {"Authorization": f"Basic {basic}", "User-Agent": "vaultops"}
        if data is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            payload = fetch_json(request, self.timeout, _error_text)
        except (HttpFailure, ValueError) as exc:  # ValueError: a site that is not a URL
            raise ZulipError(self._redact(f"{what}: {exc}")) from None
        if not isinstance(payload, dict) or payload.get("result") != "success":
            said = _error_text(payload) or "the answer was not a success"
            raise ZulipError(self._redact(f"{what}: {said}"))
        return payload

    def send(self, stream: str, topic: str, content: str) -> int:
        """Post ``content`` (Zulip Markdown) to ``stream``'s ``topic``, both cut to Zulip's limits; the
        new message's id."""
        params = {
            "type": "stream",  # "channel" since Zulip 9; "stream" is understood by every version
            "to": stream,
            "topic": shorten(one_line(topic), MAX_TOPIC),  # a topic is one line
            "content": _cut(content.replace("\0", ""), MAX_CONTENT),  # Zulip refuses a NUL byte
        }
        answer = self.call("POST", "messages", params)
        ident = _int(answer.get("id"))
        if ident is None:
            raise ZulipError("POST messages: the answer has no message id")
        return ident

    def messages_after(self, stream: str, anchor: int | None, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` of ``stream``'s messages with an id above ``anchor``, oldest first; with no
        anchor, its newest ``limit``.  Content as typed (Markdown), not rendered."""
        params: dict[str, object] = {
            "narrow": [{"operator": "stream", "operand": stream}],  # "channel" is Zulip 9's new name
            "apply_markdown": False,
        }
        if anchor is None:
            # The newest message is the anchor, included by default: it and the limit - 1 before it.
            params |= {"anchor": "newest", "num_before": max(limit - 1, 0), "num_after": 0}
        else:
            params |= {"anchor": anchor, "num_before": 0, "num_after": limit, "include_anchor": False}
        answer = self.call("GET", "messages", params)
        messages = answer.get("messages")
        if not isinstance(messages, list):
            raise ZulipError("GET messages: the answer holds no list of messages")
        return [m for m in messages if isinstance(m, dict)]

    def me(self) -> dict[str, Any]:
        """The account the key belongs to (``email``, ``full_name``, ``is_bot``, …)."""
        return self.call("GET", "users/me", {})


def _error_text(body: object) -> str:
    """Zulip's ``msg`` (and ``code``) from an error answer, raw bytes or parsed."""
    if isinstance(body, bytes):
        try:
            body = json.loads(body)
        except ValueError:
            return ""
    payload = _obj(body)
    msg, code = one_line(_str(payload.get("msg"))), _str(payload.get("code"))
    text = f"{msg} ({code})" if msg and code else msg or code
    return shorten(text, 300)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - len(ELLIPSIS)] + ELLIPSIS


def _answer_text(content: str) -> str:
    """What a message says as an answer: without a leading @-mention (and a quote-and-reply's "[said]
    (link):" after it) and without quoted lines, which repeat someone else's words (an id in one must
    not become this sender's answer)."""
    content = _MENTION.sub("", content, count=1)
    content = _SAID.sub("", content, count=1)
    kept: list[str] = []
    fence = ""
    for line in content.splitlines():
        if fence:
            if line.strip().startswith(fence):  # a fence closes with at least as many marks
                fence = ""
            continue
        opened = _QUOTE_FENCE.match(line)
        if opened:
            fence = opened.group(1)
            continue
        if not line.lstrip().startswith(">"):
            kept.append(line)
    return "\n".join(kept)


class Zulip:
    """The bot of ``[notify.zulip]``, the senders it trusts, and where its stream was read up to."""

    def __init__(
        self, config: ZulipConfig, state: StateDB, log: Log, client: ZulipClient | None = None
    ) -> None:
        key = config.api_key.get_secret_value()
        self.client = client if client is not None else ZulipClient(config.site, config.email, key)
        self.stream = config.stream
        self.own = _address(config.email)
        self.senders = frozenset(_address(s) for s in config.senders)
        self.state = state
        self.log = log
        self._key = f"{_ANCHOR_KEY}{site_host(config.site)}/{config.stream.casefold()}"

    @property
    def anchor(self) -> int | None:
        stored = self.state.get(self._key)
        return int(stored) if stored and stored.isascii() and stored.isdigit() else None

    def ack(self, next_anchor: int | None) -> None:
        """Messages up to ``next_anchor`` are safe: never return them again.  Only forward."""
        current = self.anchor
        if next_anchor is not None and (current is None or next_anchor > current):
            self.state.set(self._key, str(next_anchor))

    def fetch(self) -> ZulipBatch:
        """Answers since the last ``ack``, without acknowledging them: a caller that must not lose one
        acks after writing them down (at least once).  ZulipError when the stream cannot be read."""
        anchor = self.anchor
        messages = self.client.messages_after(self.stream, anchor, FIRST_LOOK if anchor is None else BATCH)
        seen: list[tuple[int, Mapping[str, Any]]] = []
        for message in messages:
            ident = _int(message.get("id"))
            # An old server that ignores include_anchor sends the anchor again: not new.
            if ident is not None and ident > 0 and (anchor is None or ident > anchor):
                seen.append((ident, message))
        seen.sort(key=lambda pair: pair[0])
        answers = [a for _, m in seen if (a := self._answer(m)) is not None]
        return ZulipBatch(answers, max((i for i, _ in seen), default=None))

    def _answer(self, message: Mapping[str, Any]) -> ChatAnswer | None:
        sender = _str(message.get("sender_email")).strip()
        content, date = message.get("content"), _int(message.get("timestamp"))
        if not sender or _address(sender) == self.own:
            return None  # the bot's own notices (or no sender at all): nobody's answer
        if _address(sender) not in self.senders:
            self.log.info("zulip-ignored", sender=shorten(one_line(sender), WHO_LIMIT), why="not in senders")
            return None
        where = message.get("display_recipient")
        if not isinstance(where, str) or where.casefold() != self.stream.casefold():
            self.log.info("zulip-ignored", sender=sender, why="not a message in the stream")
            return None
        if not isinstance(content, str) or date is None or len(content) > MAX_CONTENT:
            self.log.info("zulip-ignored", sender=sender, why="malformed message")
            return None
        parsed = parse_reply(_answer_text(content))
        if parsed is None:
            self.log.info("zulip-ignored", sender=sender, why="not approve/deny REQ-…")
            return None
        name = shorten(one_line(_str(message.get("sender_full_name"))), WHO_LIMIT)
        return ChatAnswer(
            request_id=parsed.request_id,
            verdict=parsed.verdict,
            comment=parsed.comment,
            who=name or sender,
            via="Zulip",
            date=date,
            scope=parsed.scope,
            topic=_str(message.get("subject")),
        )

    def reply(self, topic: str, text: str) -> None:
        """``text`` in the stream's ``topic``: where a typed answer was, what it did."""
        self.client.send(self.stream, topic or "vaultops", _LOUD.sub("@_", text))


def _address(email: str) -> str:
    """An address to compare: ASCII letters in any case are one letter; anything else stands for itself
    (``casefold`` would make the Kelvin sign a k, and a lookalike a listed sender)."""
    email = email.strip()
    return email.lower() if email.isascii() else "\0" + email


@dataclass(frozen=True, slots=True)
class ZulipTarget:
    """Notices to ``[notify.zulip]``'s stream, each in its topic; the person @-mentioned when asked."""

    client: ZulipClient
    config: ZulipConfig

    @property
    def id(self) -> str:
        return f"zulip:{site_host(self.config.site)}/{self.config.stream}"

    @property
    def label(self) -> str:
        return f"zulip stream {self.config.stream} on {site_host(self.config.site)}"

    def send(self, notice: Notice) -> None:
        content = _LOUD.sub("@_", f"**{notice.title}**\n{notice.body}")
        if notice.ask is not None and self.config.mention:
            content = f"@**{self.config.mention}** {content}"
        self.client.send(self.config.stream, notice.topic or self.config.topic, content)


def zulip_client(config: ZulipConfig, timeout: float = HTTP_TIMEOUT) -> ZulipClient:
    return ZulipClient(config.site, config.email, config.api_key.get_secret_value(), timeout)
