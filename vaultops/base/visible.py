"""Text made safe to write as lines of a note, a commit message or a log: control characters shown.

A NUL byte cannot be handed to a program (git's ``-m``, any argv) and other control characters
garble a note or a terminal, so every line vaultops writes shows them as U+FFFD instead.  Tabs stay.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
REPLACEMENT = "\ufffd"


def visible(text: str) -> str:
    """``text`` with its control characters (not tab, not line breaks) shown as U+FFFD."""
    return _CONTROL.sub(REPLACEMENT, text)


def visible_line(text: str) -> str:
    """``text`` as one line: every control character and line break shown as U+FFFD."""
    return visible(text).replace("\r", REPLACEMENT).replace("\n", REPLACEMENT)


def described(exc: BaseException, limit: int = 300) -> str:
    """An exception as one short line (``KeyError: 'x'``), for a status line or a warning."""
    return " ".join(visible_line(f"{type(exc).__name__}: {exc}").split())[:limit]
