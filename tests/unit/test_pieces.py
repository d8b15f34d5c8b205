"""A note parsed piece by piece, with each unchanged piece's parse reused, is the note parsed whole; and
``vaultops status``'s rows kept per piece are the rows it would compute afresh.  A damaged or stale kept
value is never believed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vaultops.commands import status
from vaultops.scan.note import ParsedNote, parse_note
from vaultops.scan.pieces import PieceParse, cut, parse_note_cached
from vaultops.store import kept
from vaultops.vault import Vault

REPO = Path(__file__).resolve().parents[2]

# Lines a note is made of: request blocks and what the daemon writes under them, and the markdown that
# may hide a heading (fences, HTML blocks, lists, quotes, setext underlines, frontmatter).
LINES = [
    "## REQ-a Check the disk",
    "## REQ-b",
    "## REQ-a duplicate of the first",
    "## REQ-bad!id",
    "# REQ-level-one",
    "# Top",
    "## Notes",
    "##",
    "### Result — 2026-05-02 08:31 — hermes-coo",
    "### sub",
    "- type: env-check",
    "- type: truth-audit",
    "- ready: yes",
    "- from: cowork-hq",
    "Is git installed? `which git`",
    "Rotate the stripe secret key and update the env file.",
    "- locked-by: hermes-coo @ 2026-05-02T08:31:02+10:00 (vps1, claim 000001)",
    "- status: running @ 2026-05-02T08:31:02+10:00",
    "- status: done @ 2026-05-02T08:31:02+10:00",
    "- status: escalated @ 2026-05-04T08:31:02+10:00 — blocked: key or token rotation; not run",
    "- status: error @ 2026-05-04T08:31:02+10:00 — it failed",
    "- outcome: done · env-check · light · routine · direct · 0.4 s",
    "- decision: approve",
    "- retry: yes",
    "```",
    "~~~",
    "~~~text",
    "<!--",
    "-->",
    "<div>",
    "</div>",
    "> quoted",
    "> ## REQ-in-quote",
    "- item",
    "  continued",
    "    indented",
    "REQ-setext",
    "---",
    "===",
    "[ref]: /url",
    "<<<<<<< ours",
    "=======",
    ">>>>>>> theirs",
    "text with \0 a NUL",
    "",
    "",
    "",
]
lines_st = st.lists(st.sampled_from(LINES), max_size=60)
edit_st = st.tuples(
    st.sampled_from(["insert", "delete", "replace"]), st.integers(0, 10_000), st.sampled_from(LINES)
)


def render(lines: list[str], ending: str, *, bom: bool = False, bad_byte: int | None = None) -> bytes:
    raw = (ending.join(lines) + (ending if lines else "")).encode()
    if bom:
        raw = b"\xef\xbb\xbf" + raw
    if bad_byte is not None and raw:
        at = bad_byte % len(raw)
        raw = raw[:at] + b"\xff" + raw[at:]
    return raw


def edited(lines: list[str], edits: list[tuple[str, int, str]]) -> list[str]:
    out = list(lines)
    for kind, where, line in edits:
        at = where % (len(out) + 1)
        if kind == "insert" or not out:
            out.insert(at, line)
        elif kind == "delete":
            del out[at % len(out)]
        else:
            out[at % len(out)] = line
    return out


def same(a: ParsedNote, b: ParsedNote) -> None:
    assert b.requests == a.requests
    assert b.outline.headings == a.outline.headings
    assert b.outline.items == a.outline.items
    assert b.outline.spans == a.outline.spans
    assert (b.body_start, b.frontmatter, b.frontmatter_error) == (
        a.body_start,
        a.frontmatter,
        a.frontmatter_error,
    )
    assert b.conflict_line == a.conflict_line
    assert b.text == a.text


@settings(max_examples=settings().max_examples * 3, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines_st,
    st.lists(edit_st, max_size=6),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
    st.sampled_from([1, 2, 3]),
    st.booleans(),
    st.one_of(st.none(), st.integers(0, 10_000)),
    st.booleans(),
)
@example(["## REQ-a", "```", "## REQ-b", "x", "## REQ-c", "y"], [], "\n", False, 1, True, None, False)
@example(["```", "## REQ-a Check the disk"], [], "\n", False, 1, False, None, False)
@example(["---", "# comment", "a: 1", "---", "## REQ-a", "x"], [], "\n", False, 1, True, None, False)
@example(["## REQ-a", "x", "## REQ-b", "y"], [("replace", 3, "<div>")], "\n", False, 1, True, 5, True)
def test_cached_parse_is_the_fresh_parse(
    lines: list[str],
    edits: list[tuple[str, int, str]],
    ending: str,
    frontmatter: bool,
    spread: int,
    full: bool,
    bad_byte: int | None,
    bom: bool,
) -> None:
    head = ["---", "title: inbox", "---"] if frontmatter else []
    cache: dict[str, object] = {}
    for version in (lines, lines, edited(lines, edits), edited(lines, edits[:1]), lines):
        raw = render(head + version, ending, bom=bom, bad_byte=bad_byte)
        fresh = parse_note("inbox.md", raw, full=full)
        same(fresh, parse_note_cached("inbox.md", raw, cache, full=full, spread=spread))


def test_each_heading_line_can_start_a_piece() -> None:
    raw = b"# Inbox\n\n## REQ-a\nx\n## REQ-b\ny\n### Result\n"
    assert [p.start for p in cut(raw, 1)] == [0, raw.index(b"## REQ-a"), raw.index(b"## REQ-b")]
    # by default only some of them do, chosen by their text: the same lines wherever they stand
    many = b"".join(b"## REQ-%d\nx\n\n" % i for i in range(2000))
    moved = b"# new\n\n" + many
    starts = {many[p.start : many.index(b"\n", p.start)] for p in cut(many)[1:]}
    shifted = {moved[p.start : moved.index(b"\n", p.start)] for p in cut(moved)[1:]}
    assert 20 < len(starts) < 200 and starts == shifted


def _note(n: int) -> bytes:
    blocks = [
        f"## REQ-{i} Check {i}\n- type: env-check\nIs git installed?\n"
        + ("- status: done @ 2026-05-02T08:31:02+10:00\n" if i % 3 else "")
        + "\n"
        for i in range(n)
    ]
    return ("# Inbox\n\n" + "".join(blocks)).encode()


def test_a_damaged_or_stale_cache_entry_is_not_believed() -> None:
    raw = _note(30)
    fresh = parse_note("inbox.md", raw)
    cache: dict[str, object] = {}
    same(fresh, parse_note_cached("inbox.md", raw, cache, spread=1))
    entries = list(cache.values())
    assert entries and all(isinstance(e, PieceParse) for e in entries)
    # each key given another piece's parse (what a stale or misfiled entry would be)
    keys = list(cache)
    cache = dict(zip(keys, entries[1:] + entries[:1], strict=True))
    same(fresh, parse_note_cached("inbox.md", raw, cache, spread=1))
    # garbage, and a parse made for another note or for skeletons
    for bad in ("garbage", None, 42, ["list"]):
        same(fresh, parse_note_cached("inbox.md", raw, dict.fromkeys(keys, bad), spread=1))
    cache = {}
    parse_note_cached("other.md", raw, cache, spread=1)
    same(fresh, parse_note_cached("inbox.md", raw, cache, spread=1))
    cache = {}
    parse_note_cached("inbox.md", raw, cache, full=False, spread=1)
    same(fresh, parse_note_cached("inbox.md", raw, cache, full=True, spread=1))


# --- status's rows, kept per piece ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    import shutil

    root = tmp_path_factory.mktemp("pieces") / "v"
    shutil.copytree(REPO / "vault-template", root)
    return Vault.open(root)


def fresh_rows(vault: Vault, raw: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    return status._rows_of(parse_note("_System/COO-Inbox.md", raw, full=True), vault)


def kept_rows(vault: Vault, raw: bytes, spread: int = 1) -> tuple[list[dict[str, Any]], list[str]]:
    return status._piece_rows(vault, "_System/COO-Inbox.md", raw, spread)


def kept_file(vault: Vault) -> Path:
    return kept.path_for(vault.state_dir, f"status-{status.__version__}", "_System/COO-Inbox.md")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines_st, st.lists(st.lists(edit_st, max_size=4), max_size=4), st.sampled_from([1, 2]))
@example(["## REQ-a", "x", "## REQ-a", "y"], [], 1)
def test_status_rows_kept_per_piece_are_the_fresh_rows(
    vault: Vault, lines: list[str], rounds: list[list[tuple[str, int, str]]], spread: int
) -> None:
    kept_file(vault).unlink(missing_ok=True)
    version = lines
    for edits in [[], [], *rounds]:
        version = edited(version, edits)
        raw = render(["# Inbox", "", *version], "\n")
        assert kept_rows(vault, raw, spread) == fresh_rows(vault, raw)


def test_status_ignores_a_damaged_kept_file(vault: Vault) -> None:
    raw = render(["# Inbox", "", "## REQ-a", "- type: env-check", "Is git installed?", "## REQ-b", "x"], "\n")
    want = fresh_rows(vault, raw)
    path = kept_file(vault)
    path.unlink(missing_ok=True)
    assert kept_rows(vault, raw) == want
    good = path.read_bytes()
    doc = kept.load(path)
    assert doc["pieces"]
    # one byte changed anywhere: the file's hash no longer matches, and everything is parsed again
    for at in (0, len(kept.MAGIC) + 3, len(good) - 1):
        path.write_bytes(good[:at] + bytes([good[at] ^ 1]) + good[at + 1 :])
        assert kept.load(path) == {}
        assert kept_rows(vault, raw) == want
    path.write_bytes(good[: len(good) // 2])
    assert kept.load(path) == {} and kept_rows(vault, raw) == want
    # a well-formed file whose entries lie (another piece's rows, wrong shapes) is not believed either
    pieces = doc["pieces"]
    keys = list(pieces)
    values = [pieces[k] for k in keys]
    swapped = dict(zip(keys, values[1:] + values[:1], strict=True))
    wrong_rows = {k: [k, v[1], [{"id": "REQ-forged"}], v[3]] for k, v in pieces.items()}
    wrong_lines = {k: [k, -1, v[2], v[3]] for k, v in pieces.items()}
    for bad in (swapped, wrong_rows, wrong_lines, dict.fromkeys(keys, "garbage")):
        kept.save(path, {"pieces": bad, "classes": {}})
        assert kept_rows(vault, raw) == want


def test_status_keeps_rows_per_piece_and_says_the_same(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "v"
    shutil.copytree(REPO / "vault-template", root)
    v = Vault.open(root)
    inbox = root / "_System" / "COO-Inbox.md"
    inbox.write_bytes(_note(400))
    first = status.request_rows(v)
    assert kept_file(v).exists()
    with inbox.open("a") as fh:
        fh.write("## REQ-new\n- type: env-check\nIs nginx running?\n")
    second = status.request_rows(v)
    assert second[0][: len(first[0])] == first[0] and second[0][-1]["id"] == "REQ-new"
    kept_file(v).unlink()
    assert status.request_rows(v) == second
