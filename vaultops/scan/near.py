"""Headings that are almost a request: what a phone or an editor makes of ``## REQ-…``.  Pure.

A request is a level-2 heading typed ``## REQ-…``: two ``#``, a plain space, ``REQ`` in capitals, a plain
hyphen.  A phone may put a non-breaking space after ``##`` (Markdown then reads no heading at all, only a
paragraph), capitalise nothing (``## req-…``), turn the hyphen into an en dash (``## REQ–…``), or type
``REQ`` in full-width letters.  Such a heading is *named*, never run: the line under it says what to fix,
and once it is retyped it is read like any request.

Why not run it as the request it resembles: a request must be what the person meant, and its id is what
claims, status lines, chat answers and state.db bind to.  Reading look-alikes as the real thing would give
one id several spellings (a look-alike heading could then stand for another request's id, with that
request's lines and answers); a named heading runs nothing, so a look-alike can never make anything run.
It still ends the block above it (the person meant a new request there), so that its text is never read
as part of the request above, and that request's results land under that request.

The id it is named by is the one it would have once fixed (``REQ-`` and the rest, hyphens plain), so that
the line vaultops writes under it is still vaultops's own line after the fix; a copy of another request's
id in the same note is a duplicate id, and stops both, as a duplicate always does.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from vaultops.base.typed import INVISIBLE, hyphens, plain
from vaultops.scan.blocks import atx_text
from vaultops.scan.shape import Heading, Outline

# Letters of other alphabets that look like R, E and Q (NFKC leaves them as they are).
_CONFUSABLE = dict.fromkeys(map(ord, "\u0415\u0435\u0395\u1d07\u13ac\u2c88"), "e")
_CONFUSABLE |= dict.fromkeys(map(ord, "\u0280\u13a1\u16b1"), "r")
_CONFUSABLE |= dict.fromkeys(map(ord, "\u051a\u051b"), "q")
# A line that may be meant as a level-1 or level-2 heading: #s (full-width ones too), then any gap.
_HASHES = re.compile(
    r"(?P<hashes>[#\uff03]{1,2})(?![#\uff03])(?P<gap>(?:[^\S\r\n]|[\u200b-\u200d\u2060\ufeff])*)"
)
_STARTS = ("#", "\uff03")
_LONGEST_PREFIX = 12  # REQ- with a zero-width character or two in it


@dataclass(frozen=True, slots=True)
class Near:
    """A heading (or a line meant as one) that is almost a request."""

    line: int
    text: str  # its text as the request heading it would be: ``REQ-…`` and the title
    problem: str  # the sentence written under it


def near_headings(lines: list[str], outline: Outline, start: int = 0) -> dict[int, Near]:
    """Line -> the heading there that is almost a request: top-level ATX headings of level 1 or 2 whose
    text is ``REQ-`` typed otherwise, and top-level lines that a phone's space (or none) after ``##`` kept
    from being a heading.  Lines inside fenced code or HTML blocks are text, whatever they look like."""
    out: dict[int, Near] = {}
    headings = {h.line: h for h in outline.headings}
    for h in headings.values():
        if h.atx and h.level <= 2 and not h.text.startswith("REQ-"):
            near = _near(h.line, h.text, [] if h.level == 2 else ["it has one # (a level-1 heading)"])
            if near is not None:
                out[h.line] = near
    for n in _hash_lines(lines, start):
        if n in headings or (n and outline.open_after(n - 1) is not None):
            continue
        m = _HASHES.match(lines[n])
        if m is None:
            continue
        faults = _gap_faults(m["hashes"], m["gap"] or "")
        if faults and (near := _near(n, atx_text(lines[n][m.end() :]), faults)) is not None:
            out[n] = near
    return out


def _hash_lines(lines: list[str], start: int) -> Iterable[int]:
    return (n for n in range(start, len(lines)) if lines[n].startswith(_STARTS))


def _gap_faults(hashes: str, gap: str) -> list[str]:
    faults = []
    if "\uff03" in hashes:
        faults.append("its # are full-width")
    if len(hashes) == 1:
        faults.append("it has one # (a level-1 heading)")
    if not gap:
        faults.append("there is no space after the #")
    odd = [c for c in gap if c != " "]
    if odd:
        faults.append(f"the space after the # is {_named(odd[0])}, not a plain space")
    return faults


def _fold(text: str) -> str:
    return hyphens(plain(text)).translate(_CONFUSABLE).casefold()


def _near(line: int, text: str, faults: list[str]) -> Near | None:
    """``text`` (a heading's, after its #s) as a near request, or None when it does not start like one."""
    prefix = next(
        (text[:i] for i in range(4, min(len(text), _LONGEST_PREFIX) + 1) if _fold(text[:i]) == "req-"), None
    )
    if prefix is None:
        return None
    letters, dash = prefix[:-1], prefix[-1]
    faults = [*faults, *_word_faults(letters, dash)]
    if not faults:
        return None  # `## REQ-…` as it should be (a line Markdown left as text for another reason)
    rest = hyphens(plain(text[len(prefix) :]))
    fixed = f"REQ-{rest}"
    ident = fixed.split(maxsplit=1)[0] if fixed.strip() else fixed
    shown = " ".join(text.split()[:1]) or text
    problem = (
        f"the heading `{shown}` is almost a request, but {_and(faults)}; vaultops reads a request only "
        f"from a heading typed `## REQ-…` (two #, a plain space, REQ in capitals, a plain hyphen): "
        f"retype it as `## {ident}` and it is read as a request"
    )
    return Near(line, fixed, problem)


def _word_faults(letters: str, dash: str) -> list[str]:
    faults = []
    if any(ord(c) in INVISIBLE for c in letters + dash):
        faults.append("REQ has an invisible character in it")
    seen = plain(letters)
    if any(ord(c) in _CONFUSABLE for c in seen):
        faults.append("REQ has letters of another alphabet that look like Latin ones")
    elif seen != letters.translate(INVISIBLE):
        faults.append("REQ is in full-width letters")
    if seen.upper() != seen:
        faults.append("REQ is not in capitals")
    if dash != "-":
        faults.append(f"after REQ stands {_named(dash)} where a hyphen goes")
    return faults


def _named(c: str) -> str:
    name = unicodedata.name(c, f"U+{ord(c):04X}").lower()
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name} (U+{ord(c):04X})"


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def as_heading(near: Near) -> Heading:
    """The request heading ``near`` stands for, where it stands."""
    return Heading(near.line, 2, near.text, True)
