"""``vaultops link-chat`` sets one key of a person's ``local.toml`` and keeps every other byte: the comments,
the other tables, the order, the line ends.  A file it cannot edit so is refused, never guessed at."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vaultops.base.toml_edit import CannotEdit, set_list

TABLE = ("notify", "telegram")


def edited(text: str, values: list[int]) -> str:
    return set_list(text, TABLE, "chat_ids", values)


def test_a_missing_file_gets_the_table() -> None:
    assert edited("", [4242]) == "[notify.telegram]\nchat_ids = [4242]\n"


def test_the_key_goes_under_its_table_and_nothing_else_moves() -> None:
    text = '# this machine\n[notify.telegram]\ntoken = "1:AA"   # secret\n\n[inbox]\nsettle = 0 # fast\n'
    after = edited(text, [4242, -100])
    assert after == (
        '# this machine\n[notify.telegram]\nchat_ids = [4242, -100]\ntoken = "1:AA"   # secret\n\n'
        "[inbox]\nsettle = 0 # fast\n"
    )


def test_an_existing_list_is_replaced_in_place_with_its_comment() -> None:
    text = '[notify.telegram]\n  chat_ids = [1,\n    2,  # old\n  ]   # who is told\ntoken = "x"\n'
    after = edited(text, [1, 2, 3])
    assert after == '[notify.telegram]\n  chat_ids = [1, 2, 3]   # who is told\ntoken = "x"\n'


def test_crlf_line_ends_stay_crlf() -> None:
    text = "[inbox]\r\nsettle = 0\r\n"
    assert edited(text, [7]) == "[inbox]\r\nsettle = 0\r\n\r\n[notify.telegram]\r\nchat_ids = [7]\r\n"


def test_a_file_without_a_final_newline_gets_one_before_the_table() -> None:
    assert edited("[inbox]\nsettle = 0", [7]) == "[inbox]\nsettle = 0\n\n[notify.telegram]\nchat_ids = [7]\n"


def test_strings_are_written_as_toml_reads_them() -> None:
    after = set_list("", ("notify", "zulip"), "senders", ["ann@example.org", 'b"o\\b@example.org'])
    assert tomllib.loads(after)["notify"]["zulip"]["senders"] == ["ann@example.org", 'b"o\\b@example.org']


@pytest.mark.parametrize(
    "text",
    [
        "notify.telegram.chat_ids = [1]\n",  # a dotted key at the top
        '[notify]\ntelegram = { token = "1:AA" }\n',  # an inline table cannot take another key
        "[notify]\ntelegram.chat_ids = [1]\n",
        "[notify.telegram\n",  # not TOML at all
    ],
)
def test_a_file_a_line_edit_cannot_change_safely_is_refused(text: str) -> None:
    with pytest.raises(CannotEdit):
        edited(text, [4242])


# --- any file: the key is set, every other line is kept ----------------------------------------------

_bare = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(lambda k: k != "chat_ids")
_scalar = st.one_of(
    st.integers(-(2**40), 2**40).map(str),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=8).map(
        lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    ),
    st.sampled_from(["true", "false", "1.5", "[1, 2]", '["a#b", "c"]', "[\n  1,\n  2,\n]"]),
)
_comment = st.sampled_from(["", "  # a comment", " # chat_ids = [9]", "\t#"])
_line = st.one_of(
    st.tuples(_bare, _scalar, _comment).map(lambda t: f"{t[0]} = {t[1]}{t[2]}"),
    st.sampled_from(["", "# notes of mine", "   ", "# [notify.telegram]"]),
)


@st.composite
def toml_files(draw: st.DrawFn) -> str:
    """A local.toml as a person writes it: comments, blank lines, tables in any order (the telegram table
    among them or not, with chat_ids or not), a final newline or not, LF or CRLF."""
    head = [draw(_line) for _ in range(draw(st.integers(0, 3)))]
    names = draw(st.lists(st.sampled_from(["inbox", "notify", "notify.telegram", "profiles.x", "git"]),
                          unique=True, max_size=4))  # fmt: skip
    blocks = []
    for name in names:
        keys = draw(st.lists(_bare, unique=True, max_size=3))
        body = [f"{k} = {draw(_scalar)}{draw(_comment)}" for k in keys]
        if name == "notify.telegram" and draw(st.booleans()):
            ids = draw(st.lists(st.integers(-(10**12), 10**12), max_size=3))
            spot = draw(st.integers(0, len(body)))
            body.insert(spot, f"{draw(st.sampled_from(['', '  ']))}chat_ids = {ids}{draw(_comment)}")
        header = f"[{name}]" + draw(st.sampled_from(["", "  # mine"]))
        blocks.append("\n".join([header, *body, *([""] if draw(st.booleans()) else [])]))
    text = "\n".join([*head, *blocks])
    text += "\n" if draw(st.booleans()) else ""
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text


def _valid(text: str) -> bool:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(toml_files(), st.lists(st.integers(-(10**13), 10**13), min_size=1, max_size=4))
@example('[notify.telegram] # mine\nchat_ids = [1] # old\ntoken = "a # b"\n', [1, 2])
@example('a = "x"\n[notify.telegram]\n', [3])
def test_any_file_keeps_every_other_line_and_reads_back_with_the_new_list(text: str, ids: list[int]) -> None:
    if not _valid(text):
        return  # a drawn key repeated across the head and a table: not a file anyone has
    before = tomllib.loads(text)
    notify = before.get("notify", {})
    if not isinstance(notify, dict) or not isinstance(notify.get("telegram", {}), dict):
        with pytest.raises(CannotEdit):  # `notify = 5`: there is no table to put it in
            edited(text, ids)
        return
    after = edited(text, ids)
    read = tomllib.loads(after)
    assert read["notify"]["telegram"]["chat_ids"] == ids
    read["notify"]["telegram"].pop("chat_ids")
    before.setdefault("notify", {}).setdefault("telegram", {}).pop("chat_ids", None)
    assert read == before  # nothing else changed in meaning
    # and in bytes: every line of the old file that held no chat_ids is still there, in order
    kept = [line for line in text.splitlines(keepends=True) if "chat_ids" not in line.split("#")[0]]
    lines = iter(after.splitlines(keepends=True))
    assert all(any(line == other or line.rstrip("\r\n") == other.rstrip("\r\n") for other in lines)
               for line in kept)  # fmt: skip
    assert after.count("\r\n") >= text.count("\r\n")
    assert edited(after, ids) == after  # setting it again changes nothing
