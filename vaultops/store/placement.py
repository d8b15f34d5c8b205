"""Where inserted lines go, and what must come with them so that the note keeps its shape.  Pure.

The daemon only ever inserts whole lines after a block's last non-blank line (or at the end of the
note).  Inserted list items must stand at the top level, and must not swallow or reshape what follows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vaultops.model import Request
from vaultops.scan.note import ParsedNote

# Ends a list without showing anything, for when the next line is indented enough to join our list.
LIST_END = "<!-- -->"


@dataclass(frozen=True, slots=True)
class Edit:
    after: int  # insert after this line (0-based); -1 inserts at the very start
    lines: tuple[str, ...]


def _indent(line: str) -> int:
    col = 0
    for c in line:
        if c == " ":
            col += 1
        elif c == "\t":
            col += 4 - col % 4
        else:
            break
    return col


def place(note: ParsedNote, after: int, new_lines: Sequence[str]) -> Edit:
    """An edit that inserts ``new_lines`` after line ``after`` so that they land at the top level."""
    lines = note.lines
    out: list[str] = []
    if after >= note.body_start:
        closer = note.outline.closer_after(after)
        if closer is not None:
            out.append(closer)
    out.extend(new_lines)
    following = after + 1
    if following < len(lines):
        nxt = following
        while nxt < len(lines) and not lines[nxt].strip():
            nxt += 1
        if nxt < len(lines) and _indent(lines[nxt]) >= 2:
            out.append(LIST_END)
        elif lines[following].strip():
            out.append("")
    return Edit(after, tuple(out))


def at_block_end(note: ParsedNote, request: Request, new_lines: Sequence[str]) -> Edit:
    return place(note, request.last_line, new_lines)


def at_note_end(note: ParsedNote, new_lines: Sequence[str], *, separate: bool = True) -> Edit:
    """Append at the end of the note, after a blank line when the note does not already end with one."""
    lines = note.lines
    last = len(lines) - 1
    lead = [""] if separate and lines and lines[-1].strip() else []
    if last < note.body_start:
        return Edit(last, (*lead, *new_lines))
    edit = place(note, last, [*lead, *new_lines]) if lead else place(note, last, new_lines)
    return edit
