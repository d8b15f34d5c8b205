"""The scanner's block structure equals markdown-it-py's (the oracle) on generated documents."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.oracle import oracle_atx_texts, oracle_outline
from vaultops.scan.note import parse_note
from vaultops.scan.outline import scan
from vaultops.scan.text import NoteText, split_lines
from vaultops.store.placement import place

BODIES = [
    "## REQ-a title",
    "## REQ-b",
    "# Top",
    "### sub",
    "###### six",
    "####### seven",
    "##no",
    "## ",
    "#",
    "## REQ-c ##",
    "```",
    "````",
    "~~~",
    "~~~~",
    "```py",
    "``` a`b",
    "~~~ a`b",
    "<!--",
    "-->",
    "<!-- c -->",
    "<div>",
    "</div>",
    "<pre>",
    "</pre>",
    "<a href='x'>",
    "<?php",
    "?>",
    "<![CDATA[",
    "]]>",
    "<!DOCTYPE html>",
    "<span>x</span>",
    "===",
    "---",
    "- - -",
    "***",
    "___",
    "- item",
    "* item",
    "+ item",
    "1. one",
    "2) two",
    "-",
    "- ",
    "-\ttab",
    "10. ten",
    "> q",
    ">",
    "> ## REQ-q",
    "> ```",
    ">> deep",
    "text",
    "REQ-x text",
    "- type: env-check",
    "- status: done @ 2026-01-01",
    "[ref]: /url",
    "[ref]:",
    "[r]: <x> 'title'",
    "'title'",
    "",
    "- ```",
    "- ~~~",
    "1. ```",
    "> - item",
    "- > q",
    "- ## REQ-in-list",
    "* * *",
    "a | b",
    "\\## escaped",
    "    indented",
    "\u00a0## nbsp",
]
PREFIXES = ["", "", "", " ", "  ", "   ", "    ", "\t", "  \t", "      "]

lines_st = st.lists(st.tuples(st.sampled_from(PREFIXES), st.sampled_from(BODIES)), max_size=40)
endings_st = st.sampled_from(["\n", "\r\n", "\r"])


def render(parts: list[tuple[str, str]], ending: str, final: bool) -> str:
    text = ending.join(p + b for p, b in parts)
    if parts and not (parts[-1][0] + parts[-1][1]).strip():
        final = True  # markdown-it drops a blank last line that has no line ending; we keep it
    return text + ending if final and parts else text


def requests_from_oracle(text: str) -> list[tuple[int, int]]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    n = len(split_lines(text))
    heads: list[tuple[int, int, bool, str]] = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.level == 0 and tok.map:
            heads.append((tok.map[0], int(tok.tag[1]), tok.markup.startswith("#"), tokens[i + 1].content))
    out = []
    for j, (line, level, atx, content) in enumerate(heads):
        if level == 2 and atx and content.startswith("REQ-"):
            end = next((h[0] for h in heads[j + 1 :] if h[1] <= 2), n)
            out.append((line, end))
    return out


def requests_from_scanner(text: str) -> list[tuple[int, int]]:
    outline = scan(split_lines(text))
    n = len(split_lines(text))
    heads = outline.headings
    out = []
    for j, h in enumerate(heads):
        if h.level == 2 and h.atx and h.text.startswith("REQ-"):
            end = next((g.line for g in heads[j + 1 :] if g.level <= 2), n)
            out.append((h.line, end))
    return out


@settings(max_examples=settings().max_examples * 4)
@given(lines_st, endings_st, st.booleans())
@example([("", "- a"), ("", ""), ("  ", "```"), ("", "## REQ-x"), ("  ", "```")], "\n", True)
@example([("", "[foo]: /url"), ("", "bar"), ("", "===")], "\r\n", False)
def test_structure_matches_markdown_it(parts: list[tuple[str, str]], ending: str, final: bool) -> None:
    text = render(parts, ending, final)
    outline = scan(split_lines(text))
    headings, items, spans = oracle_outline(text)
    assert [(h.line, h.level) for h in outline.headings] == headings
    assert sorted(outline.items) == items
    assert [(s.start, s.last) for s in outline.spans] == [(a, b - 1) for a, b, _ in spans]
    assert requests_from_scanner(text) == requests_from_oracle(text)
    assert [(h.line, h.text) for h in outline.headings if h.atx] == oracle_atx_texts(text)


@settings()
@given(lines_st, endings_st)
def test_bom_is_not_content(parts: list[tuple[str, str]], ending: str) -> None:
    text = render(parts, ending, True)
    note = NoteText.from_bytes(("\ufeff" + text).encode())
    assert note.has_bom
    assert [(h.line, h.level) for h in scan(note.lines).headings] == oracle_outline(text)[0]


@settings(max_examples=settings().max_examples * 4)
@given(lines_st, endings_st, st.data())
def test_inserted_status_line_lands_at_top_level(
    parts: list[tuple[str, str]], ending: str, data: st.DataObject
) -> None:
    """Wherever the writer inserts (after the last non-blank line of a block that ends at a heading of
    level 1 or 2, or at the end), what ``place`` adds makes the inserted line a top-level list item, and
    every top-level heading after it survives."""
    text = render(parts, ending, True)
    note = parse_note("n.md", text.encode())
    lines = note.lines
    ends = [h.line for h in note.outline.headings if h.level <= 2] + [len(lines)]
    end = data.draw(st.sampled_from(ends))
    k = end - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    if k < 0:
        return
    status = "- status: done @ 2026-01-01T00:00:00+00:00"
    edit = place(note, k, [status])
    new_lines = lines[: k + 1] + list(edit.lines) + lines[k + 1 :]
    # markdown-it knows no frontmatter; Obsidian (and vaultops) do: show the oracle blank lines instead
    shown = [""] * note.body_start + new_lines[note.body_start :]
    headings, items, _ = oracle_outline("\n".join(shown) + "\n")
    status_line = k + 1 + list(edit.lines).index(status)
    assert status_line in items
    shift = len(edit.lines)
    before = [(h.line + shift, h.level) for h in note.outline.headings if h.line > k]
    assert [h for h in headings if h[0] > k + shift] == before


INBOX_BODIES = [
    "## REQ-a title",
    "# Top",
    "### Result — 2026-05-04 08:31 — hermes",
    "- type: env-check",
    "- status: done",
    "- locked-by: a @ t (h, claim 1)",
    "text",
    "more text",
    "",
    "~~~text",
    "~~~",
    "```",
    "````",
    "- ",
    "-",
    "- [ ] task",
    "#tag",
    "1. one",
    "> q",
    "<!-- c -->",
    "---",
    "===",
    "    code",
    "  - nested",
    "\tx",
]


@settings(max_examples=settings().max_examples * 4)
@given(
    st.lists(
        st.tuples(st.sampled_from(["", "", "", " ", "  ", "    "]), st.sampled_from(INBOX_BODIES)),
        max_size=60,
    )
)
def test_fast_path_equals_general_path(parts: list[tuple[str, str]]) -> None:
    lines = [p + b for p, b in parts]
    assert scan(lines) == scan(lines, fast=False)
