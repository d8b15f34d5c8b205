"""CommonMark's block algorithm, reduced to what vaultops needs to know about a note.

vaultops needs three things from a note's markdown: where the top-level headings are (they bound the
request blocks), which lines start top-level list items (fields and the daemon's own lines), and which
top-level code or HTML blocks are open at a given line (so that inserted lines never land inside one).
This scanner follows the CommonMark block algorithm (open containers first, then block starts, then lazy
continuation) and skips inline parsing, which is what makes it fast.  A property test checks it against
markdown-it-py's token maps.
"""

from __future__ import annotations

import re

from vaultops.scan.linkdefs import skip_link_definitions
from vaultops.scan.shape import Heading, OpenSpan, Outline

DOC, LIST, ITEM, QUOTE, PARA, FENCE, ICODE, HTML = range(8)
_LEAVES_WITH_LINES = (FENCE, ICODE, HTML)

# start_* results
NONE, CONTAINER, LEAF, CONSUMED = range(4)

_MAYBE_SPECIAL = frozenset("#`~*+_=<>-0123456789")
# A line starting with none of these is plain paragraph text wherever it stands (the fast path's test).
NOT_PLAIN = _MAYBE_SPECIAL | frozenset(" \t[")
_SPACE_OR_TAB = frozenset(" \t")
ATX = re.compile(r"#{1,6}(?:[ \t]+|$)")
FENCE_OPEN = re.compile(r"`{3,}(?!.*`)|~{3,}")
FENCE_CLOSE = re.compile(r"(?:`{3,}|~{3,})(?=[ \t]*$)")
_SETEXT = re.compile(r"(?:=+|-+)[ \t]*$")
_THEMATIC = re.compile(r"(?:\*[ \t]*){3,}$|(?:_[ \t]*){3,}$|(?:-[ \t]*){3,}$")
_ORDERED = re.compile(r"([0-9]{1,9})([.)])")

_BLOCK_NAMES = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|"
    "dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h1|h2|h3|h4|h5|h6|head|header|hr|"
    "html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|"
    "summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul"
)
_ATTR = r"(?:\s+[a-zA-Z_:][a-zA-Z0-9:._-]*(?:\s*=\s*(?:[^\"'=<>`\x00-\x20]+|'[^']*'|\"[^\"]*\"))?)"
_OPEN_TAG = r"<[A-Za-z][A-Za-z0-9\-]*" + _ATTR + r"*\s*\/?>"
_CLOSE_TAG = r"<\/[A-Za-z][A-Za-z0-9\-]*\s*>"
# The seven kinds of HTML block: (how it opens, how it ends; None when a blank line ends it).
_HTML_KINDS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None], ...] = (
    (
        re.compile(r"<(?a:(script|pre|style|textarea))(?=(\s|>|$))", re.IGNORECASE),
        re.compile(r"</(?a:(script|pre|style|textarea))>", re.IGNORECASE),
    ),
    (re.compile(r"<!--"), re.compile(r"-->")),
    (re.compile(r"<\?"), re.compile(r"\?>")),
    (re.compile(r"<![A-Za-z]"), re.compile(r">")),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>")),
    (re.compile(r"</?(?a:(" + _BLOCK_NAMES + r"))(?=(\s|/?>|$))", re.IGNORECASE), None),
    (re.compile(r"(?:" + _OPEN_TAG + "|" + _CLOSE_TAG + r")\s*$"), None),
)
_HTML_CLOSERS = {2: "-->", 3: "?>", 4: ">", 5: "]]>"}


class Block:
    __slots__ = (
        "closer",
        "column",
        "has_child",
        "html_kind",
        "kind",
        "line",
        "list_indent",
        "list_key",
        "para",
        "width",
    )

    def __init__(self, kind: int, line: int) -> None:
        self.kind = kind
        self.line = line
        self.has_child = False
        self.width = 0  # list item: columns its content is indented by; fence: its indent
        self.column = 0  # list item, paragraph: the column its content starts at
        self.list_indent = 0  # list item: the content column of the container its list stands in
        self.list_key = ""  # list: its bullet character or ordered delimiter
        self.closer = ""  # fence, HTML block: a line that would end it
        self.html_kind = 0
        self.para: list[str] | None = None  # paragraph text, kept only when it may hold link definitions


