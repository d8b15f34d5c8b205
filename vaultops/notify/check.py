"""What ``vaultops doctor`` asks of the notifiers: can apprise use each URL, and is the Telegram bot set up.

Nothing is sent.  Apprise is asked to parse each URL (offline); the bot is asked ``getMe``, which checks the
token without writing to anyone.  Each problem is one line that says how to fix it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

from vaultops.config import (
    CONFIG_FILE,
    LOCAL_FILE,
    TELEGRAM_TOKEN_ENV,
    ZULIP_KEY_ENV,
    TelegramConfig,
    ZulipConfig,
)
from vaultops.notify.telegram import Bot, TelegramError
from vaultops.notify.zulip import ZulipError, site_host, zulip_client

Finding = tuple[bool, str]  # (fine, line), as doctor's checks yield them
_BOT_TOKEN = re.compile(r"[0-9]+:[A-Za-z0-9_-]{20,}")


def apprise_refuses(url: str) -> str | None:
    """Why apprise cannot use ``url`` (an unknown scheme, a missing part), or None when it can."""
    import apprise  # here: a CLI that never checks notifiers does not pay for importing it

    scheme = url.split("://", 1)[0].lower()
    # Its log lines quote the URL, secrets and all: captured, and dropped.
    with apprise.LogCapture(level=logging.ERROR):  # type: ignore[no-untyped-call]
        if apprise.Apprise().add(url):
            return None
    try:
        from apprise.manager_plugins import NotificationManager
    except ImportError:  # an apprise without this module: say what is true either way
        return f"apprise cannot read it (an unknown scheme, or a part a {scheme}:// URL needs is missing)"
    if scheme not in NotificationManager().schemas():  # type: ignore[no-untyped-call]
        return f"apprise has no {scheme}:// service"
    return f"apprise cannot read it: a part a {scheme}:// URL needs is missing or malformed"


# said by `doctor` and by every `tick` while a bot has a token but no chat: the one step left
UNLINKED = (
    "[notify.telegram] has a token but no chat_ids, so no one is told and no reply counts — send your bot a "
    "message, then run `vaultops link-chat telegram`"
)


def unlinked(settings: TelegramConfig) -> str | None:
    """The step left when the bot has a token and no chat to tell, else None."""
    return UNLINKED if settings.token.get_secret_value() and not settings.chat_ids else None


def telegram_findings(settings: TelegramConfig, token_committed: bool, timeout: float) -> Iterator[Finding]:
    """``[notify.telegram]``: a token where it belongs and of the right shape, chats to tell, a bot that
    answers.  ``token_committed``: config.toml (shared through git) holds a token."""
    if token_committed:
        yield (
            False,
            f"{CONFIG_FILE}: [notify.telegram] token is a secret in a committed file — move it to "
            f"{LOCAL_FILE} or {TELEGRAM_TOKEN_ENV}, and have @BotFather issue a new one",
        )
    if not settings.enabled:
        return
    token = settings.token.get_secret_value()
    if not token:
        yield (
            False,
            f'[notify.telegram] has no token — put token = "<from @BotFather>" under [notify.telegram] in '
            f"{LOCAL_FILE}, or set {TELEGRAM_TOKEN_ENV}",
        )
        return
    if not _BOT_TOKEN.fullmatch(token):
        yield False, "[notify.telegram] token does not look like a bot token (digits:letters) — copy it again"
        return
    if not settings.chat_ids:
        yield False, UNLINKED
    bot = Bot(token, settings.api_base, timeout=timeout)
    try:
        me = bot.call("getMe", {})
    except TelegramError as exc:
        yield (
            False,
            f"[notify.telegram] {settings.api_base} did not accept the bot ({exc}) — check the token with "
            "@BotFather, the network, or api_base",
        )
        return
    name = me.get("username") if isinstance(me, dict) else None
    chats = len(settings.chat_ids)
    yield True, f"notify: Telegram bot @{name or bot.id} answers; {chats} chat(s) told (nothing was sent)"


def zulip_findings(settings: ZulipConfig, key_committed: bool, timeout: float) -> Iterator[Finding]:
    """``[notify.zulip]``: a key where it belongs, a site, a bot, a stream and senders, and a server that
    accepts the bot.  ``key_committed``: config.toml (shared through git) holds an api_key."""
    if key_committed:
        yield (
            False,
            f"{CONFIG_FILE}: [notify.zulip] api_key is a secret in a committed file — move it to "
            f"{LOCAL_FILE} or {ZULIP_KEY_ENV}, and generate a new key in Zulip's bot settings",
        )
    if not settings.enabled:
        return
    missing = False
    if not settings.site:
        missing = True
        yield False, '[notify.zulip] has no site — set site = "https://<your organisation>.zulipchat.com"'
    if not settings.email:
        missing = True
        yield (
            False,
            "[notify.zulip] has no email — copy the bot's address from Zulip's Personal settings → Bots",
        )
    if not settings.api_key.get_secret_value():
        missing = True
        yield (
            False,
            f'[notify.zulip] has no api_key — put api_key = "<the bot\'s API key>" under [notify.zulip] in '
            f"{LOCAL_FILE}, or set {ZULIP_KEY_ENV}",
        )
    if not settings.stream:
        missing = True
        yield (
            False,
            "[notify.zulip] has no stream, so no one is told and no answer is read — set stream to the "
            "name of a stream, and subscribe the bot to it (it reads only streams it is subscribed to)",
        )
    if not settings.senders:
        yield (
            False,
            "[notify.zulip] has no senders, so no answer from Zulip counts — write in the stream, then run "
            "`vaultops link-chat zulip` (or list your Zulip address in senders)",
        )
    if missing:
        return
    client = zulip_client(settings, timeout)
    try:
        me = client.me()
    except ZulipError as exc:
        yield (
            False,
            f"[notify.zulip] {site_host(settings.site)} did not accept the bot ({exc}) — check email and "
            "api_key in Zulip's bot settings, the network, or site",
        )
        return
    name = me.get("full_name")
    who = name if isinstance(name, str) and name else settings.email
    yield (
        True,
        f"notify: Zulip bot {who} answers on {site_host(settings.site)}; stream {settings.stream} "
        "(nothing was sent)",
    )
