"""A note's bytes as lines, losslessly.

Notes are decoded as UTF-8 with ``surrogateescape`` so that bytes which are not UTF-8 survive a
read-modify-write byte for byte.  Lines end at ``\\r\\n``, ``\\r`` or ``\\n`` (what CommonMark counts),
never at the other characters ``str.splitlines`` treats as breaks.  Line ``i`` of the text is line ``i``
of the bytes, because an undecodable byte becomes exactly one character and line breaks are ASCII.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BOM = "\ufeff"
_BREAK = re.compile(r"\r\n|\r|\n")
_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")
_SURROGATE = re.compile("[\udc80-\udcff]")


def decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def split_lines(text: str) -> list[str]:
    """Lines without their endings.  A final line ending does not open an empty last line."""
    if not text:
        return []
    lines = text.split("\n") if "\r" not in text else _BREAK.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def split_raw_lines(raw: bytes) -> list[bytes]:
    """Lines of the bytes, each with its own ending kept, so that ``b"".join`` gives ``raw`` back."""
    out: list[bytes] = []
    start = 0
    for m in _BREAK_BYTES.finditer(raw):
        out.append(raw[start : m.end()])
        start = m.end()
    if start < len(raw):
        out.append(raw[start:])
    return out


def has_undecodable(line: str) -> bool:
    return _SURROGATE.search(line) is not None


def undecodable_line_numbers(lines: list[str], start: int, end: int) -> list[int]:
    return [i for i in range(start, end) if has_undecodable(lines[i])]


@dataclass(frozen=True, slots=True)
class NoteText:
    """A decoded note: its lines (BOM removed from the first), and how it ends its lines."""

    lines: list[str]
    newline: str
    has_bom: bool
    ends_with_newline: bool

    @classmethod
    def from_bytes(cls, raw: bytes) -> NoteText:
        return cls.from_text(decode(raw))

    @classmethod
    def from_text(cls, text: str) -> NoteText:
        has_bom = text.startswith(BOM)
        lines = split_lines(text)
        if has_bom:
            lines[0] = lines[0][1:]
        return cls(lines, dominant_newline(text), has_bom, text.endswith(("\n", "\r")))


def dominant_newline(text: str) -> str:
    """The line ending the note uses most, so inserted lines match their neighbours."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    cr = text.count("\r") - crlf
    if crlf >= lf and crlf >= cr and crlf > 0:
        return "\r\n"
    if cr > lf:
        return "\r"
    return "\n"
