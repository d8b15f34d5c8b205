"""The person's answers from chat: ``approve REQ-…`` and ``deny REQ-… reason`` (``PLAN-…`` for a plan note),
typed in Telegram or Zulip, or a Telegram button pressed.  Pure: text in, verdict out.

``approve REQ-… for this request`` (or ``approve for this request REQ-…``) widens an approval from one
tool call to the same call for the rest of that request's job; nothing wider exists.  ``/halt <reason>``
and ``/resume`` are the fleet's kill switch (``decide.halt``): they name no request.

Phones capitalise the first word and Telegram groups send ``/approve@some_bot``, so the verb is read
case-insensitively, with an optional slash and bot name.  The id follows the inbox grammar
(``REQ-[A-Za-z0-9._-]+``, see ``vaultops.scan.requests``), its ``REQ-`` in any case; a full stop that ends
the sentence is not part of it.  A reply to one of the bot's notices may leave the id out: it is taken
from the notice replied to when that names exactly one request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from vaultops.classifier.normalize import latin_skeleton
from vaultops.model import ApprovalScope

Verdict = Literal["approve", "deny"]
Switch = Literal["halt", "resume"]  # the fleet's kill switch, for every request at once (``decide.halt``)

_COMMAND = re.compile(
    r"\A\s*/?(?P<verb>approve|deny)(?:@(?P<bot>[A-Za-z0-9_]+))?(?=\s|\Z|[:,.!])[\s:,.!]*(?P<rest>.*)\Z",
    re.IGNORECASE | re.DOTALL,
)
# ``/halt <reason>`` (the slash may be left out: a kill switch typed in a hurry still halts) and ``/resume``
_SWITCH = re.compile(
    r"\A\s*(?P<slash>/)?(?P<verb>halt|resume)(?:@(?P<bot>[A-Za-z0-9_]+))?(?=\s|\Z|[:,.!])[\s:,.!]*(?P<rest>.*)\Z",
    re.IGNORECASE | re.DOTALL,
)
# what names a request, whatever the keyboard made of it: quoted, after a '#', its letters Cyrillic, its
# hyphen a dash
_NAMES_ONE = re.compile(
    r"(?<![A-Za-z0-9])(?:[RP][E3]Q|P[L1I]AN)\s?[-\u2010-\u2015\u2212\ufe58\ufe63\uff0d]", re.I
)  # Cyrillic Р folds to the P it looks like, and reads as the R it stands for
_UNWRITABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")  # not for a line in a note
_ID = re.compile(r"(?<![A-Za-z0-9._-])(?:REQ|PLAN)-[A-Za-z0-9._-]+", re.IGNORECASE)
_ID_AT_START = re.compile(r"(?:REQ|PLAN)-[A-Za-z0-9._-]+", re.IGNORECASE)
_COMMENT_LEAD = " \t\n:,—–-"
_SCOPE = re.compile(
    r"\A[\s:,—–-]*(?:(?P<once>once)|(?P<request>for\s+(?:this|the\s+whole)\s+request))(?![\w-])", re.I
)


@dataclass(frozen=True, slots=True)
class Parsed:
    request_id: str  # "" for the kill switch
    verdict: Verdict | Switch
    comment: str
    scope: ApprovalScope = "once"


@dataclass(frozen=True, slots=True)
class Press:
    """A button pressed under one of the bot's messages, and what the message was when it was sent: the
    press counts only while the request is as it was then (``binding``) and the message is young enough.
    (An approval from a message that did not show everything never gets this far: ``notify.telegram``.)"""

    binding: str
    sent: int  # when the message was sent (Unix time)
    callback_id: str  # to answer the press with a toast
    chat_id: int
    message_id: int  # to edit the message with the outcome
    text: str  # the message's text as shown


@dataclass(frozen=True, slots=True)
class ChatAnswer:
    """An answer from chat, for a request: typed (``press`` None) or a button (``press`` set)."""

    request_id: str  # "" for the kill switch
    verdict: Verdict | Switch
    comment: str
    who: str  # the sender's name (with the group's title in a group chat): it signs the line in the note
    via: str  # "Telegram", "Zulip": said in the note
    date: int  # when it was written (Unix time): an answer from before an escalation must not count
    scope: ApprovalScope = "once"
    press: Press | None = None
    # where a typed answer was typed, to reply there with what it did: Telegram's chat and message (0:
    # none), Zulip's topic ("": none)
    chat_id: int = 0
    message_id: int = 0
    topic: str = ""


def take_scope(verdict: Verdict, rest: str) -> tuple[ApprovalScope, str]:
    """The scope an approval names at the start of ``rest``, and what follows it."""
    m = _SCOPE.match(rest)
    if verdict != "approve" or m is None:
        return "once", rest
    return ("request" if m["request"] else "once"), rest[m.end() :].lstrip(" \t\n:,.!")


def _normal_id(raw: str) -> str:
    prefix, rest = raw.split("-", 1)
    ident = f"{prefix.upper()}-{rest}"
    return ident.rstrip(".") if len(ident.rstrip(".")) > len(prefix) + 1 else ident


def parse_reply(text: str, replied_to: str = "", bot: str = "") -> Parsed | None:
    """The verdict in a chat message, or None when it is not one (chatter, a typo, no request id, a
    command for another bot than ``bot``).  The id may be left out in a reply to a message that names
    one request; a message that names a request in any other way than as the grammar writes it is not
    an answer (it would be taken for the one replied to)."""
    switch = _SWITCH.match(text)
    if switch is not None and not (bot and switch["bot"] and switch["bot"].lower() != bot.lower()):
        if switch["verb"].lower() == "halt":
            return Parsed(request_id="", verdict="halt", comment=writable(switch["rest"]))
        if switch["slash"]:  # a word "resume" in chatter must not restart the fleet
            return Parsed(request_id="", verdict="resume", comment="")
    m = _COMMAND.match(text)
    if m is None or (bot and m["bot"] and m["bot"].lower() != bot.lower()):
        return None
    verdict: Verdict = "approve" if m["verb"].lower() == "approve" else "deny"
    scope, rest = take_scope(verdict, m["rest"])
    explicit = _ID_AT_START.match(rest)
    if explicit is not None:
        ident = _normal_id(explicit.group())
        comment = rest[explicit.end() :]
    else:
        if _NAMES_ONE.search(latin_skeleton(rest)):
            return None  # it names a request, but not as one is written: not the one replied to
        named = {_normal_id(found) for found in _ID.findall(replied_to)}
        if len(named) != 1:
            return None  # no id, and no single request to take it from
        ident = named.pop()
        comment = rest
    if not ident.split("-", 1)[1]:
        return None
    if scope == "once":
        scope, comment = take_scope(verdict, comment)
    comment = writable(comment).lstrip(_COMMENT_LEAD)
    return Parsed(request_id=ident, verdict=verdict, comment=comment, scope=scope)


def writable(text: str) -> str:
    """``text`` as one line a note can hold: no control characters, no lone surrogates."""
    return " ".join(_UNWRITABLE.sub(" ", text).split())
