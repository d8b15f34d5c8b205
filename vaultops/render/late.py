"""Late results: what a run produced after its claim was taken over by another machine.  Pure.

The request is no longer ours, so our lock and status lines must not land (they would flip its state
back); but the output is the person's to read, so each result section is kept under a ``### Late result``
heading, which names the claim it ran under and is never taken as the request's outcome.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vaultops import lines as fmt

_HEADING = re.compile(r" {0,3}#{1,3}(?:[ \t]|$)")  # levels 1-3 end a result section
_FENCE_OPEN = re.compile(r" {0,3}(?P<run>`{3,}|~{3,})")
_FENCE_CLOSE = re.compile(r" {0,3}(?P<run>`{3,}|~{3,})[ \t]*")
_RESULT = re.compile(r"(?:Result|Run)\s+(?:—|–|-)\s+(?P<when>.+?)\s+(?:—|–|-)\s+(?P<agent>.+?)\s*")
_CONTROL = frozenset({"status", "locked-by"})  # the lines that say who holds a request and its state


def late_result(lines: Sequence[str], claim: str) -> list[str]:
    """The result sections of ``lines`` (what vaultops inserted for one request), each under a late-result
    heading for ``claim``; every top-level status and lock line is left out.  [] when there is no result."""
    sections: list[list[str]] = []
    section: list[str] | None = None  # the section being read, if any
    fence = ""  # the run that opened the fence we are in ("" outside fences)
    for line in lines:
        if fence:
            # agent output can hold anything, even lines that look like ours: keep it verbatim
            if section is not None:
                section.append(line)
            closer = _FENCE_CLOSE.fullmatch(line)
            if closer and closer["run"][0] == fence[0] and len(closer["run"]) >= len(fence):
                fence = ""
            continue
        if _HEADING.match(line):
            section = None
            if line.startswith("### ") and fmt.is_result_heading(line[4:]):
                section = [_late_heading(line[4:], claim)]
                sections.append(section)
            continue
        item = fmt.item_field(line)
        if item is not None and item[0] in _CONTROL:
            section = None
            continue
        if section is not None:
            section.append(line)
        opener = _FENCE_OPEN.match(line)
        # a backtick fence's info string cannot hold a backtick (CommonMark); such a line opens nothing
        if opener and not (opener["run"][0] == "`" and "`" in line[opener.end() :]):
            fence = opener["run"]
    if fence and section is not None:
        section.append(fence)  # never leave a fence open: it would swallow the rest of the note
    return [line for s in sections for line in _trimmed(s)]


def _late_heading(text: str, claim: str) -> str:
    if text.startswith("Late result"):
        return f"### {text}"  # already late (a replay of a replay): it keeps the claim it names
    m = _RESULT.fullmatch(text)
    if m:
        return fmt.late_result_heading(m["when"], m["agent"], claim)
    rest = text.partition(" ")[2].lstrip("—–- \t")  # a heading vaultops did not quite write: keep its words
    return f"{fmt.LATE_RESULT}{fmt.SEP}{rest} (claim {claim}, superseded)"


def _trimmed(section: list[str]) -> list[str]:
    end = len(section)
    while end > 1 and not section[end - 1].strip():
        end -= 1
    return section[:end]
