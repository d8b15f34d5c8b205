"""A note cut into pieces that parse on their own, so that an unchanged piece need not be parsed again.

A piece runs from a line that starts a top-level heading of level 1 or 2 (``# …`` or ``## …``; ``cut``
says which of them) to the line before the next one.  After such a heading nothing is open (no list,
quote, code or HTML block), so the outline and the request blocks of a piece do not depend on what stands
above it; and request blocks end at those headings, so no block spans two pieces.  Two things are
checked, not assumed:

* that a line which looks like such a heading is one: the line before it may leave a fenced code block or
  an HTML block open.  Each piece is parsed together with the line after it, and if that line turns out
  not to be a heading, the rest of the note is parsed as one piece (no guessing, and never quadratic);
* that the result can be moved: a piece's lines are numbered from 0 and moved to where the piece stands.
  A piece with bytes that are not UTF-8 names their line numbers in a problem, so it is parsed where it
  stands (``movable`` is False) and its parse is not kept.

The first piece holds the frontmatter and the lines before the first heading.  A piece's ``key`` is a
hash of its bytes, of the line after it, and of whether it is the first, which is all its parse depends
on (with the note's path, which callers keep per note).  ``parse_note_cached`` gives exactly what
``parse_note`` gives (a property test checks it); ``vaultops status`` keeps its rows per piece the same way.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import zlib
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, replace

from vaultops.model import Request
from vaultops.scan.note import ParsedNote, conflict_start, split_frontmatter
from vaultops.scan.outline import Outline, scan
from vaultops.scan.requests import block_requests, mark_duplicates
from vaultops.scan.text import BOM, NoteText, decode, has_undecodable, split_lines

FORMAT = "pieces-1"  # part of every key: a change to what a piece's parse holds must change this
# A line break, then an ATX heading of level 1 or 2 at column 0: a line that may be such a heading (the
# pattern starts with a literal, which the regex engine searches for quickly)
_START = re.compile(rb"\n(#{1,2}(?:[ \t][^\r\n]*)?)(?=[\r\n]|\Z)")
SPREAD = 32
_BOM = BOM.encode()


@dataclass(frozen=True, slots=True)
class Piece:
    start: int  # byte offsets in the note
    end: int
    first: bool
    key: str


@dataclass(frozen=True, slots=True)
class PieceParse:
    """A piece's outline and requests, its lines numbered from 0."""

    key: str
    file: str
    full: bool
    n_lines: int
    joins: bool  # the line after the piece is a top-level heading (or there is none)
    movable: bool
    outline: Outline
    requests: tuple[Request, ...]
    body_start: int = 0  # the first piece: its first line after the frontmatter
    frontmatter: dict[str, object] | None = None
    frontmatter_error: str | None = None


def cut(raw: bytes, spread: int = 0) -> list[Piece]:
    """The pieces a note would be cut into if each line that looks like a heading were one.  Not every
    such line starts a piece: only those whose hash is 0 modulo ``SPREAD``, so that a piece holds some 30
    requests and an edit changes one piece (a choice by content, not by count, so lines added above do not
    move the other pieces' bounds)."""
    spread = spread or SPREAD
    starts = [m.start(1) for m in _START.finditer(raw) if not zlib.crc32(m.group(1)) % spread]
    bounds = [0, *starts, len(raw)]
    view = memoryview(raw)
    return [_piece(raw, view, a, b) for a, b in itertools.pairwise(bounds)]


def rest(raw: bytes, piece: Piece) -> Piece:
    """One piece from ``piece`` to the end of the note."""
    return _piece(raw, memoryview(raw), piece.start, len(raw))


def _piece(raw: bytes, view: memoryview, start: int, end: int) -> Piece:
    after = end
    if end < len(raw):
        nl = raw.find(b"\n", end)
        after = len(raw) if nl < 0 else nl + 1
    # the lengths first, so that a piece and its next line never hash like a longer piece with no next
    h = hashlib.sha256(b"%d %d %d\n" % (start == 0, end - start, after - end))  # sha256: hashlib's quickest
    h.update(view[start:end])
    h.update(view[end:after])
    return Piece(start, end, start == 0, f"{FORMAT}:{h.hexdigest()[:32]}")


def walk(raw: bytes, step: Callable[[Piece, int], tuple[int, bool]], spread: int = 0) -> None:
    """Call ``step(piece, line)`` for each piece in order, ``line`` being its first line in the note.  It
    returns the piece's number of lines and whether the piece joins the next one cleanly; when it does
    not, ``step`` must have kept nothing of it, and is called once more for the rest of the note.
    ``spread``: see ``cut`` (the tests cut at every heading)."""
    line = 0
    for piece in cut(raw, spread):
        n, joins = step(piece, line)
        if not joins:
            step(rest(raw, piece), line)
            return
        line += n


