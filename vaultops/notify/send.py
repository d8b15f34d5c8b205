"""Sending what the outbox holds: every apprise URL of ``[notify] urls``, and the Telegram bot's chats.

At least once, deliberately.  A target is marked as reached right after it accepted a notice; a crash
between its acceptance and that mark sends it to that one target again on the next pass.  The other
order (mark first, then send) would lose the notice in the same window, and a lost escalation leaves a
risky request waiting with nobody told, while a duplicate costs one extra message.  The window is one
send to one target wide, since each target is marked on its own.

A target that fails is not tried again for the other notices of the same round (a dead server would
otherwise cost its timeout once per notice, on every pass); the outbox backs off before the next try.
Errors are logged and stored redacted: apprise URLs and the bot token hold secrets.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit

from vaultops.base.redact import redact
from vaultops.config import TelegramConfig, ZulipConfig
from vaultops.notify.channels import Change, Channels
from vaultops.notify.logs import Log
from vaultops.notify.message import Ask, Notice
from vaultops.notify.outbox import Entry, Outbox, retry_delay
from vaultops.notify.telegram import Bot, TelegramError, asked_again
from vaultops.notify.zulip import ZulipTarget, zulip_client
from vaultops.store.state import StateDB


class NotifyError(Exception):
    """A target did not take a notice."""


class Queue(Protocol):
    """What ``deliver`` asks of the outbox (``Outbox``; the engine's in-memory twin in tests)."""

    def pending(self, now: float | None = None) -> list[Entry]: ...
    def reached(self, key: str, target: str) -> None: ...
    def sent(self, key: str, now: float | None = None) -> None: ...
    def failed(
        self, key: str, error: str, now: float | None = None, secrets: Iterable[str] = (), wait: float = 0.0
    ) -> None: ...


class Target(Protocol):
    @property
    def id(self) -> str:
        """Stable and free of secrets: state.db remembers which targets have each notice by it."""

    @property
    def label(self) -> str:
        """How logs name it, without secrets."""

    def send(self, notice: Notice) -> None:
        """Raise when the notice was not accepted."""


@dataclass(frozen=True, slots=True)
class Delivered:
    sent: int  # notices that every target now has
    failed: list[str] = field(default_factory=list)  # keys still pending after this round
    changes: list[Change] = field(default_factory=list)  # channels that became failing, or recovered


@dataclass(frozen=True, slots=True)
class AppriseTarget:
    url: str
    index: int = 0
    key: str = "urls"  # which list of [notify] it is in: urls, or fallback

    @property
    def id(self) -> str:
        digest = hashlib.sha256(self.url.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        return ("apprise:" if self.key == "urls" else f"{self.key}:") + digest

    @property
    def label(self) -> str:
        return f"[notify] {self.key}[{self.index}] ({self.url.split('://', 1)[0]}://…)"

    def send(self, notice: Notice) -> None:
        import apprise  # here: importing it costs a CLI that never notifies a noticeable fraction of a second

        # apprise says why it failed only in its log; capturing it also keeps its lines (which may quote
        # the URL) off stderr, where Python's last-resort handler would print them unredacted.
        sender = apprise.Apprise()
        capture = apprise.LogCapture(level=logging.WARNING, fmt="%(message)s")  # type: ignore[no-untyped-call]
        with capture as captured:
            usable = sender.add(self.url)
            ok = usable and sender.notify(
                body=notice.body, title=notice.title, body_format=apprise.NotifyFormat.TEXT
            )
        if not ok:
            said = [line for line in captured.getvalue().splitlines() if line.strip()]
            why = said[-1] if said else "apprise reported a failure"
            raise NotifyError(why if usable else f"not a URL apprise can use: {why}")


@dataclass(frozen=True, slots=True)
class TelegramTarget:
    bot: Bot
    chat_id: int
    open_url: str = ""  # [notify.telegram] open_url: where the Open button goes
    # where the messages that ask are remembered (state.db), so that one a newer message asks again about
    # (the request was edited) loses its buttons; None: nothing is remembered
    asked: StateDB | None = None

    @property
    def id(self) -> str:
        return f"telegram:{self.chat_id}"

    @property
    def label(self) -> str:
        return f"telegram chat {self.chat_id}"

    def send(self, notice: Notice) -> None:
        message_id = self.bot.send_notice(self.chat_id, notice, self.open_url)
        if notice.ask is not None and self.asked is not None and message_id:
            self._asked_again(notice.ask, message_id)

    def _asked_again(self, ask: Ask, message_id: int) -> None:
        """The buttons of this chat's earlier messages about the same request, but another version of it
        (another text or escalation), are taken off once the newest message is out: they would only
        answer "Answer the newest message".  A reminder of the same escalation keeps them."""
        assert self.asked is not None
        key = f"telegram.asked.{self.bot.id}.{self.chat_id}.{ask.request_id}"
        drop, keep = asked_again(_asked_messages(self.asked.get(key)), ask.binding, message_id)
        for old in drop:
            # a message the person deleted, or one Telegram no longer lets be edited: its buttons still
            # refuse (``engine.heard``), so this is only tidying
            with contextlib.suppress(TelegramError):
                self.bot.drop_buttons(self.chat_id, old)
        self.asked.set(key, json.dumps(keep))


def _asked_messages(raw: str | None) -> list[tuple[int, str]]:
    try:
        found = json.loads(raw) if raw else []
        return [(int(m), str(b)) for m, b in found]
    except (ValueError, TypeError):  # damaged: nothing to take buttons off, which is only untidy
        return []


# A URL part that looks generated (a webhook or bot token): redacted wherever it shows up in an error.
_GENERATED = re.compile(r"(?=[^/@]*[A-Za-z])(?=[^/@]*[0-9])[^/@?#]{16,}")


def url_secrets(url: str) -> list[str]:
    """The URL and the parts of it that may be secret: its password, query values and generated-looking
    path parts.  Apprise's messages quote URLs and hosts; these keep the tokens in them out of logs."""
    found = [url]
    try:
        parts = urlsplit(url)
        found += [parts.password or "", *(value for _, value in parse_qsl(parts.query))]
    except ValueError:  # a malformed URL (a bad port, say): the whole of it is all there is to hide
        return found
    found += [m.group() for m in _GENERATED.finditer(parts.netloc.rpartition("@")[2] + "/" + parts.path)]
    return [s for s in found if s]


def targets(
    urls: Sequence[str],
    telegram: TelegramConfig | None = None,
    zulip: ZulipConfig | None = None,
    state: StateDB | None = None,
) -> list[Target]:
    """Where notices go: each apprise URL, each Telegram chat when the bot has a token, and the Zulip
    stream when its bot has a site, a key and a stream."""
    found: list[Target] = [AppriseTarget(url, i) for i, url in enumerate(urls)]
    token = telegram.token.get_secret_value() if telegram is not None else ""
    if telegram is not None and token:
        bot = Bot(token, telegram.api_base)
        found += [TelegramTarget(bot, chat, telegram.open_url, state) for chat in telegram.chat_ids]
    if zulip is not None and zulip.site and zulip.api_key.get_secret_value() and zulip.stream:
        found.append(ZulipTarget(zulip_client(zulip), zulip))
    return found


def deliver(
    state: StateDB,
    urls: Sequence[str],
    log: Log,
    *,
    telegram: TelegramConfig | None = None,
    zulip: ZulipConfig | None = None,
    now: float | None = None,
    sender: str = "",
    failing_after: int = 3,
    fallback: Sequence[str] = (),
    to: Sequence[Target] | None = None,
    outbox: Queue | None = None,
) -> Delivered:
    """Send every pending notice (of ``sender``, see ``Outbox``) whose retry time has come to every target
    that lacks it.  What a failing target (``notify.channels``) cannot take goes to the ``fallback``
    URLs instead; once they have it, it is not kept for that target.  ``to`` and ``outbox``: the targets
    and the outbox to use instead of those the settings and state.db give (the engine's twins).

    With no target configured nothing is tried and the notices wait: they are kept, not dropped.
    """
    at = time.time() if now is None else now
    to = targets(urls, telegram, zulip, state) if to is None else to
    if not to:
        return Delivered(0, [])
    backups = [AppriseTarget(url, i, "fallback") for i, url in enumerate(fallback)]
    secrets = [s for url in (*urls, *fallback) for s in url_secrets(url)]
    if telegram is not None:
        secrets.append(telegram.token.get_secret_value())
    if zulip is not None:
        secrets.append(zulip.api_key.get_secret_value())
    outbox = Outbox(state, sender) if outbox is None else outbox
    channels = Channels(state, failing_after)
    down: dict[str, str] = {}  # target id -> why it failed earlier in this round
    waits: dict[str, float] = {}  # target id -> the seconds it asked to be left alone (a rate limit)
    sent = 0
    failed: list[str] = []
    changes: list[Change] = []
    for entry in outbox.pending(now=at):
        key = entry.notice.key
        notice = entry.notice.redacted(secrets)  # the send path: whatever queued it
        errors: dict[str, str] = {}  # target id -> why it does not have it
        for target in to:
            if target.id in entry.reached:
                continue
            if target.id in down:
                errors[target.id] = f"{target.label}: not tried, it failed earlier in this round"
                continue
            try:
                target.send(notice)
            except Exception as exc:  # any failure of a notifier, its bugs too: logged, retried later
                why = redact(f"{target.label}: {exc}", secrets)
                down[target.id] = errors[target.id] = why
                asked = float(getattr(exc, "retry_after", 0.0) or 0.0)
                if asked:  # it said when to come back (a 429): waiting as told is not failing
                    waits[target.id] = asked
                else:
                    changes += _said(channels.failed(target.id, target.label, redact(str(exc), secrets), at))
                continue
            outbox.reached(key, target.id)  # at once: a crash after this does not resend it here
            changes += _said(channels.worked(target.id, target.label))
        failing = [t for t in errors if channels.is_failing(t)]
        if failing and backups and _to_backups(backups, notice, entry.reached, outbox, down, secrets):
            for target_id in failing:  # the fallback has it: not kept for a channel that is down
                outbox.reached(key, target_id)
                del errors[target_id]
        if errors:
            error = redact("; ".join(errors.values()), secrets)
            asked = max((waits.get(t, 0.0) for t in errors), default=0.0)
            outbox.failed(key, error, now=at, secrets=secrets, wait=asked)
            wait = max(retry_delay(entry.attempts + 1), asked)
            log.warn(f"notify: {key} not delivered, retried in {wait:g} s: {error}")
            failed.append(key)
        else:
            outbox.sent(key, now=at)
            log.info("notified", key=key)
            sent += 1
    return Delivered(sent, failed, changes)


def _said(change: Change | None) -> list[Change]:
    return [change] if change is not None else []


def _to_backups(
    backups: Sequence[Target],
    notice: Notice,
    reached: frozenset[str],
    outbox: Queue,
    down: dict[str, str],
    secrets: Sequence[str],
) -> bool:
    """Send ``notice`` to every fallback that lacks it; True when they all have it now."""
    whole = True
    for backup in backups:
        if backup.id in reached:
            continue
        if backup.id in down:
            whole = False
            continue
        try:
            backup.send(notice)
        except Exception as exc:  # a fallback that fails too: the notice stays pending
            down[backup.id] = redact(f"{backup.label}: {exc}", secrets)
            whole = False
            continue
        outbox.reached(notice.key, backup.id)
    return whole
