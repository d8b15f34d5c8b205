"""Views of a text with its escapes undone, for redaction.  Pure.

A secret can hide behind an encoding: an ANSI colour code in the middle of it, JSON string escapes
(``\\u0065``, ``\\"`` of doubly-encoded JSON, ``\\/``), or URL percent-escapes (``access_token%3D…``).  A
view is the text with one kind of escape undone, and it maps each of its positions back to the
original, so that what is found in a view is replaced in the original text, escapes and all.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable

# CSI (colours, cursor moves), OSC with its terminator (titles, hyperlinks), and two-character escapes.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)|[@-Z\\^_])")
_JSON = re.compile(r"\\(?:u[0-9a-fA-F]{4}|[\"\\/bfnrt'])")
_JSON_CHARS = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_PERCENT = re.compile(r"%[0-7][0-9A-Fa-f]")  # ASCII only: "%3D" is "=", "%26" is "&"
JSON_LEVELS = 3  # a doubly-encoded tool result, quoted once more in a JSON log line
_HEX = re.compile(r"\\x[0-7][0-9A-Fa-f]")  # "\x67" of Python, C and shell strings
_HTML = re.compile(r"&#(?:[0-9]{1,7}|[xX][0-9A-Fa-f]{1,6});|&(?:amp|quot|apos|lt|gt);")
_HTML_NAMED = {"amp": "&", "quot": '"', "apos": "'", "lt": "<", "gt": ">"}
PERCENT_LEVELS = 3  # "%2567" is "%67" is "g"
# What no one sees: zero-width spaces and joiners, word joiner, BOM, soft hyphen, a carriage return that
# ends no line (a progress bar's), and a backslash-newline (a shell line continuation).
_INVISIBLE = re.compile(r"[\u200b\u200c\u200d\u2060\ufeff\u00ad]|\r(?!\n)|\\\r?\n")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")  # compatibility forms (fullwidth "ｇ") as NFKC writes them

Token = tuple[int, int, int, int]  # view start, view end, original start, original end
Step = tuple[str, re.Pattern[str], Callable[[re.Match[str]], str]]  # trigger, escape, its decoding


class View:
    """``text``, a decoding of ``parent``'s text; ``span`` maps a slice of it to the original's."""

    def __init__(self, text: str, parent: View | None = None, tokens: list[Token] | None = None) -> None:
        self.text = text
        self.parent = parent
        self._tokens = tokens or []
        self._starts = [t[0] for t in self._tokens]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original text's slice that ``text[start:end]`` came from; an escape cut by either end
        is taken whole, an escape that decodes to nothing (ANSI) next to either end is left out."""
        s, e = self._start(start), self._end(end)
        return (s, e) if self.parent is None else self.parent.span(s, e)

    def _start(self, p: int) -> int:
        i = bisect.bisect_right(self._starts, p) - 1
        if i < 0:
            return p
        _, vend, ostart, oend = self._tokens[i]
        return ostart if p < vend else oend + p - vend

    def _end(self, p: int) -> int:
        i = bisect.bisect_left(self._starts, p) - 1
        if i < 0:
            return p
        _, vend, _, oend = self._tokens[i]
        return oend if p <= vend else oend + p - vend


def _derive(view: View, pattern: re.Pattern[str], value: Callable[[re.Match[str]], str]) -> View | None:
    text = view.text
    out: list[str] = []
    tokens: list[Token] = []
    last = at = 0
    for m in pattern.finditer(text):
        decoded = value(m)
        if decoded == m.group():
            continue  # nothing to undo: it stays in the next plain slice
        plain = text[last : m.start()]
        out.append(plain)
        at += len(plain)
        out.append(decoded)
        tokens.append((at, at + len(decoded), m.start(), m.end()))
        at += len(decoded)
        last = m.end()
    if not tokens:
        return None
    out.append(text[last:])
    return View("".join(out), view, tokens)


def _html_char(m: re.Match[str]) -> str:
    entity = m.group()[1:-1]
    if entity[0] != "#":
        return _HTML_NAMED[entity]
    code = int(entity[2:], 16) if entity[1] in "xX" else int(entity[1:])
    return chr(code) if 0 < code <= 0x10FFFF else m.group()


def _json_char(m: re.Match[str]) -> str:
    escape = m.group()[1:]
    if escape[0] == "u":
        return chr(int(escape[1:], 16))
    return _JSON_CHARS.get(escape, escape)


def views(text: str) -> list[View]:
    """The text itself, then each decoding that changes something: ANSI codes removed, JSON escapes
    undone (up to three levels deep), ``\\xHH`` escapes and HTML character references undone, URL
    percent-escapes undone (up to three levels), compatibility characters normalised (NFKC), and
    invisible characters removed.  Each builds on the one before."""
    found = [View(text)]
    ansi: Step = ("\x1b", _ANSI, lambda m: "")
    json_level: Step = ("\\", _JSON, _json_char)
    percent: Step = ("%", _PERCENT, lambda m: chr(int(m.group()[1:], 16)))
    # ANSI codes again after each JSON level: "\u001b[31m" is one once decoded
    steps = [
        ansi,
        *[json_level, ansi] * JSON_LEVELS,
        ("\\x", _HEX, lambda m: chr(int(m.group()[2:], 16))),
        ("&", _HTML, _html_char),
        *[percent] * PERCENT_LEVELS,
        ("", _NON_ASCII, lambda m: unicodedata.normalize("NFKC", m.group())),
        ("", _INVISIBLE, lambda m: ""),
    ]
    for trigger, pattern, value in steps:
        if pattern is _NON_ASCII and found[-1].text.isascii():
            continue
        if trigger in found[-1].text:
            derived = _derive(found[-1], pattern, value)
            if derived is not None:
                found.append(derived)
    return found
