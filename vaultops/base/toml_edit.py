"""One key of a TOML file set to a list, every other byte of the file kept: how ``vaultops link-chat`` writes
``chat_ids`` into a machine's ``local.toml``, which the person has written by hand (comments, other tables,
their own layout).

A line edit, not a round trip through a TOML writer (the standard library reads TOML but cannot write it,
and no TOML writer is a dependency): the key's own lines are replaced, or a line is added under the table's
header, or the table is added at the end.  Whatever the edit, the result is read back and must hold exactly
the old tables with that one key changed; a file this cannot edit so (the key set as a dotted key, the
table written inline) is refused with a sentence saying what to write by hand, never guessed at.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from collections.abc import Sequence
from typing import Any

Value = Sequence[int] | Sequence[str]


class CannotEdit(ValueError):
    """The edit could not be made safely; the message says what to write by hand."""


def literal(values: Value) -> str:
    """A TOML array of integers or strings (a JSON string is a TOML basic string)."""
    return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "]"


def _header(table: Sequence[str]) -> re.Pattern[str]:
    """``[a.b]`` as a line, with any spaces TOML allows and each part bare or quoted, a comment after it."""
    parts = r"\s*\.\s*".join(rf"(?:{re.escape(p)}|\"{re.escape(p)}\"|'{re.escape(p)}')" for p in table)
    return re.compile(rf"\s*\[\s*{parts}\s*\]\s*(?:#.*)?")


_ANY_HEADER = re.compile(r"\s*\[")


def _key_line(key: str) -> re.Pattern[str]:
    """A line that starts setting ``key`` (bare or quoted)."""
    k = re.escape(key)
    return re.compile(rf"\s*(?:{k}|\"{k}\"|'{k}')\s*=")


def _loads(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _value_lines(lines: list[str], start: int, stop: int, key: str) -> int | None:
    """The index just past the lines holding ``key = …`` that starts at ``start`` (a list may span lines):
    the first run of lines that reads as TOML with the key in it."""
    for end in range(start + 1, stop + 1):
        read = _loads("".join(lines[start:end]))
        if read is not None and key in read:
            return end
    return None


def _comment(setting: str, key: str) -> str:
    """The comment after ``key = value`` (a ``#`` on its last line that is not inside the value), with the
    spaces before it; "" when there is none."""
    body = setting.rstrip("\r\n")
    last = body.rfind("\n") + 1
    for at in (m.start() for m in re.finditer("#", body) if m.start() >= last):
        if key in (_loads(body[:at]) or {}):
            return body[len(body[:at].rstrip()) :]
    return ""


def set_list(text: str, table: Sequence[str], key: str, values: Value) -> str:
    """``text`` (a TOML file) with ``[table] key = values``; every other line as it was.  CannotEdit when
    the file does not read as TOML, or the key cannot be set by a line edit."""
    before = _loads(text)
    if before is None:
        raise CannotEdit("it is not valid TOML; fix it first")
    newline = "\r\n" if "\r\n" in text else "\n"
    line = f"{key} = {literal(values)}"
    lines = text.splitlines(keepends=True)
    header = _header(table)
    at = next((i for i, raw in enumerate(lines) if header.fullmatch(raw.rstrip("\r\n"))), None)
    if at is None:
        tail = "" if not text or text.endswith("\n") else newline
        gap = newline if text.strip() else ""
        after = text + tail + gap + f"[{'.'.join(table)}]{newline}{line}{newline}"
    else:
        stop = next((i for i in range(at + 1, len(lines)) if _ANY_HEADER.match(lines[i])), len(lines))
        start = next((i for i in range(at + 1, stop) if _key_line(key).match(lines[i])), None)
        if start is None:
            ending = lines[at][len(lines[at].rstrip("\r\n")) :] or newline
            if not lines[at].endswith("\n"):
                lines[at] += newline
            lines.insert(at + 1, line + ending)
        else:
            end = _value_lines(lines, start, stop, key)
            if end is None:
                raise CannotEdit(f"its {key} line could not be read on its own")
            last = lines[end - 1]
            ending = last[len(last.rstrip("\r\n")) :]
            indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
            lines[start:end] = [indent + line + _comment("".join(lines[start:end]), key) + ending]
        after = "".join(lines)
    expected = copy.deepcopy(before)
    place = expected
    for part in table:
        place = place.setdefault(part, {})
        if not isinstance(place, dict):
            raise CannotEdit(f"{'.'.join(table)} is not a table in it")
    place[key] = list(values)
    if _loads(after) != expected:
        raise CannotEdit(
            f"{key} is set there in a way a line edit cannot change (a dotted key, an inline table)"
        )
    return after
