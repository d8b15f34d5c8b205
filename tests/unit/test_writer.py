"""The note writer inserts lines and never loses one, even when the person edits between read and write."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from vaultops.base import faults
from vaultops.base.errors import UnsafePath, VaultopsError
from vaultops.config import Config
from vaultops.model import State, Target
from vaultops.scan.note import parse_note
from vaultops.scan.text import split_lines
from vaultops.store.inserts import Insert, edits_for
from vaultops.store.notes import TEMP_SUFFIX, NoteWriter, splice
from vaultops.vault import Vault

LINES = [
    "## REQ-a first",
    "## REQ-b second",
    "## REQ-c third",
    "# Top",
    "### sub",
    "text",
    "more text",
    "",
    "- type: env-check",
    "- from: me",
    "```",
    "~~~",
    "<!--",
    "-->",
    "> quote",
    "    code",
    "  indented",
    "Setext",
    "---",
    "===",
    "- item",
    "1. one",
    "<div>",
    "[ref]: /url",
    "## REQ-a again",
]
ENDINGS = ["\n", "\r\n", "\r"]


@st.composite
def notes(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.sampled_from(LINES), max_size=30))
    if not any(line.startswith("## REQ-") for line in lines):
        lines = ["## REQ-a first", "text", *lines]
    ending = draw(st.sampled_from(ENDINGS))
    text = ending.join(lines) + (ending if draw(st.booleans()) else "")
    raw = text.encode()
    if draw(st.booleans()):
        raw = b"\xef\xbb\xbf" + raw
    if draw(st.booleans()):
        raw = raw.replace(b"text", b"te\xffxt", 1)  # an undecodable byte must survive byte for byte
    return raw


def vault_at(tmp: Path) -> Vault:
    (tmp / "_System").mkdir(parents=True, exist_ok=True)
    return Vault(tmp.resolve(), Config())


def is_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(any(line == other for other in it) for line in small)


@settings(max_examples=settings().max_examples * 2)
@given(
    original=notes(), edit=st.sampled_from(["none", "append", "prepend-text", "new-request"]), data=st.data()
)
def test_insertions_keep_every_line_of_both_sides(
    tmp_path_factory: pytest.TempPathFactory, original: bytes, edit: str, data: st.DataObject
) -> None:
    tmp = tmp_path_factory.mktemp("w")
    vault = vault_at(tmp)
    path = tmp / "_System" / "COO-Inbox.md"
    path.write_bytes(original)
    first = parse_note("_System/COO-Inbox.md", original)
    ids = sorted({r.id for r in first.requests})
    assume(ids)
    chosen = data.draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3, unique=True))
    inserts = [
        Insert(Target(rid), (f"- status: done @ 2026-01-01T00:00:00+00:00 — ours {rid}",), frozenset(State))
        for rid in chosen
    ]
    person: dict[str, bytes] = {}

    def persons_edit() -> None:
        faults.on("write.before_check", None)
        current = path.read_bytes()
        if edit == "append":
            current += b"\n## REQ-new typed meanwhile\nplease check\n"
        elif edit == "prepend-text":
            bom = b"\xef\xbb\xbf" if current.startswith(b"\xef\xbb\xbf") else b""
            current = bom + b"A line the person typed\n\n" + current[len(bom) :]
        elif edit == "new-request":
            current = current.replace(b"## REQ-", b"## REQ-z inserted\nnew text\n\n## REQ-", 1)
        path.write_bytes(current)
        person["raw"] = current

    if edit != "none":
        faults.on("write.before_check", persons_edit)
    try:
        result = NoteWriter(vault).apply("_System/COO-Inbox.md", lambda n: edits_for(n, inserts))
    finally:
        faults.on("write.before_check", None)
    final = path.read_bytes()
    base = person.get("raw", original)
    assert is_subsequence(
        split_lines(base.decode("utf-8", "surrogateescape")),
        split_lines(final.decode("utf-8", "surrogateescape")),
    )
    assert final.startswith(base[:3]) if base.startswith(b"\xef\xbb\xbf") else True
    if b"te\xffxt" in base:
        assert b"te\xffxt" in final
    parsed = parse_note("_System/COO-Inbox.md", final)
    still_there = {r.id for r in parse_note("_System/COO-Inbox.md", base).requests}
    for rid in chosen:
        ours = f"ours {rid}"
        if rid in still_there:  # the person's edit may itself have turned a request into plain text
            request = next(r for r in parsed.requests if r.id == rid)
            assert any(s.reason == ours for s in request.statuses), (rid, final)
        else:
            assert ours.encode() not in final
    assert result.changed == any(rid in still_there for rid in chosen)
    assert not list(path.parent.glob("*" + TEMP_SUFFIX))


def test_splice_keeps_every_byte_in_order() -> None:
    raw = b"a\r\nb\rc"
    out = splice(raw, "\r\n", [])
    assert out == raw
    note = parse_note("x.md", raw)
    from vaultops.store.placement import Edit

    out = splice(raw, note.text.newline, [Edit(2, ("- new",))])
    assert out == b"a\r\nb\rc\r\n- new\r\n"


def test_inserted_lines_end_like_the_line_before_them() -> None:
    """Regression: after a lone CR, an inserted blank line that starts with LF fused into one CRLF."""
    from vaultops.store.placement import Edit

    out = splice(b"## REQ-a\ntext\r<div>\r", "\n", [Edit(2, ("", "- status: done"))])
    assert out == b"## REQ-a\ntext\r<div>\r\r- status: done\r"
    [request] = parse_note("x.md", out).requests
    assert request.state is State.DONE


@given(
    st.lists(st.sampled_from(["x", "", "## REQ-a", "- status: done"]), max_size=6),
    st.lists(st.sampled_from(["- one", "", "## h"]), min_size=1, max_size=3),
    st.sampled_from(["\n", "\r\n"]),
)
def test_lines_put_before_the_first_line_are_there_once(
    existing: list[str], lines: list[str], newline: str
) -> None:
    """Regression: lines inserted before the first line (a new daily note made from its template) were
    written twice on a note with LF endings, and a new daily note held everything twice."""
    from vaultops.store.placement import Edit

    raw = "".join(f"{line}{newline}" for line in existing).encode()
    out = splice(raw, newline, [Edit(-1, tuple(lines))])
    assert out == "".join(f"{line}{newline}" for line in [*lines, *existing]).encode()


def test_refuses_paths_outside_the_vault(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("## REQ-x\ntext\n")
    vault_dir = tmp_path / "vault"
    vault = vault_at(vault_dir)
    (vault_dir / "link.md").symlink_to(outside)
    writer = NoteWriter(vault)
    with pytest.raises(UnsafePath):
        writer.apply("link.md", lambda n: [])
    with pytest.raises(UnsafePath):
        writer.apply("../outside.md", lambda n: [])
    with pytest.raises(UnsafePath):
        writer.apply(str(outside), lambda n: [])
    assert outside.read_text() == "## REQ-x\ntext\n"


def test_writes_through_a_symlink_inside_the_vault(tmp_path: Path) -> None:
    vault = vault_at(tmp_path)
    real = tmp_path / "notes" / "inbox.md"
    real.parent.mkdir()
    real.write_text("## REQ-a\ntext\n")
    (tmp_path / "_System" / "COO-Inbox.md").symlink_to(real)
    inserts = [Insert(Target("REQ-a"), ("- status: done @ t",), frozenset(State))]
    NoteWriter(vault).apply("_System/COO-Inbox.md", lambda n: edits_for(n, inserts))
    assert (tmp_path / "_System" / "COO-Inbox.md").is_symlink()
    assert real.read_text() == "## REQ-a\ntext\n- status: done @ t\n"


def test_backups_rotate(tmp_path: Path) -> None:
    vault = vault_at(tmp_path)
    path = tmp_path / "_System" / "COO-Inbox.md"
    path.write_text("## REQ-a\ntext\n")
    writer = NoteWriter(vault)
    writer.backups.keep = 3
    for i in range(6):
        inserts = [Insert(Target("REQ-a"), (f"- note {i}",), frozenset(State))]
        writer.apply("_System/COO-Inbox.md", lambda n, ins=inserts: edits_for(n, ins))
    kept = sorted(writer.backups.folder("_System/COO-Inbox.md").glob("*.md"))
    assert len(kept) == 3
    assert kept[-1].read_text().count("- note") == 5


def _rewritten_by_checkout(path: Path, text: str, after: float = 0.0) -> None:
    """What git's checkout does to a file it updates: remove it, then write the new version."""
    import threading

    path.unlink()
    if after:
        threading.Timer(after, path.write_text, args=(text,)).start()
    else:
        path.write_text(text)


