"""The person's chat replies: ``approve REQ-…`` and ``deny REQ-… reason`` (``PLAN-…`` for a plan note).
Pure: text in, verdict out.

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

Verdict = Literal["approve", "deny"]

_COMMAND = re.compile(
    r"\A\s*/?(?P<verb>approve|deny)(?:@[A-Za-z0-9_]+)?(?=\s|\Z|[:,.!])[\s:,.!]*(?P<rest>.*)\Z",
    re.IGNORECASE | re.DOTALL,
)
_ID = re.compile(r"(?<![A-Za-z0-9._-])(?:REQ|PLAN)-[A-Za-z0-9._-]+", re.IGNORECASE)
_ID_AT_START = re.compile(r"(?:REQ|PLAN)-[A-Za-z0-9._-]+", re.IGNORECASE)
_COMMENT_LEAD = " \t\n:,—–-"


@dataclass(frozen=True, slots=True)
class Parsed:
    request_id: str
    verdict: Verdict
    comment: str


def _normal_id(raw: str) -> str:
    prefix, rest = raw.split("-", 1)
    ident = f"{prefix.upper()}-{rest}"
    return ident.rstrip(".") if len(ident.rstrip(".")) > len(prefix) + 1 else ident


def parse_reply(text: str, replied_to: str = "") -> Parsed | None:
    """The verdict in a chat message, or None when it is not one (chatter, a typo, no request id)."""
    m = _COMMAND.match(text)
    if m is None:
        return None
    verdict: Verdict = "approve" if m["verb"].lower() == "approve" else "deny"
    rest = m["rest"]
    explicit = _ID_AT_START.match(rest)
    if explicit is not None:
        ident = _normal_id(explicit.group())
        comment = rest[explicit.end() :]
    else:
        named = {_normal_id(found) for found in _ID.findall(replied_to)}
        if len(named) != 1:
            return None  # no id, and no single request to take it from
        ident = named.pop()
        comment = rest
    if not ident.split("-", 1)[1]:
        return None
    return Parsed(request_id=ident, verdict=verdict, comment=" ".join(comment.split()).lstrip(_COMMENT_LEAD))
