"""Answers and request headings as a phone types them (issue 29): the readers, over generated variants.

A person answers `- Decision: Approve.` with a non-breaking space after the dash; a phone makes `## REQ-`
into `##\u00a0REQ-`, `## req-`, `## REQ–` or full-width letters.  The answer is read; the heading is named
(one problem, nothing runs) and never merges into the request above.  vaultops's own status and lock lines
are never read this leniently.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from vaultops import lines as fmt
from vaultops.model import State
from vaultops.scan.note import parse_note
from vaultops.scan.pieces import parse_note_cached

STATUS = "- status: escalated @ 2026-05-04T08:30:00+00:00 — blocked: permanent deletion"
SPACES = [" ", "\u00a0", "\u202f", "\u2007", "\u2002", "\u3000", "\u2009"]
INVISIBLE = ["\u200b", "\u2060", "\ufeff", "\u200d"]
COLONS = [":", "\uff1a", "\ufe55", "\ua789"]
BULLETS = ["-", "*", "+", "\u2022", "\u2013", "\uff0d"]
VALID = {
    "decision": ["approve", "deny", "accept"],
    "retry": ["yes"],
    "cancel": ["yes"],
    "cleanup": ["yes", "force"],
}


def cased(word: str, flips: list[bool]) -> str:
    return "".join(
        c.upper() if flip else c for c, flip in zip(word, flips + [False] * len(word), strict=False)
    )


@st.composite
def phone_answers(draw: st.DrawFn) -> tuple[str, str, str, str]:
    """(the line as typed, key, value, comment)."""
    key = draw(st.sampled_from(sorted(VALID)))
    value = draw(st.sampled_from(VALID[key]))
    flips = draw(st.lists(st.booleans(), max_size=10))
    key_t, value_t = cased(key, flips), cased(value, list(reversed(flips)))
    if draw(st.booleans()):  # a zero-width character somewhere in the key
        at = draw(st.integers(1, len(key_t) - 1))
        key_t = key_t[:at] + draw(st.sampled_from(INVISIBLE)) + key_t[at:]
    bullet = draw(st.sampled_from(BULLETS))
    after_bullet = draw(st.sampled_from(SPACES))
    colon = draw(st.sampled_from(COLONS))
    after_colon = draw(st.sampled_from(SPACES))
    stop = draw(st.sampled_from(["", ".", "!", " ", "  ", ". ", "\u00a0"]))
    comment = draw(st.sampled_from(["", "looks fine", "use worker-fast", "change the name"]))
    said = ""
    if comment and stop.strip():  # after a period, the rest of the line is the comment
        said = f" {comment}"
    elif comment:
        said = f" {draw(st.sampled_from(['—', '–', '--']))} {comment}"
    end = stop.rstrip() if said else stop
    line = f"{bullet}{after_bullet}{key_t}{colon}{after_colon}{value_t}{end}{said}"
    return line, key, value, comment


@settings(max_examples=300)
@given(phone_answers())
@example(("- Decision: Approve", "decision", "approve", ""))
@example(("-\u00a0decision:\u00a0approve.", "decision", "approve", ""))
@example(("- decision: approve  ", "decision", "approve", ""))
def test_an_answer_is_read_as_a_phone_types_it(case: tuple[str, str, str, str]) -> None:
    line, key, value, comment = case
    answer = fmt.read_answer(line, 7)
    assert answer is not None, line
    assert (answer.key, answer.value, answer.comment, answer.line) == (key, value, comment, 7)


@settings(max_examples=200)
@given(phone_answers())
def test_a_phone_answer_under_an_escalation_is_the_standing_answer(case: tuple[str, str, str, str]) -> None:
    line, key, value, _ = case
    text = f"## REQ-a delete the old backups\n\nremove them\n\n{STATUS}\n{line}\n"
    for full in (True, False):  # a skeleton read (full=False) must see it too, or the pass never looks
        (request,) = parse_note("inbox.md", text.encode(), full=full).requests
        assert [(a.key, a.value) for a in request.answers] == [(key, value)], (line, full)
        assert request.text == "remove them"  # the answer is not part of the prompt


@given(
    state=st.sampled_from([s.value for s in State]),
    space=st.sampled_from(SPACES[1:] + INVISIBLE),
    where=st.sampled_from(["bullet", "colon", "key"]),
    upper=st.booleans(),
)
def test_status_lines_are_never_read_leniently(state: str, space: str, where: str, upper: bool) -> None:
    """The wall: a status line as a phone types it is no answer, and is read as a status line only in
    the leeway vaultops's own reader always had (a space of any kind after the colon); the rest is left to
    scan.lookalike, which names it."""
    key = "Status" if upper else "status"
    line = {
        "bullet": f"-{space}{key}: {state} @ 2026-05-04T08:30:00+00:00",
        "colon": f"- {key}:{space}{state} @ 2026-05-04T08:30:00+00:00",
        "key": f"- sta{space}tus: {state} @ 2026-05-04T08:30:00+00:00",
    }[where]
    text = f"## REQ-a check the disk\n\ncheck it\n\n{line}\n"
    (request,) = parse_note("inbox.md", text.encode()).requests
    assert fmt.read_answer(line, 4) is None
    assert request.answers == ()
    assert bool(request.statuses) == (where == "colon" and not upper and space.isspace()), line


def test_values_that_are_not_answers_stay_unread() -> None:
    for line in (
        "- decision: approved",
        "- decision: yes",
        "- retry: approve",
        "- cleanup: now",
        "- type: x",
    ):
        assert fmt.read_answer(line, 0) is None, line
    assert fmt.read_answer("- decision: deny once", 0) is None  # once/for this request: approvals only


# --- headings --------------------------------------------------------------------------------------

FAULTS = ["gap", "lower", "dash", "fullwidth", "none", "cyrillic", "zero-width"]
DASHES = ["\u2013", "\u2014", "\u2010", "\u2011", "\u2212", "\uff0d", "\ufe63"]


@st.composite
def near_headings(draw: st.DrawFn) -> tuple[str, str]:
    """(a heading line that is almost ``## REQ-<rest> title``, ``REQ-<rest>``)."""
    rest = draw(st.from_regex(r"[a-z0-9][a-z0-9._]{0,12}", fullmatch=True))
    title = draw(st.sampled_from(["", " check the disk", " — summarise the week"]))
    faults = draw(st.sets(st.sampled_from(FAULTS), min_size=1, max_size=3))
    hashes, gap, req, dash = "##", " ", "REQ", "-"
    if "gap" in faults:
        gap = draw(st.sampled_from(SPACES[1:]))
    elif "none" in faults:
        gap = ""
    if "lower" in faults:
        req = draw(st.sampled_from(["req", "Req", "rEq", "reQ"]))
    if "fullwidth" in faults:
        req = "".join(chr(ord(c) + 0xFEE0) for c in req)
    elif "cyrillic" in faults:
        req = req.replace("E", "\u0415").replace("e", "\u0435")
    if "zero-width" in faults:
        req = req[:1] + draw(st.sampled_from(INVISIBLE)) + req[1:]
    if "dash" in faults:
        dash = draw(st.sampled_from(DASHES))
    return f"{hashes}{gap}{req}{dash}{rest}{title}", f"REQ-{rest}"


@settings(max_examples=300)
@given(near_headings(), st.booleans())
@example(("##\u00a0REQ-b other", "REQ-b"), False)
@example(("## req-b other", "REQ-b"), False)
@example(("## REQ\u2013b other", "REQ-b"), False)
@example(("## \uff32\uff25\uff31-b other", "REQ-b"), False)
def test_a_near_heading_is_named_and_never_merges_into_the_request_above(
    case: tuple[str, str], blank_before: bool
) -> None:
    heading, ident = case
    above = ["## REQ-a check the disk", "", "how full is it", *([""] if blank_before else [])]
    text = "\n".join([*above, heading, "", "what the phone asked", ""])
    whole = parse_note("inbox.md", text.encode())
    cut = parse_note_cached("inbox.md", text.encode(), {}, spread=1)  # cut at every heading
    assert cut.requests == whole.requests
    for note in (whole, cut):
        first, second = note.requests
        assert (first.id, first.end, first.text) == ("REQ-a", len(above), "how full is it"), heading
        assert second.id == ident and second.start == len(above)
        assert second.problems and second.problems[0].startswith("the heading "), second.problems
        assert f"retype it as `## {ident}`" in second.problems[0]


def test_a_near_heading_with_nothing_wrong_is_no_problem_and_code_is_text() -> None:
    text = "## REQ-a one\n\ntext\n\n```\n##\u00a0REQ-b in code\n## req-c in code\n```\n\n## Notes\n\n## req\n"
    (request,) = parse_note("inbox.md", text.encode()).requests
    assert request.problems == () and request.end == 9
    assert "##\u00a0REQ-b in code" in (request.text or "")


def test_the_named_id_is_the_fixed_one_and_a_copy_of_another_id_is_a_duplicate() -> None:
    """A look-alike of another request's id never stands for that request: both stop, as duplicates do."""
    text = "## REQ-b the real one\n\ntext\n\n## req-b the look-alike\n\nother text\n"
    real, look = parse_note("inbox.md", text.encode()).requests
    assert real.id == look.id == "REQ-b"
    assert any("duplicate id REQ-b" in p for p in real.problems)
    assert look.problems[0].startswith("the heading `req-b` is almost a request")


def test_frontmatter_is_not_read_for_headings() -> None:
    text = "---\ntags: [x]\n#\u00a0req-zzz: a yaml comment\n---\n\n## REQ-a one\n\ntext\n"
    (request,) = parse_note("inbox.md", text.encode()).requests
    assert request.id == "REQ-a"


def test_an_answer_that_does_not_read_is_kept_to_be_named_only_below_a_waiting_status() -> None:
    text = f"## REQ-a wipe\n\n- decision: pending on budget\nwipe it\n\n{STATUS}\n- Decision: Approved\n"
    (request,) = parse_note("inbox.md", text.encode(), full=False).requests
    assert request.unread == ((6, "- Decision: Approved"),) and request.answers == ()
    assert request.text == "- decision: pending on budget\nwipe it"  # above every status: the person's text
    done = text.replace("escalated", "done")
    (finished,) = parse_note("inbox.md", done.encode()).requests
    assert finished.unread == ()