@pytest.mark.parametrize("point", ["write.before_check", "write.before_replace"])
def test_a_note_rewritten_by_gits_checkout_during_a_write_is_read_again(tmp_path: Path, point: str) -> None:
    vault = vault_at(tmp_path)
    path = tmp_path / "_System" / "COO-Inbox.md"
    path.write_text("## REQ-a\ntext\n")
    inserts = [Insert(Target("REQ-a"), ("- status: done @ t",), frozenset(State))]
    checkouts = iter([lambda: _rewritten_by_checkout(path, "## REQ-a\ntext\n\n## REQ-b\npulled\n")])
    faults.on(point, lambda: next(checkouts, lambda: None)())
    try:
        result = NoteWriter(vault).apply("_System/COO-Inbox.md", lambda n: edits_for(n, inserts))
    finally:
        faults.on(point, None)
    assert result.attempts == 2
    assert path.read_text() == "## REQ-a\ntext\n- status: done @ t\n\n## REQ-b\npulled\n"


def test_a_note_that_vanishes_at_the_last_moment_is_not_recreated_by_the_writer(tmp_path: Path) -> None:
    """git's checkout creates the file anew once it removed it; a writer that put its own copy there
    meanwhile would make the checkout fail.  The writer reads again, and says the note is gone."""
    vault = vault_at(tmp_path)
    path = tmp_path / "_System" / "COO-Inbox.md"
    path.write_text("## REQ-a\ntext\n")
    inserts = [Insert(Target("REQ-a"), ("- status: done @ t",), frozenset(State))]
    faults.on("write.before_replace", lambda: path.unlink() if path.exists() else None)
    try:
        with pytest.raises(VaultopsError, match="does not exist"):
            NoteWriter(vault).apply("_System/COO-Inbox.md", lambda n: edits_for(n, inserts))
    finally:
        faults.on("write.before_replace", None)
    assert not path.exists()


def test_a_note_that_vanishes_while_read_is_looked_for_again(tmp_path: Path) -> None:
    vault = vault_at(tmp_path)
    path = tmp_path / "_System" / "COO-Inbox.md"
    path.write_text("## REQ-a\ntext\n")
    once = iter([lambda: _rewritten_by_checkout(path, "## REQ-a\nnew text\n", after=0.005)])
    faults.on("note.before_read", lambda: next(once, lambda: None)())
    try:
        note = NoteWriter(vault).read("_System/COO-Inbox.md")
    finally:
        faults.on("note.before_read", None)
    assert note is not None and "new text" in note.raw.decode()