def _next_line(raw: bytes, piece: Piece) -> str | None:
    if piece.end >= len(raw):
        return None
    nl = raw.find(b"\n", piece.end)
    return split_lines(decode(raw[piece.end : len(raw) if nl < 0 else nl + 1]))[0]


def parse_piece(raw: bytes, piece: Piece, file: str, line: int, *, full: bool = True) -> PieceParse:
    """A piece's parse.  Its line numbers start at 0 when it is ``movable``, else at ``line`` (where the
    piece stands in the note)."""
    chunk = raw[piece.start : piece.end]
    text = decode(chunk)
    movable = not has_undecodable(text)
    if piece.first:
        lines = NoteText.from_text(text).lines
        body, meta, error = split_frontmatter(lines)
        if body == 0 and lines and lines[0].rstrip() == "---" and piece.end < len(raw):
            return _no_join(piece, file, full, len(lines))  # the frontmatter may end in a later piece
    else:
        lines = split_lines(text)
        body, meta, error = 0, None, None
    n = len(lines)
    at = 0 if movable else line
    if at:
        lines = [""] * at + lines  # numbered where they stand, as a problem's line numbers must be
    after = _next_line(raw, piece)
    outline = scan(lines if after is None else [*lines, after], start=at + body)
    if after is not None:
        last = outline.headings[-1] if outline.headings else None
        if last is None or last.line != at + n or last.level > 2:
            return _no_join(piece, file, full, n)
        outline.headings.pop()
    requests = tuple(block_requests(lines, outline, file, full=full, start=at + body))
    return PieceParse(piece.key, file, full, n, True, movable, outline, requests, body, meta, error)


def _no_join(piece: Piece, file: str, full: bool, n: int) -> PieceParse:
    return PieceParse(piece.key, file, full, n, False, False, Outline(), ())


def moved(r: Request, by: int) -> Request:
    """A request parsed with its piece's lines numbered from 0, at the piece's place in the note."""
    if not by:
        return r
    return replace(
        r,
        start=r.start + by,
        end=r.end + by,
        last_line=r.last_line + by,
        locks=tuple(replace(x, line=x.line + by) for x in r.locks),
        statuses=tuple(replace(x, line=x.line + by) for x in r.statuses),
        answers=tuple(replace(x, line=x.line + by) for x in r.answers),
        outcomes=tuple(replace(x, line=x.line + by) for x in r.outcomes),
    )


def _merge(into: Outline, part: Outline, by: int) -> None:
    into.headings += [replace(h, line=h.line + by) for h in part.headings] if by else part.headings
    into.items.update({n + by: marker for n, marker in part.items.items()})
    into.spans += [replace(s, start=s.start + by, last=s.last + by) for s in part.spans] if by else part.spans


def cached_parse(entry: object, piece: Piece, file: str, full: bool) -> PieceParse | None:
    """``entry`` if it is exactly a kept parse of this piece, else None (it is then parsed again)."""
    if (
        isinstance(entry, PieceParse)
        and entry.key == piece.key
        and entry.file == file
        and entry.full == full
        and entry.joins
        and entry.movable
        and isinstance(entry.outline, Outline)
        and isinstance(entry.requests, tuple)
        and all(isinstance(r, Request) for r in entry.requests)
    ):
        return entry
    return None


def parse_note_cached(
    rel: str, raw: bytes, cache: MutableMapping[str, object], *, full: bool = True, spread: int = 0
) -> ParsedNote:
    """``parse_note(rel, raw, full=full)``, with each piece's parse taken from ``cache`` when it is there
    (an entry that is not exactly one for this piece is ignored), and put there when it had to be made.
    The caller keeps one cache per note, or at least per path."""
    outline = Outline()
    found: list[Request] = []
    first: list[PieceParse] = []

    def step(piece: Piece, line: int) -> tuple[int, bool]:
        parse = cached_parse(cache.get(piece.key), piece, rel, full)
        if parse is None:
            parse = parse_piece(raw, piece, rel, line, full=full)
            if parse.joins and parse.movable:
                cache[piece.key] = parse
        if parse.joins:
            if piece.first:
                first.append(parse)
            by = line if parse.movable else 0
            _merge(outline, parse.outline, by)
            found.extend(moved(r, by) for r in parse.requests)
        return parse.n_lines, parse.joins

    walk(raw, step, spread)
    head = first[0]
    text = NoteText.from_bytes(raw)
    requests = mark_duplicates(found)
    conflict = conflict_start(text.lines, outline) if b"<<<<<<<" in raw else None
    meta = dict(head.frontmatter) if head.frontmatter else {}
    return ParsedNote(
        rel, raw, text, head.body_start, meta, head.frontmatter_error, outline, requests, conflict
    )
