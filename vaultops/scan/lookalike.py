"""Lines that imitate vaultops's own: a status or a lock line as a phone or an editor may type it.  Pure.

vaultops writes ``- status: <state> @ <time>`` and ``- locked-by: …`` in one exact form, and reads them back
with some leeway (``vaultops.lines``).  A line the person or an agent typed is never vaultops's, whatever
it looks like (``vaultops.engine.provenance`` asks state.db and git whose a line is).  Those the parser
reads as status or lock lines are found there; this finds the rest: the same line with capitals, a
non-breaking or zero-width space, a full-width colon, another bullet.  Read as text, such a line would
reach the request's prompt and look, to the person, like a state; it is set aside and named instead.
"""

from __future__ import annotations

import re

from vaultops.base.typed import plain
from vaultops.model import STATES

_BULLET = r"(?:[-*+\u2022\u2023\u2043\u2219\u25e6\u2010-\u2015\u2212]\s*)?"
_LINE = re.compile(rf"\s{{0,8}}{_BULLET}(?P<key>status|locked[\s_-]*by)\s*:\s*(?P<value>\S*)")


def imitated(line: str) -> str | None:
    """``status`` or ``locked-by`` when ``line``, with what a phone or an editor changes undone, reads as
    vaultops's status line (a state's name after ``status:``) or lock line; None otherwise."""
    if ":" not in line and "\uff1a" not in line and "\ufe55" not in line and "\ufe13" not in line:
        return None  # most lines: no colon of any width, nothing to imitate
    m = _LINE.match(plain(line).casefold())
    if m is None:
        return None
    if m["key"] == "status":
        word = re.match(r"[a-z]+", m["value"])
        return "status" if word is not None and word.group() in STATES else None
    return "locked-by"
