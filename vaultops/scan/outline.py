"""The top-level shape of a markdown note, by CommonMark's block rules.

``scan`` runs the lines most notes are made of (plain text, ``- text`` items at column 0, ATX headings,
top-level fences and their contents) through a small state machine, and hands everything else to the
general algorithm in ``blocks``.  Only when it does so does it build the general algorithm's stack of
open blocks; that is what makes a 10,000-request inbox quick to read.  Both paths give the same outline
(a property test compares them, and both against markdown-it-py).
"""

from __future__ import annotations

from vaultops.scan.blocks import (
    ATX,
    FENCE,
    FENCE_CLOSE,
    FENCE_OPEN,
    ITEM,
    LIST,
    NOT_PLAIN,
    PARA,
    Block,
    BlockScanner,
    atx_text,
)
from vaultops.scan.shape import Heading, OpenSpan, Outline

__all__ = ["Heading", "OpenSpan", "Outline", "scan"]

# The states of the fast path; each stands for one shape of the general algorithm's stack.
SLOW, TOP, PARAGRAPH, ITEM_ONLY, ITEM_TEXT, FENCED = range(6)


class _Fast:
    """The fast path's state, and the conversions to and from the general algorithm's stack."""

    def __init__(self) -> None:
        self.state = TOP
        self.para_line = self.item_line = self.list_line = self.fence_line = 0
        self.closer = ""

    def materialise(self, stack: list[Block]) -> None:
        """Build the general algorithm's stack for the current state."""
        del stack[1:]
        state = self.state
        if state == PARAGRAPH:
            _push(stack, PARA, self.para_line, 0)
        elif state in (ITEM_ONLY, ITEM_TEXT):
            _push(stack, LIST, self.list_line, 0).list_key = "-"
            item = _push(stack, ITEM, self.item_line, 2)
            item.width = 2
            item.has_child = True
            if state == ITEM_TEXT:
                _push(stack, PARA, self.para_line, 2)
        elif state == FENCED:
            _push(stack, FENCE, self.fence_line, 0).closer = self.closer
        self.state = SLOW

    def recognise(self, stack: list[Block]) -> None:
        """Take over again when the general algorithm's stack has a shape the fast path knows."""
        depth = len(stack)
        top = stack[-1]
        state = SLOW
        if depth == 1:
            state = TOP
        elif depth == 2 and top.kind == FENCE and top.width == 0:
            state, self.fence_line, self.closer = FENCED, top.line, top.closer
        elif depth == 2 and top.kind == PARA and top.para is None and top.column == 0:
            state, self.para_line = PARAGRAPH, top.line
        elif 3 <= depth <= 4:
            lst, item = stack[1], stack[2]
            if (
                lst.kind == LIST
                and lst.list_key == "-"
                and item.kind == ITEM
                and item.width == 2
                and item.column == 2
                and item.list_indent == 0
                and item.has_child
            ):
                self.list_line, self.item_line = lst.line, item.line
                if depth == 3:
                    state = ITEM_ONLY
                elif top.kind == PARA and top.para is None and top.column == 2:
                    state, self.para_line = ITEM_TEXT, top.line
        if state != SLOW:
            del stack[1:]
        self.state = state


def _push(stack: list[Block], kind: int, line: int, column: int) -> Block:
    stack[-1].has_child = True
    block = Block(kind, line)
    block.column = column
    stack.append(block)
    return block


def scan(lines: list[str], *, start: int = 0, fast: bool = True) -> Outline:
    """The outline of ``lines[start:]`` (line numbers stay those of ``lines``).  ``fast=False`` uses only
    the general algorithm; the tests compare the two."""
    general = BlockScanner(lines)
    out = general.out
    stack = general.stack
    f = _Fast()
    if not fast:
        f.state = SLOW
    items, headings, spans = out.items, out.headings, out.spans
    for i in range(start, len(lines)):
        line = lines[i]
        if "\0" in line:
            line = line.replace("\0", "\ufffd")
        state = f.state
        if state == FENCED:
            c = line[:1]
            if c == f.closer[0]:
                m = FENCE_CLOSE.match(line)
                if m and m.end() >= len(f.closer):
                    spans.append(OpenSpan(f.fence_line, i, True, f.closer))
                    f.state = TOP
                continue
            if c != " ":
                continue
        elif state != SLOW:
            if not line:
                if state == PARAGRAPH:
                    f.state = TOP
                elif state == ITEM_TEXT:
                    f.state = ITEM_ONLY
                continue
            c = line[0]
            if c not in NOT_PLAIN:
                if state in (TOP, ITEM_ONLY):
                    f.state, f.para_line = PARAGRAPH, i
                continue  # otherwise a continuation line (lazy, in an item)
            if c == "-":
                if len(line) >= 3 and line[1] == " " and line[2] not in NOT_PLAIN:
                    items[i] = "-"
                    if state in (TOP, PARAGRAPH):
                        f.list_line = i
                    f.state, f.item_line, f.para_line = ITEM_TEXT, i, i
                    continue
            elif c == "#":
                m = ATX.match(line)
                if m:
                    headings.append(Heading(i, len(m.group().rstrip(" \t")), atx_text(line[m.end() :]), True))
                    f.state = TOP
                    continue
            elif c == "`" or c == "~":
                m = FENCE_OPEN.match(line)
                if m:
                    f.state, f.fence_line, f.closer = FENCED, i, m.group()
                    continue
        if f.state != SLOW:
            f.materialise(stack)
        general.incorporate(i, line)
        if fast:
            f.recognise(stack)
    if f.state != SLOW:
        f.materialise(stack)
    return general.finish()
