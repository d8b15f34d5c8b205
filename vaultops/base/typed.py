"""Text as a person meant to type it: what a phone, an editor or a copy from the web changes undone.  Pure.

A phone's keyboard puts a non-breaking space after a dash, capitals at a line's start, a full-width colon
or letters (an East Asian keyboard), an en dash for a hyphen, and zero-width characters nobody sees.  The
readers of the person's own words (answers, request headings) undo those before they read; vaultops's own
lines are never read this way (``vaultops.scan.lookalike`` uses it to set such imitations aside).
"""

from __future__ import annotations

import unicodedata

# Characters an editor, a phone or a copy from the web puts in a line without showing them.
INVISIBLE = dict.fromkeys(
    map(ord, "\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\ufeff")
)
# Dashes a keyboard's "smart punctuation" or a copy puts where a hyphen was typed (an en or em dash is also
# the separator of an answer's comment: only ``hyphens`` folds those).
DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u02d7\u2e3a\u2e3b\ufe58\ufe63\uff0d"
_HYPHENS = dict.fromkeys(map(ord, DASHES), "-")


def plain(text: str) -> str:
    """``text`` in compatibility form (full-width letters and colons, non-breaking and other spaces become
    the plain ones) without invisible characters."""
    return unicodedata.normalize("NFKC", text).translate(INVISIBLE)


def hyphens(text: str) -> str:
    """``text`` with every look-alike dash a plain hyphen."""
    return text.translate(_HYPHENS)
