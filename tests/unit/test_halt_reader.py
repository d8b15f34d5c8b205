"""The kill switch's reader (``decide.halt``): a ``halt`` property as a person types it on a phone, read
forgivingly, failing closed; and kept whole when vaultops redraws the dashboard note."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultops.base.claude_code import stream_session
from vaultops.decide.halt import (
    OFF,
    ON,
    Halted,
    carry_halt,
    chat_lines,
    frontmatter_lines,
    marked,
    person_changed,
    read_halt,
    with_lines,
)
from vaultops.notify.replies import parse_reply, writable
from vaultops.render.dashboard import Fleet, render_dashboard

DASHBOARD = "---\nvaultops: vaultops dashboard\nrunning: 2\n{props}---\n# vaultops\n"


def note(*props: str) -> str:
    return DASHBOARD.format(props="".join(f"{p}\n" for p in props))


@pytest.mark.parametrize(
    "line",
    [
        "halt: yes",
        "Halt: Yes",
        "HALT: TRUE",
        "halt: true",
        "halt: on",
        "halt: 'yes'",
        'halt: "stop"',
        "halt:  y",
    ],
)
def test_a_yes_in_any_spelling_halts(line: str) -> None:
    assert read_halt(note(line)).halted


@pytest.mark.parametrize("line", ["halt: no", "Halt: No", "halt: false", "halt: off", "halt:", "halt: ''"])
def test_a_no_or_an_empty_value_does_not(line: str) -> None:
    assert not read_halt(note(line)).halted


def test_no_property_no_frontmatter_and_an_unclosed_one_do_not_halt() -> None:
    assert not read_halt(note()).halted
    assert not read_halt("# vaultops\nhalt: yes\n").halted  # in the body: not a property
    assert not read_halt("---\nhalt: yes\n# never closed\n").halted


def test_the_reason_comes_from_halt_reason_or_after_the_yes() -> None:
    assert read_halt(note("halt: yes", "halt_reason: it deletes files")).reason == "it deletes files"
    assert read_halt(note("Halt: yes, it deletes files")).reason == "it deletes files"
    assert read_halt(note("halt: yes — runaway costs")).reason == "runaway costs"
    assert read_halt(note("halt reason: typed with a space", "halt: yes")).reason == "typed with a space"
    assert read_halt(note("halt: no", "halt_reason: old")).reason == ""


def test_a_value_neither_yes_nor_no_halts_and_is_the_reason() -> None:
    """A kill switch fails closed: ``halt: please`` is a halt, and says what it read."""
    mark = read_halt(note("halt: please everything"))
    assert mark.halted and mark.reason == "please everything"


def test_a_list_value_and_a_broken_yaml_elsewhere_still_halt() -> None:
    assert read_halt(note("halt:", "  - yes")).halted
    assert read_halt(note("tags: [unclosed", "halt: yes: now")).halted


def test_two_halt_lines_halt_if_either_says_yes_and_the_line_is_the_yes() -> None:
    text = note("halt: no", "Halt: yes")
    mark = read_halt(text)
    assert mark.halted
    assert mark.line is not None and text.split("\n")[mark.line] == "Halt: yes"


def test_the_persons_lines_are_kept_verbatim_in_order() -> None:
    mark = read_halt(note("Halt: Yes", "running: 3", "halt_reason: 'runaway'"))
    assert mark.kept == ("Halt: Yes", "halt_reason: 'runaway'")


def fleet(kept: tuple[str, ...], halt: Halted | None = None) -> Fleet:
    return Fleet(
        now=datetime(2026, 3, 2, 9).astimezone(), inbox="i.md", machine_folder="m", halt=halt, kept=kept
    )


def test_a_redraw_keeps_the_halt_and_says_who_and_why() -> None:
    text = note("halt: yes", "halt_reason: runaway agent")
    mark = read_halt(text)
    drawn = render_dashboard(fleet(mark.kept, Halted(mark.reason, "Person")))
    again = read_halt(drawn)
    assert again.halted and again.reason == "runaway agent"
    assert "HALTED by Person: runaway agent" in drawn
    assert drawn.split("\n")[again.line or 0] == "halt: yes"  # the line itself, for git blame


# --- properties ---------------------------------------------------------------------------------------

KEYS = st.sampled_from(["halt", "Halt", "HALT", "hAlT"])
SPELL = st.sampled_from([str.lower, str.upper, str.title])
QUOTE = st.sampled_from(["{}", "'{}'", '"{}"'])
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=80)
OTHER = st.lists(
    st.from_regex(r"[a-z_]{1,12}: [A-Za-z0-9 .,]{0,20}", fullmatch=True).filter(
        lambda line: not line.lower().replace("_", "").startswith("halt")
    ),
    max_size=5,
)


@given(key=KEYS, word=st.sampled_from(sorted(ON)), spell=SPELL, quote=QUOTE, before=OTHER, after=OTHER)
def test_any_yes_word_halts_wherever_the_line_is(
    key: str, word: str, spell: object, quote: str, before: list[str], after: list[str]
) -> None:
    value = quote.format(spell(word))  # type: ignore[operator]
    assert read_halt(note(*before, f"{key}: {value}", *after)).halted


@given(key=KEYS, word=st.sampled_from(sorted(OFF)), spell=SPELL, quote=QUOTE, before=OTHER, after=OTHER)
def test_any_no_word_resumes(
    key: str, word: str, spell: object, quote: str, before: list[str], after: list[str]
) -> None:
    value = quote.format(spell(word))  # type: ignore[operator]
    assert not read_halt(note(*before, f"{key}: {value}", *after)).halted


@given(TEXT)
def test_the_reader_never_raises(text: str) -> None:
    mark = read_halt(text)
    assert mark.halted in (True, False)
    assert mark.reason == "" or mark.halted


@given(reason=st.from_regex(r"[A-Za-z][A-Za-z0-9 ,.]{0,40}", fullmatch=True), others=OTHER)
def test_a_redraw_never_loses_a_halt_nor_its_reason(reason: str, others: list[str]) -> None:
    mark = read_halt(note(*others, "halt: yes", f"halt_reason: {reason}"))
    again = read_halt(render_dashboard(fleet(mark.kept, Halted(mark.reason, "P"))))
    assert again.halted and again.reason == mark.reason == reason.strip()


@given(body=TEXT)
def test_text_after_the_frontmatter_changes_nothing(body: str) -> None:
    assert read_halt(note("halt: yes") + body).halted
    assert not read_halt(note("halt: no") + body).halted


# --- from chat: /halt <reason> and /resume ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "verdict", "comment"),
    [
        ("/halt it deletes files", "halt", "it deletes files"),
        ("Halt", "halt", ""),
        ("/HALT@vaultops_bot: runaway", "halt", "runaway"),
        ("/resume", "resume", ""),
        ("/Resume@vaultops_bot", "resume", ""),
    ],
)
def test_the_bot_hears_halt_and_resume(text: str, verdict: str, comment: str) -> None:
    parsed = parse_reply(text, bot="vaultops_bot")
    assert parsed is not None and (parsed.request_id, parsed.verdict, parsed.comment) == (
        "",
        verdict,
        comment,
    )


@pytest.mark.parametrize(
    "text", ["resume the work on REQ-1 later", "/halt@another_bot now", "halting problem"]
)
def test_chatter_and_another_bots_command_are_no_switch(text: str) -> None:
    parsed = parse_reply(text, bot="vaultops_bot")
    assert parsed is None or parsed.request_id


@given(reason=TEXT, who=TEXT, others=OTHER)
def test_what_the_bot_writes_reads_back_as_said(reason: str, who: str, others: list[str]) -> None:
    """Whatever a chat message holds, the lines written for it are one halt, with that reason and sender,
    and end no frontmatter."""
    text = with_lines(note(*others), chat_lines(True, writable(reason), writable(who)))
    mark = read_halt(text)
    assert mark.halted
    assert mark.reason == " ".join(writable(reason).replace("\\", "/").replace('"', "'").split())
    assert mark.by == " ".join(writable(who).replace("\\", "/").replace('"', "'").split())
    assert not read_halt(with_lines(text, chat_lines(False, "", ""))).halted
    assert text.split("\n")[-2:] == ["# vaultops", ""]  # the body stays where it was


def test_a_stopped_runs_session_is_the_one_its_stream_announced() -> None:
    init = json.dumps({"type": "system", "subtype": "init", "session_id": "sess-1", "tools": []})
    assistant = json.dumps({"type": "assistant", "session_id": "sess-1", "message": {"content": []}})
    assert stream_session(f"{init}\n{assistant}\n{{half a line") == "sess-1"
    assert stream_session("plain text, no stream\n") == ""
    assert stream_session('{"session_id": 3}\n') == ""


HALT_LINES = st.lists(
    st.sampled_from(["halt: yes", "Halt: no", "halt_reason: runaway", "halted_by: Ann", "HALT: true"]),
    max_size=3,
)


@given(others=OTHER, old=HALT_LINES, new=HALT_LINES, body=TEXT)
def test_the_halt_lines_are_replaced_and_nothing_else(
    others: list[str], old: list[str], new: list[str], body: str
) -> None:
    """What a sync carries and a drawing keeps: the person's halt lines swapped whole, every other line of
    the note as it was."""
    text = note(*others, *old) + body
    out = with_lines(text, new)
    assert marked(out.encode()).kept == tuple(new)

    def parts(t: str, halt: list[str]) -> tuple[list[str], list[str]]:
        lines = t.split("\n")
        inside = frontmatter_lines(lines)
        front = [lines[i] for i in inside if lines[i] not in halt]
        return front, lines[inside.stop :]

    assert parts(out, new) == parts(text, old)


@given(others=OTHER, same=HALT_LINES, drawn=OTHER)
def test_a_clone_that_did_not_touch_the_halt_carries_nothing(
    others: list[str], same: list[str], drawn: list[str]
) -> None:
    before = note(*others, *same).encode()
    after = note(*drawn, *same).encode()  # this clone redrew the rest only
    assert carry_halt(before, after, note("machines: 3").encode()) is None
    assert not person_changed(before, after)
