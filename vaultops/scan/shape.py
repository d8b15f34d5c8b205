"""The shape of a note that vaultops reads: top-level headings, list items and open code/HTML blocks."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Heading:
    line: int  # first line; a setext heading starts at its paragraph's first line
    level: int
    text: str
    atx: bool


@dataclass(frozen=True, slots=True)
class OpenSpan:
    """A top-level fenced code or HTML block over lines ``start..last``; ``closed`` if line ``last``
    is the line that ends it.  ``closer`` is a line that would end it ("" for a blank line)."""

    start: int
    last: int
    closed: bool
    closer: str


@dataclass(slots=True)
class Outline:
    headings: list[Heading] = field(default_factory=list)  # top-level headings of every level
    items: dict[int, str] = field(default_factory=dict)  # line of a top-level bullet item -> its marker
    spans: list[OpenSpan] = field(default_factory=list)
    _starts: list[int] = field(default_factory=list, repr=False, compare=False)  # in line order

    def closer_after(self, line: int) -> str | None:
        """A line to insert after ``line`` so that the next line is back at the top level, if needed."""
        span = self.open_after(line)
        return span.closer if span else None

    def open_after(self, line: int) -> OpenSpan | None:
        """The fenced code or HTML block still open after ``line``, if any."""
        if len(self._starts) != len(self.spans):
            self._starts = [s.start for s in self.spans]
        i = bisect_right(self._starts, line) - 1
        if i < 0:
            return None
        span = self.spans[i]  # top-level blocks do not overlap: only the last one that started can be open
        if line < span.last or (line == span.last and not span.closed):
            return span
        return None
