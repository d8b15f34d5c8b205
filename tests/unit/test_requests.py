"""The request grammar: what goes in comes back out, for generated requests and for any bytes at all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultops import lines as fmt
from vaultops.model import State
from vaultops.render import results
from vaultops.scan.note import parse_note

ids = st.from_regex(r"REQ-[A-Za-z0-9][A-Za-z0-9._-]{0,30}", fullmatch=True)
words = st.text(st.characters(categories=["L", "N"], max_codepoint=0x4FF), min_size=1, max_size=12)
prose_line = st.lists(words, min_size=1, max_size=8).map(" ".join)
titles = st.one_of(st.just(""), prose_line)
field_values = st.sampled_from(["env-check", "research", "cowork-hq", "high", "90s", "yes", "worker-code"])
fields_st = st.dictionaries(
    st.sampled_from(["type", "from", "priority", "profile", "timeout", "ready"]), field_values
)
code_block = st.tuples(
    st.sampled_from(["```", "~~~", "````"]),
    st.lists(
        st.sampled_from(["## REQ-inside code", "- status: done", "# not a heading", "plain"]), max_size=3
    ),
).map(lambda t: [t[0] + "bash", *t[1], t[0]])
text_st = st.lists(st.one_of(prose_line.map(lambda s: [s]), code_block), min_size=1, max_size=5).map(
    lambda chunks: [line for chunk in chunks for line in chunk]
)


def block(ident: str, title: str, fields: dict[str, str], text: list[str]) -> list[str]:
    heading = f"## {ident}" + (f" {title}" if title else "")
    return [heading, *(f"- {k}: {v}" for k, v in fields.items()), *text]


@given(ident=ids, title=titles, fields=fields_st, text=text_st)
def test_a_request_reads_back_as_written(
    ident: str, title: str, fields: dict[str, str], text: list[str]
) -> None:
    raw = ("# Inbox\n\n" + "\n".join(block(ident, title, fields, text)) + "\n").encode()
    [request] = parse_note("i.md", raw).requests
    assert request.id == ident
    assert request.title == title.strip()
    assert dict(request.fields) == fields
    assert request.text == "\n".join(text).strip()
    assert request.state is State.OPEN
    assert request.start == 2
    assert request.problems == ()


@given(
    st.lists(st.tuples(ids, text_st), min_size=1, max_size=6, unique_by=lambda t: t[0]),
    st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_blocks_run_to_the_next_request(items: list[tuple[str, list[str]]], newline: str) -> None:
    lines: list[str] = ["# Inbox", ""]
    starts = []
    for ident, text in items:
        starts.append(len(lines))
        lines += [f"## {ident}", *text, ""]
    note = parse_note("i.md", newline.join(lines).encode())
    assert [r.id for r in note.requests] == [i for i, _ in items]
    assert [r.start for r in note.requests] == starts
    assert [r.end for r in note.requests] == [*starts[1:], len(note.lines)]


timestamps = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)).map(
    lambda d: d.replace(microsecond=0, tzinfo=timezone(timedelta(hours=10)))
)
names = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}", fullmatch=True)
reasons = st.one_of(st.just(""), prose_line)


@given(
    agent=names,
    host=names,
    claim=st.from_regex(r"[0-9a-f]{6}", fullmatch=True),
    when=timestamps,
    state=st.sampled_from(list(State)),
    reason=reasons,
    ident=ids,
    text=text_st,
)
def test_daemon_lines_read_back(
    agent: str, host: str, claim: str, when: datetime, state: State, reason: str, ident: str, text: list[str]
) -> None:
    lines = [
        *block(ident, "", {}, text),
        *results.lock_and_start(agent, host, claim, when),
        *results.status_only(state, when, reason),
    ]
    [request] = parse_note("i.md", ("\n".join(lines) + "\n").encode()).requests
    assert request.lock is not None
    assert (request.lock.agent, request.lock.host, request.lock.claim) == (agent, host, claim)
    assert request.lock.at == results.iso(when)
    assert request.state is state
    assert request.statuses[-1].reason == " ".join(reason.split())
    if request.text is not None:
        assert request.text == "\n".join(text).strip()


@given(output=st.text(max_size=400), ident=ids)
def test_any_output_stays_inside_its_result(output: str, ident: str) -> None:
    when = datetime(2026, 5, 4, 8, 31, tzinfo=UTC)
    result = results.RunResult(State.DONE, "direct", when, 0.4, output)
    lines = [
        f"## {ident}",
        "check it",
        *results.lock_and_start("a", "h", "abc123", when),
        *results.result_block(
            result, agent="a", type_="env-check", complexity="light", safety="routine", max_lines=200
        ),
        "",
        "## REQ-next",
        "more",
    ]
    note = parse_note("i.md", ("\n".join(lines) + "\n").encode())
    assert [r.id for r in note.requests] == [ident, "REQ-next"]
    assert note.requests[0].state is State.DONE
    assert note.requests[0].outcomes[-1].type == "env-check"


@settings(max_examples=settings().max_examples * 2)
@given(st.binary(max_size=2000))
def test_any_bytes_parse_without_error(raw: bytes) -> None:
    note = parse_note("i.md", raw)
    for r in note.requests:
        assert 0 <= r.start < r.end <= len(note.lines)
        assert r.start <= r.last_line < r.end


@given(st.text(max_size=2000))
def test_any_text_parses_without_error(text: str) -> None:
    note = parse_note("i.md", text.encode("utf-8", "surrogatepass"))
    assert all(r.id.startswith("REQ-") for r in note.requests)


def test_duplicates_and_bad_ids_are_problems() -> None:
    raw = b"## REQ-a\none\n\n## REQ-a\ntwo\n\n## REQ-\xc3\xa9t\xc3\xa9\nthree\n\n## REQ-b\n\n"
    note = parse_note("i.md", raw)
    problems = {r.start: r.problems for r in note.requests}
    assert (
        problems[0][0]
        == problems[3][0]
        == "duplicate id REQ-a (2 requests in this note use it); give each its own id"
    )
    assert "may only use letters" in problems[6][0]
    assert "has no text" in problems[9][0]


def test_fields_stop_at_the_first_subheading_and_answers_are_read_anywhere() -> None:
    raw = (
        "## REQ-a\n- type: research\nText.\n### Context\n- type: code\n"
        "- status: escalated @ 2026-01-01T00:00:00+00:00 — blocked: x\n- decision: approve — go ahead\n"
    ).encode()
    [r] = parse_note("i.md", raw).requests
    assert r.fields == {"type": "research"}
    assert r.state is State.ESCALATED
    assert [(a.key, a.value, a.comment) for a in r.answers] == [("decision", "approve", "go ahead")]
    assert r.text == "Text.\n### Context\n- type: code"


def test_lock_line_with_unusual_spacing_still_reads() -> None:
    line = "locked-by:  agent  @  2026-01-01T00:00:00+00:00  ( host , claim abc123 )"
    lock = fmt.parse_lock(line, 3)
    assert lock is None or (lock.agent, lock.claim) == ("agent", "abc123")


@given(
    ident=ids,
    title=titles,
    underline=st.from_regex(r"(=+|-+)[ \t]{0,2}", fullmatch=True),
    text=text_st,
    atx_after=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n"]),
)
def test_an_underlined_req_heading_is_never_run_and_always_named(
    ident: str, title: str, underline: str, text: list[str], atx_after: bool, newline: str
) -> None:
    heading = ident + (f" {title}" if title else "")
    lines = ["# Inbox", "", heading, underline, *text]
    if atx_after:
        lines += ["", "## REQ-zz-after", "is git installed"]
    raw = (newline.join(lines) + newline).encode()
    requests = parse_note("i.md", raw).requests
    shape = "===" if underline.startswith("=") else "---"
    assert requests[0].id == ident
    assert requests[0].problems[-1] == (
        f"{ident} is a heading underlined with {shape}; vaultops takes requests only from level-2 headings:"
        f" write it as `## {ident} …`"
    )
    if atx_after and ident != "REQ-zz-after":
        assert [r.id for r in requests[1:]] == ["REQ-zz-after"]
        assert requests[1].problems == ()


@given(ident=ids, before=prose_line, after=prose_line, where=st.sampled_from(["text", "field", "title"]))
def test_a_nul_byte_anywhere_in_a_request_is_its_own_error(
    ident: str, before: str, after: str, where: str
) -> None:
    nul = f"{before}\0{after}"
    heading = f"## {ident}" + (f" {nul}" if where == "title" else "")
    field = f"- from: {nul}" if where == "field" else "- from: me"
    text = nul if where == "text" else before
    [request] = parse_note("i.md", f"# Inbox\n\n{heading}\n{field}\n{text}\n".encode()).requests
    assert request.problems == (
        f"{ident}: the request text contains a NUL byte, which cannot be passed to a program; remove it",
    )
