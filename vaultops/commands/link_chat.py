"""``vaultops link-chat telegram|zulip``: link the chat the person writes from, without looking up an id.

Telegram: the bot's pending updates name the chats that wrote to it; the one chosen (``--chat ID``, the
only one, or the person's pick) is added to ``[notify.telegram] chat_ids``.  Zulip: the stream's newest
messages name who wrote there; the one chosen is added to ``[notify.zulip] senders``.

Always into this machine's ``.vaultops/local.toml`` (git-ignored), never into the shared ``config.toml``:
tokens and chats belong to a machine.  The file is edited line by line (``base.toml_edit``), so the
person's comments and other tables stay byte for byte, and it is replaced in one rename, so the daemon,
which reads its config files again when they change, never reads half of it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from vaultops.base.confine import confine, write_text
from vaultops.base.errors import ConfigError, VaultopsError
from vaultops.base.layout import LOCAL_FILE, require_dot_dir
from vaultops.base.toml_edit import CannotEdit, literal, set_list
from vaultops.commands.output import Output
from vaultops.config import TELEGRAM_TOKEN_ENV, ZULIP_KEY_ENV, Config, SharedConfigError, load_config
from vaultops.notify.link import SeenChat, SeenSender, telegram_chats, zulip_senders
from vaultops.notify.telegram import Bot, TelegramError
from vaultops.notify.zulip import ZulipError, site_host, zulip_client

SERVICES = ("telegram", "zulip")
PICKED_UP = "the daemon picks it up without a restart (it reads its config files again when they change)"
Ask = Callable[[str], str]


def link_chat(root: Path, service: str, chat: str | None = None, ask: Ask | None = None) -> Output:
    """Link a chat of ``service``; ``chat``: the Telegram chat id or the Zulip address, without asking;
    ``ask``: asks the person to pick when several wrote (None: they are listed, and --chat is asked for)."""
    if service not in SERVICES:
        raise VaultopsError(f"link-chat {service}: vaultops links {' or '.join(SERVICES)}")
    root = require_dot_dir(root)
    config = _config(root)
    if service == "telegram":
        return _telegram(root, config, chat, ask)
    return _zulip(root, config, chat, ask)


def _config(root: Path) -> Config:
    """The config, or this machine's own alone when the shared one does not load (a typo pushed from the
    phone must not keep a chat from being linked)."""
    try:
        return load_config(root)
    except SharedConfigError:
        return load_config(root, shared=False)


def _telegram(root: Path, config: Config, chat: str | None, ask: Ask | None) -> Output:
    settings = config.notify.telegram
    token = settings.token.get_secret_value()
    if not token:
        raise ConfigError(
            f'{root / LOCAL_FILE}: [notify.telegram] has no token — put token = "<from @BotFather>" there '
            f"(or set {TELEGRAM_TOKEN_ENV}), send your bot a message, then run this again"
        )
    try:
        seen = telegram_chats(Bot(token, settings.api_base))
    except TelegramError as exc:
        raise VaultopsError(
            f"Telegram: could not read the bot's messages ({exc}); check the token, the network or api_base"
        ) from None
    lines = [f"chats that wrote to the bot: {len(seen)}", *(f"  {c.id}  {c.kind}  {c.name}" for c in seen)]
    picked = _pick([str(c.id) for c in seen], [_shown(c) for c in seen], chat, ask)
    if picked is None:
        return _unpicked(lines, seen, "--chat ID", _NO_TELEGRAM)
    try:
        chosen = int(picked)
    except ValueError:
        raise VaultopsError(
            f"--chat {picked}: a Telegram chat id is a number, such as 4242 or -1001234"
        ) from None
    if chosen in settings.chat_ids:
        return Output([*lines, f"chat {chosen} is already in chat_ids; nothing was written"])
    ids = [*settings.chat_ids, chosen]
    lines += _write(root, ("notify", "telegram"), "chat_ids", ids)
    found = next((c for c in seen if c.id == chosen), None)
    if found is not None and found.kind != "private" and found.user and found.user not in settings.users:
        lines.append(
            f"in a group, a button counts only when pressed by someone in users: add {found.user} "
            f"(who wrote last) to [notify.telegram] users in {LOCAL_FILE}"
        )
    return Output(lines)


_NO_TELEGRAM = (
    "no chat has written to the bot yet: send your bot a message from the chat to link (in a group, "
    "/start@<bot name>), then run this again; a daemon that already listens to a chat reads the bot's "
    "messages first, and its log names each chat it ignored: give that id with --chat"
)


def _zulip(root: Path, config: Config, sender: str | None, ask: Ask | None) -> Output:
    settings = config.notify.zulip
    missing = [
        name
        for name, value in (
            ("site", settings.site), ("email", settings.email),
            ("api_key", settings.api_key.get_secret_value()), ("stream", settings.stream),
        )
        if not value
    ]  # fmt: skip
    if missing:
        raise ConfigError(
            f"{root / LOCAL_FILE}: [notify.zulip] has no {', '.join(missing)} — set them there (the key may "
            f"be {ZULIP_KEY_ENV} instead), write in the stream, then run this again"
        )
    try:
        seen = zulip_senders(zulip_client(settings), settings.stream)
    except ZulipError as exc:
        raise VaultopsError(
            f"Zulip: could not read stream {settings.stream} on {site_host(settings.site)} ({exc}); check "
            "email, api_key and site, and that the bot is subscribed to the stream"
        ) from None
    lines = [f"people who wrote in {settings.stream}: {len(seen)}", *(f"  {_named(s)}" for s in seen)]
    picked = _pick([s.email for s in seen], [_named(s) for s in seen], sender, ask)
    if picked is None:
        return _unpicked(lines, seen, "--chat ADDRESS", _NO_ZULIP.format(stream=settings.stream))
    known = {s.lower() for s in settings.senders}
    if picked.strip().lower() in known:
        return Output([*lines, f"{picked} is already in senders; nothing was written"])
    lines += _write(root, ("notify", "zulip"), "senders", [*settings.senders, picked.strip()])
    return Output(lines)


_NO_ZULIP = "nobody but the bot has written in {stream} lately: write something there, then run this again"


def _named(sender: SeenSender) -> str:
    return f"{sender.email}  {sender.name}" if sender.name != sender.email else sender.email


def _shown(chat: SeenChat) -> str:
    return f"{chat.id}  {chat.kind}  {chat.name}"


def _pick(keys: Sequence[str], shown: Sequence[str], given: str | None, ask: Ask | None) -> str | None:
    """The chat to link: the one given, else the only one, else the person's pick by number (None: none)."""
    if given is not None:
        return given.strip()
    if len(keys) == 1:
        return keys[0]
    if not keys or ask is None:
        return None
    menu = "\n".join(f"{n}) {line}" for n, line in enumerate(shown, 1))
    try:
        answer = ask(f"{menu}\nWhich one to link? (1-{len(keys)}, Enter for none) ").strip()
    except EOFError:  # Ctrl-D: none
        return None
    if answer.isdigit() and 1 <= int(answer) <= len(keys):
        return keys[int(answer) - 1]
    return None


def _unpicked(lines: list[str], seen: Sequence[object], option: str, none: str) -> Output:
    if not seen:
        return Output([*lines, none], exit_code=1)
    return Output([*lines, f"nothing was written: pick one with {option}"], exit_code=1)


def _write(root: Path, table: tuple[str, str], key: str, values: list[int] | list[str]) -> list[str]:
    """Set the key in local.toml, every other byte kept; the lines that say so."""
    path = confine(root / LOCAL_FILE, root)
    try:
        text = path.read_bytes().decode("utf-8") if path.exists() else ""
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; fix it, then run this again") from None
    try:
        after = set_list(text, table, key, values)
    except CannotEdit as exc:
        raise ConfigError(
            f"{path}: cannot add to {key} safely ({exc}); write {key} = {literal(values)} under "
            f"[{'.'.join(table)}] yourself"
        ) from None
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600  # it holds tokens
    tmp = path.with_name(path.name + ".vaultops.tmp")
    write_text(tmp, after, root, mode=mode)
    os.chmod(tmp, mode)  # an old temp file keeps the mode it was made with
    os.replace(tmp, path)
    return [f"wrote {key} = {literal(values)} under [{'.'.join(table)}] in {LOCAL_FILE}", PICKED_UP]
