"""markdown-it-py as the oracle for the scanner's block structure."""

from __future__ import annotations

from markdown_it import MarkdownIt

_MD = MarkdownIt("commonmark")


def oracle_atx_texts(text: str) -> list[tuple[int, str]]:
    """(line, text) of every top-level ATX heading."""
    tokens = _MD.parse(text)
    return [
        (tok.map[0], tokens[i + 1].content)
        for i, tok in enumerate(tokens)
        if tok.type == "heading_open" and tok.level == 0 and tok.map and tok.markup.startswith("#")
    ]


def oracle_outline(text: str) -> tuple[list[tuple[int, int]], list[int], list[tuple[int, int, str]]]:
    """(top-level headings as (line, level), top-level bullet item lines, top-level fence/html spans)."""
    tokens = _MD.parse(text)
    headings: list[tuple[int, int]] = []
    items: list[int] = []
    spans: list[tuple[int, int, str]] = []
    list_stack: list[str] = []
    for tok in tokens:
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            list_stack.append(tok.type)
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            list_stack.pop()
        elif tok.type == "heading_open" and tok.level == 0:
            assert tok.map is not None
            headings.append((tok.map[0], int(tok.tag[1])))
        elif tok.type == "list_item_open" and tok.level == 1 and list_stack[-1] == "bullet_list_open":
            assert tok.map is not None
            items.append(tok.map[0])
        elif tok.type in ("fence", "html_block") and tok.level == 0:
            assert tok.map is not None
            spans.append((tok.map[0], tok.map[1], tok.type))
    return headings, items, spans
