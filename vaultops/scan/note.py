"""A note read from disk and parsed: its text, frontmatter, outline and requests.  Pure."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vaultops.model import Request
from vaultops.scan.outline import Outline, scan
from vaultops.scan.requests import parse_requests
from vaultops.scan.text import NoteText, has_undecodable


@dataclass(frozen=True, slots=True)
class Disowned:
    """Lines under one request that look like vaultops's (a status or a lock line) and are not: the request
    is read as if they were not there (``vaultops.engine.provenance``)."""

    lines: tuple[int, ...]  # their line numbers, in order
    written: Request  # the request as the note's lines give it, with them: what the note writer finds

    def quoted(self, note_lines: list[str]) -> tuple[str, ...]:
        """The lines themselves, stripped, as the person typed them."""
        return tuple(note_lines[n].strip() for n in self.lines if 0 <= n < len(note_lines))


@dataclass(frozen=True)
class ParsedNote:
    rel: str
    raw: bytes
    text: NoteText
    body_start: int  # first line after the frontmatter
    frontmatter: dict[str, Any] = field(default_factory=dict)
    frontmatter_error: str | None = None
    outline: Outline = field(default_factory=Outline)
    requests: list[Request] = field(default_factory=list)
    conflict_line: int | None = None  # first line of a git conflict left in the note by another tool
    # request's start line -> the lines under it that imitate vaultops's (set by the vetting of a read)
    disowned: Mapping[int, Disowned] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        return content_hash(self.raw)

    @property
    def lines(self) -> list[str]:
        return self.text.lines

    def request(self, ident: str) -> Request | None:
        return next((r for r in self.requests if r.id == ident), None)


def content_hash(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def split_frontmatter(lines: list[str]) -> tuple[int, dict[str, Any], str | None]:
    """(first body line, metadata, error).  Frontmatter is a first line ``---`` up to the next ``---``."""
    if not lines or lines[0].rstrip() != "---":
        return 0, {}, None
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        return 0, {}, None
    import yaml  # only notes with frontmatter need it
    from frontmatter.default_handlers import YAMLHandler

    text = "\n".join(lines[1:end])
    if has_undecodable(text):
        return end + 1, {}, "the frontmatter has bytes that are not UTF-8; re-save the note as UTF-8"
    try:
        meta = YAMLHandler().load(text) if text.strip() else {}
    except (ValueError, RecursionError) as exc:  # e.g. a date PyYAML cannot build
        return end + 1, {}, f"broken frontmatter: {exc}; fix the YAML between the --- lines"
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return end + 1, {}, f"broken frontmatter{line}: {reason}; fix the YAML between the --- lines"
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        return (
            end + 1,
            {},
            "the frontmatter is not a set of `key: value` lines; fix the YAML between the --- lines",
        )
    return end + 1, meta, None


def parse_note(rel: str, raw: bytes, *, requests: bool = True, full: bool = True) -> ParsedNote:
    """Parse a note.  ``requests=False`` skips the request grammar (daily notes); ``full=False`` reads
    requests that will not run as skeletons (see ``parse_requests``)."""
    text = NoteText.from_bytes(raw)
    body_start, meta, error = split_frontmatter(text.lines)
    outline = scan(text.lines, start=body_start)
    found = parse_requests(text.lines, outline, rel, full=full, start=body_start) if requests else []
    conflict = conflict_start(text.lines, outline) if b"<<<<<<<" in raw else None
    return ParsedNote(rel, raw, text, body_start, meta, error, outline, found, conflict)


def conflict_start(lines: list[str], outline: Outline) -> int | None:
    """The first line of a git conflict (``<<<<<<<``, ``=======``, ``>>>>>>>`` in that order, outside code
    blocks, where agent output may quote one), or None."""
    stage = 0
    start = 0
    for n, line in enumerate(lines):
        marker = line[:7]
        if marker not in ("<<<<<<<", "=======", ">>>>>>>") or line[7:8] not in ("", " ", "\n", "\r"):
            continue
        if outline.closer_after(n - 1) is not None if n else False:
            continue  # inside a fenced code or HTML block
        if stage == 0 and marker == "<<<<<<<":
            stage, start = 1, n
        elif stage == 1 and marker == "=======":
            stage = 2
        elif stage == 2 and marker == ">>>>>>>":
            return start
    return None
