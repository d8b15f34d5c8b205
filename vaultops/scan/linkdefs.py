"""Link reference definitions at the start of a paragraph.

They matter to the block structure in one place only: a paragraph made of nothing but definitions
cannot become a setext heading, and a setext heading starts after any leading definitions.
"""

from __future__ import annotations

import re

_LABEL = re.compile(r"\[((?:[^\\\[\]]|\\.){0,999})\]:")
_SPACES = re.compile(r"[ \t]*")
_SPNL = re.compile(r"[ \t]*(?:\n[ \t]*)?")
_ANGLE_DEST = re.compile(r"<(?:[^<>\n\\]|\\.)*>")
_TITLE = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\((?:[^()\\]|\\.)*\)", re.S)
_LINE_END = re.compile(r"[ \t]*(?:\n|$)")
# markdown-it refuses these destinations (an XSS guard), so a definition with one is plain text.
_BAD_PROTOCOL = re.compile(r"(vbscript|javascript|file|data):")
_GOOD_DATA = re.compile(r"data:image/(gif|png|jpeg|webp);")


def _allowed(destination: str) -> bool:
    url = destination.strip().lower()
    return not _BAD_PROTOCOL.match(url) or bool(_GOOD_DATA.match(url))


def _raw_destination(s: str, pos: int) -> int:
    """End of a bare destination starting at ``pos`` (``pos`` itself when there is none)."""
    depth = 0
    i = pos
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\" and i + 1 < n and s[i + 1] in "()<>\\ ":
            i += 2
            continue
        if c == "(":
            depth += 1
            if depth > 32:
                return pos
        elif c == ")":
            if depth == 0:
                break
            depth -= 1
        elif c <= " " or c == "\x7f":
            break
        i += 1
    return pos if depth else i


def _one_definition(s: str, pos: int) -> int | None:
    """The position just after one definition that starts at ``pos``, or None."""
    indent = _SPACES.match(s, pos)
    assert indent is not None
    if indent.end() - pos > 3:
        return None
    label = _LABEL.match(s, indent.end())
    if not label or not label.group(1).strip() or "\n\n" in label.group(1):
        return None
    gap = _SPNL.match(s, label.end())
    assert gap is not None
    start = gap.end()
    if start < len(s) and s[start] == "<":
        angle = _ANGLE_DEST.match(s, start)
        if not angle:
            return None
        after_dest = angle.end()
        destination = s[start + 1 : after_dest - 1]
    else:
        after_dest = _raw_destination(s, start)
        if after_dest == start:
            return None
        destination = s[start:after_dest]
    if not _allowed(destination):
        return None
    gap = _SPNL.match(s, after_dest)
    assert gap is not None
    if gap.end() > after_dest:
        title = _TITLE.match(s, gap.end())
        if title and "\n\n" not in title.group():
            end = _LINE_END.match(s, title.end())
            if end:
                return end.end()
    end = _LINE_END.match(s, after_dest)
    return end.end() if end else None


def skip_link_definitions(lines: list[str]) -> int:
    """How many of a paragraph's first lines are taken by link reference definitions."""
    text = "\n".join(lines)
    pos = 0
    while pos < len(text):
        nxt = _one_definition(text, pos)
        if nxt is None:
            break
        pos = nxt
    return text.count("\n", 0, pos) + (1 if pos >= len(text) and text else 0)