def _is_paragraph(block: Block) -> bool:
    """A paragraph, as block starts see it.  Leading link reference definitions are blocks of their own
    (as markdown-it parses them), so text made only of definitions does not count as a paragraph."""
    if block.kind != PARA:
        return False
    return block.para is None or skip_link_definitions(block.para) < len(block.para)


def _can_contain(parent: int, child: int) -> bool:
    if parent == LIST:
        return child == ITEM
    return parent in (DOC, QUOTE, ITEM) and child != ITEM


class BlockScanner:
    """One pass over the lines.  Only the last child of a block can be open, so the open blocks form a
    chain, kept here as a stack whose bottom is the document."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.out = Outline()
        self.stack: list[Block] = [Block(DOC, 0)]
        self.line_no = 0
        self.line = ""
        self.offset = 0
        self.column = 0
        self.next_nonspace = 0
        self.next_nonspace_column = 0
        self.indent = 0
        self.indented = False
        self.blank = False
        self.partial_tab = False
        self.all_closed = True
        self.matched_depth = 0
        self.container_column = 0

    # --- positions within the line ----------------------------------------------------------------

    def find_next_nonspace(self) -> None:
        line = self.line
        i = self.offset
        cols = self.column
        n = len(line)
        while i < n:
            c = line[i]
            if c == " ":
                cols += 1
            elif c == "\t":
                cols += 4 - (cols % 4)
            else:
                break
            i += 1
        self.blank = i >= n
        self.next_nonspace = i
        self.next_nonspace_column = cols
        self.indent = cols - self.column
        self.indented = self.indent >= 4

    def advance_next_nonspace(self) -> None:
        self.offset = self.next_nonspace
        self.column = self.next_nonspace_column
        self.partial_tab = False

    def advance(self, count: int, columns: bool) -> None:
        line = self.line
        n = len(line)
        while count > 0 and self.offset < n:
            if line[self.offset] == "\t":
                to_tab = 4 - (self.column % 4)
                if columns:
                    self.partial_tab = to_tab > count
                    step = min(to_tab, count)
                    self.column += step
                    if not self.partial_tab:
                        self.offset += 1
                    count -= step
                else:
                    self.partial_tab = False
                    self.column += to_tab
                    self.offset += 1
                    count -= 1
            else:
                self.partial_tab = False
                self.offset += 1
                self.column += 1
                count -= 1

    def char_at(self, pos: int) -> str:
        return self.line[pos] if pos < len(self.line) else ""

    def skip_one_space(self) -> None:
        if self.char_at(self.offset) in _SPACE_OR_TAB:
            self.advance(1, True)

    def content(self) -> str:
        """The rest of the line as a paragraph sees it (a half-used tab counts as spaces)."""
        if self.partial_tab:
            return " " * (4 - self.column % 4) + self.line[self.offset + 1 :]
        return self.line[self.offset :]

    # --- the chain of open blocks -----------------------------------------------------------------

    def close_top(self, last_line: int) -> None:
        block = self.stack.pop()
        if len(self.stack) == 1 and block.kind in (FENCE, HTML):
            self.out.spans.append(OpenSpan(block.line, last_line, False, block.closer))

    def close_unmatched(self) -> None:
        if not self.all_closed:
            while len(self.stack) - 1 > self.matched_depth:
                self.close_top(self.line_no - 1)
            self.all_closed = True

    def make_room_for(self, kind: int) -> None:
        while not _can_contain(self.stack[-1].kind, kind):
            self.close_top(self.line_no - 1)
        self.stack[-1].has_child = True

    def add(self, kind: int) -> Block:
        self.make_room_for(kind)
        block = Block(kind, self.line_no)
        self.stack.append(block)
        return block

    # --- does an open block go on? ----------------------------------------------------------------

    def continues(self, block: Block) -> int:
        """0: it goes on, 1: it does not, 2: this line closed it and nothing else is on the line."""
        kind = block.kind
        if kind == LIST:
            return 0
        if kind == QUOTE:
            # markdown-it lets a continuation line's ">" stand at any indentation (only a block quote's
            # first line must be indented less than four columns)
            if self.char_at(self.next_nonspace) != ">":
                return 1
            self.advance_next_nonspace()
            self.advance(1, False)
            self.skip_one_space()
            return 0
        if kind == ITEM:
            if self.blank:
                if not block.has_child:
                    return 1
                self.advance_next_nonspace()
                return 0
            if self.indent >= block.width:
                self.advance(block.width, True)
                return 0
            return 1
        if kind == PARA:
            return 1 if self.blank else 0
        if kind == FENCE:
            if self.indent <= 3 and self.char_at(self.next_nonspace) == block.closer[0]:
                m = FENCE_CLOSE.match(self.line, self.next_nonspace)
                if m and m.end() - m.start() >= len(block.closer):
                    self.stack.pop()
                    if len(self.stack) == 1:
                        self.out.spans.append(OpenSpan(block.line, self.line_no, True, block.closer))
                    return 2
            i = block.width
            while i > 0 and self.char_at(self.offset) in _SPACE_OR_TAB and self.offset < len(self.line):
                self.advance(1, True)
                i -= 1
            return 0
        if kind == ICODE:
            if self.indent >= 4:
                self.advance(4, True)
            elif self.blank:
                self.advance_next_nonspace()
            else:
                return 1
            return 0
        # HTML
        return 1 if (self.blank and block.html_kind >= 6) else 0

    # --- block starts -----------------------------------------------------------------------------

    def try_starts(self, container: Block) -> int:
        if self.indented:
            if not _is_paragraph(self.stack[-1]) and not self.blank:
                self.advance(4, True)
                self.close_unmatched()
                self.add(ICODE)
                return LEAF
            return NONE
        pos = self.next_nonspace
        c = self.line[pos]
        if c == ">":
            self.advance_next_nonspace()
            self.advance(1, False)
            self.skip_one_space()
            self.close_unmatched()
            self.add(QUOTE)
            return CONTAINER
        if c == "#":
            m = ATX.match(self.line, pos)
            if m:
                self.close_unmatched()
                self.make_room_for(PARA)
                if len(self.stack) == 1:
                    level = len(m.group().rstrip(" \t"))
                    self.out.headings.append(
                        Heading(self.line_no, level, atx_text(self.line[m.end() :]), True)
                    )
                return CONSUMED
        elif c == "`" or c == "~":
            m = FENCE_OPEN.match(self.line, pos)
            if m:
                self.close_unmatched()
                block = self.add(FENCE)
                block.closer = m.group()
                block.width = self.indent
                return LEAF
        elif c == "<" and self.start_html(container):
            return LEAF
        if c in "=-" and _is_paragraph(container) and _SETEXT.match(self.line, pos) and self.start_setext(c):
            return CONSUMED
        if c in "*_-" and _THEMATIC.match(self.line, pos):
            self.close_unmatched()
            self.make_room_for(PARA)
            return CONSUMED
        return self.start_list_item(container)

    def start_html(self, container: Block) -> bool:
        text = self.line[self.next_nonspace :]
        for kind, (opener, _) in enumerate(_HTML_KINDS, start=1):
            if not opener.match(text):
                continue
            if kind == 7 and (
                _is_paragraph(container)
                or (not self.all_closed and not self.blank and _is_paragraph(self.stack[-1]))
            ):
                return False
            self.close_unmatched()
            block = self.add(HTML)
            block.html_kind = kind
            block.closer = _html_closer(kind, text)
            return True
        return False

    def start_setext(self, char: str) -> bool:
        para = self.stack[-1]
        first = 0
        if para.para is not None:
            # A definition may take the underline itself as its destination ("[a]:" then "==="), which
            # markdown-it decides before it looks for a heading, unless the underline could start a
            # block of its own (a thematic break, or an empty list item).
            underline = self.line[self.next_nonspace :]
            own_block = underline.rstrip() == "-" or _THEMATIC.match(underline)
            first = skip_link_definitions(para.para if own_block else [*para.para, underline])
        start = para.line + first
        if start >= self.line_no:
            return False
        self.close_unmatched()
        self.stack.pop()
        if len(self.stack) == 1:
            self.out.headings.append(
                Heading(start, 1 if char == "=" else 2, self.lines[start].strip(), False)
            )
        return True

    def start_list_item(self, container: Block) -> int:
        line = self.line
        pos = self.next_nonspace
        c = line[pos]
        if c in "*+-":
            width = 1
            key = c
        elif "0" <= c <= "9":
            m = _ORDERED.match(line, pos)
            if not m or (_is_paragraph(container) and m.group(1) != "1"):
                return NONE
            width = m.end() - pos
            key = m.group(2)
        else:
            return NONE
        if pos + width < len(line) and line[pos + width] not in _SPACE_OR_TAB:
            return NONE
        if _is_paragraph(container) and not line[pos + width :].strip(" \t"):
            return NONE
        marker_offset = self.indent
        marker_column = self.next_nonspace_column
        list_indent = self.container_column
        self.advance_next_nonspace()
        self.advance(width, True)
        start_col = self.column
        start_offset = self.offset
        while True:
            self.advance(1, True)
            if not (self.column - start_col < 5 and self.char_at(self.offset) in _SPACE_OR_TAB):
                break
            if self.offset >= len(line):
                break
        spaces = self.column - start_col
        if spaces >= 5 or spaces < 1 or self.offset >= len(line):
            padding = width + 1
            self.column = start_col
            self.offset = start_offset
            self.skip_one_space()
        else:
            padding = width + spaces
        self.close_unmatched()
        tip = self.stack[-1]
        if tip.kind != LIST or tip.list_key != key:
            self.add(LIST).list_key = key
        if len(self.stack) == 2 and width == 1:
            self.out.items[self.line_no] = key
        item = self.add(ITEM)
        item.width = marker_offset + padding
        item.list_indent = list_indent
        item.column = marker_column + padding
        return CONTAINER

    def ends_paragraph(self, para: Block) -> bool:
        """Whether a line that is indented code relative to its matched container, and too little indented
        for the paragraph's other containers, still ends the paragraph.

        markdown-it lets the outermost unmatched block quote decide, measuring from that quote's parent;
        block quotes nested inside it see the line with its indentation erased.  Without a block quote,
        the paragraph decides, measuring from its own container's content column."""
        unmatched = self.stack[self.matched_depth + 1 : -1]
        quotes = [i for i, b in enumerate(unmatched) if b.kind == QUOTE]
        if not quotes:
            return self.is_terminator(self.next_nonspace_column - para.column, para.column, paragraph=True)
        first = quotes[0]
        if first > 0:
            base = unmatched[first - 1].column
            if self.is_terminator(self.next_nonspace_column - base, base, paragraph=False):
                return True
        return len(quotes) > 1 and self.is_terminator(0, -1, paragraph=False)

    def is_terminator(self, indent: int, base: int, *, paragraph: bool) -> bool:
        if indent >= 4:
            return False
        line = self.line
        pos = self.next_nonspace
        c = line[pos]
        if c == ">" or (c == "#" and ATX.match(line, pos)) or (c in "`~" and FENCE_OPEN.match(line, pos)):
            return True
        if c in "*_-" and _THEMATIC.match(line, pos):
            return True
        if c == "<":
            text = line[pos:]
            return any(opener.match(text) for opener, _ in _HTML_KINDS[:6])
        m = _ORDERED.match(line, pos) if "0" <= c <= "9" else None
        width = 1 if c in "*+-" else (m.end() - pos if m else 0)
        if not width or (pos + width < len(line) and line[pos + width] not in _SPACE_OR_TAB):
            return False
        col = self.next_nonspace_column
        if paragraph and col >= base:
            return (m is None or m.group(1) == "1") and bool(line[pos + width :].strip(" \t"))
        item = next((b for b in reversed(self.stack) if b.kind == ITEM), None)
        return not (item is not None and col - item.list_indent >= 4 and col < base)

    # --- one line ---------------------------------------------------------------------------------

    def incorporate(self, line_no: int, line: str) -> None:
        self.line_no = line_no
        self.line = line
        self.offset = self.column = 0
        self.blank = self.partial_tab = False
        stack = self.stack
        depth = 0
        all_matched = True
        while depth + 1 < len(stack):
            self.find_next_nonspace()
            res = self.continues(stack[depth + 1])
            if res == 2:
                return
            if res == 1:
                all_matched = False
                break
            depth += 1
        self.all_closed = all_matched
        self.matched_depth = depth
        matched_at = (self.offset, self.column, self.partial_tab)
        if self.starts_and_text(stack[depth]):
            # not a lazy continuation after all: start again from the matched container
            self.offset, self.column, self.partial_tab = matched_at
            self.close_unmatched()
            self.starts_and_text(stack[-1])

    def starts_and_text(self, container: Block) -> bool:
        """Block starts, then the text.  True if the line turned out not to be a lazy continuation."""
        stack = self.stack
        line = self.line
        line_no = self.line_no
        started = LEAF if container.kind in _LEAVES_WITH_LINES else NONE
        while started != LEAF:
            self.container_column = self.column
            self.find_next_nonspace()
            if self.blank or (not self.indented and line[self.next_nonspace] not in _MAYBE_SPECIAL):
                self.advance_next_nonspace()
                break
            started = self.try_starts(container)
            if started == CONSUMED:
                return False
            if started == NONE:
                self.advance_next_nonspace()
                break
            container = stack[-1]
        tip = stack[-1]
        if not self.all_closed and not self.blank and _is_paragraph(tip):
            if self.indented and self.ends_paragraph(tip):
                return True
            if tip.para is not None:
                tip.para.append(self.content())
            return False  # a lazy continuation line
        self.close_unmatched()
        kind = container.kind
        if kind == PARA:
            if container.para is not None:
                container.para.append(self.content())
        elif kind == HTML:
            closing = _HTML_KINDS[container.html_kind - 1][1]
            if closing is not None and closing.search(line, self.offset):
                stack.pop()
                if len(stack) == 1:
                    self.out.spans.append(OpenSpan(container.line, line_no, True, container.closer))
        elif kind not in _LEAVES_WITH_LINES and not self.blank:
            text = self.content()
            para = self.add(PARA)
            para.column = self.container_column
            if text.lstrip(" ").startswith("["):
                para.para = [text]
        return False

    def finish(self) -> Outline:
        last = len(self.lines) - 1
        while len(self.stack) > 1:
            self.close_top(last)
        self.out.spans.sort(key=lambda s: s.start)
        return self.out


def atx_text(rest: str) -> str:
    """An ATX heading's text without its optional closing sequence of #s."""
    rest = rest.rstrip(" \t")
    if rest.endswith("#"):
        bare = rest.rstrip("#")
        if not bare or bare[-1] in " \t":
            rest = bare.rstrip(" \t")
    return rest.lstrip(" \t")


def _html_closer(kind: int, text: str) -> str:
    if kind == 1:
        m = re.match(r"<([A-Za-z]+)", text)
        return f"</{(m.group(1) if m else 'pre').lower()}>"
    return _HTML_CLOSERS.get(kind, "")
