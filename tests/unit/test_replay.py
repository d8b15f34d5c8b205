"""Replaying vaultops's own commit on a newer remote version of a note: nothing of the remote version is
lost, our lines stay in their request's block, and fencing decides which of them may land."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultops import lines as fmt
from vaultops.model import State, Target
from vaultops.render import results
from vaultops.render.late import late_result
from vaultops.scan.note import ParsedNote, parse_note
from vaultops.scan.text import NoteText, decode
from vaultops.store.inserts import Applied, Insert, edits_for
from vaultops.store.notes import splice
from vaultops.store.placement import Edit
from vaultops.sync.replay import insertion_runs, replay

ME, OTHER = "hermes", "atlas"
T0 = datetime(2026, 5, 4, 8, 0, tzinfo=UTC)
MARKERS = ("<<<<<<<", "=======", ">>>>>>>")


def at(k: int, minutes: int = 0) -> datetime:
    """A distinct time per request, so that every line vaultops writes for it is unique in the note."""
    return T0 + timedelta(hours=k, minutes=minutes)


def result_lines(rid: str, k: int, state: State = State.DONE, agent: str = ME) -> list[str]:
    run = results.RunResult(state, "direct", at(k, 5), 0.4, f"answer for {rid}\n- status: done @ fake")
    return results.result_block(
        run, agent=agent, type_="env-check", complexity="light", safety="routine", max_lines=200
    )


def claim_lines(k: int, claim: str, agent: str = ME, host: str = "vps1") -> list[str]:
    return results.lock_and_start(agent, host, claim, at(k, 1 if agent == ME else 2))


def takeover_lines(k: int) -> list[str]:
    when = results.iso(at(k, 30))
    return [
        fmt.lock_line(OTHER, when, "host2", f"o{k}", lease=600),
        fmt.status_line(State.INTERRUPTED, when, "taken over"),
    ]


def lines_of(raw: bytes) -> list[str]:
    return NoteText.from_bytes(raw).lines


def is_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(any(line == other for other in it) for line in small)


def block_lines(note: ParsedNote, rid: str) -> list[str]:
    [request] = [r for r in note.requests if r.id == rid]
    return note.lines[request.start : request.end]


def contains_run(lines: list[str], run: list[str]) -> bool:
    return any(lines[n : n + len(run)] == run for n in range(len(lines) - len(run) + 1))


def control_lines(lines: list[str]) -> list[str]:
    """The lock and status lines among lines vaultops wrote (not those of an output that looks like them)."""
    out, fenced = [], False
    for line in lines:
        if line.startswith("~~~"):
            fenced = not fenced
        elif not fenced and line.startswith(("- locked-by:", "- status:")):
            out.append(line)
    return out


# --- generated inboxes ---------------------------------------------------------------------------


def text_chunks(rid: str) -> st.SearchStrategy[list[str]]:
    chunk = st.sampled_from(
        [
            ["- type: research"],
            ["```bash", "## REQ-inside code", "- status: done @ 2026-01-01T00:00:00+00:00", "```"],
            ["- one", "  - nested"],
            ["> quoted"],
            ["Please look at it."],
            [""],
        ]
    )
    return st.lists(chunk, max_size=3).map(
        lambda chunks: [f"text of {rid}", *(line for c in chunks for line in c)]
    )


@dataclass
class Scenario:
    base: bytes
    ours: bytes
    theirs: bytes
    inserted: dict[str, list[str]] = field(default_factory=dict)  # our lines per request, in X
    with_result: set[str] = field(default_factory=set)
    person_x: list[str] = field(default_factory=list)  # lines typed on our clone, in X
    person_new: str = ""  # the request the person appended at the end of X on our clone, if any
    last: str = ""  # the last request of P
    taken: set[str] = field(default_factory=set)  # requests another machine acted on, in R
    deleted: set[str] = field(default_factory=set)


def join(lines: list[str], ending: str, final: bool, bom: bool) -> bytes:
    text = ending.join(lines) + (ending if final and lines else "")
    return ("\ufeff" if bom else "").encode() + text.encode()


@st.composite
def inboxes(draw: st.DrawFn) -> tuple[list[str], list[list[str]], list[str]]:
    """(header, blocks, states): a request per block, each open, running under our claim, or done."""
    header = ["---", "title: Inbox", "---"] if draw(st.booleans()) else []
    header += ["# Inbox", "", "Intro for the agents.", ""]
    blocks, states = [], []
    count = draw(st.integers(1, 5))
    for k in range(count):
        rid = f"REQ-{k}-" + draw(st.sampled_from(["check", "audit", "x.y"]))
        state = draw(st.sampled_from(["open", "mine", "done"]))
        lines = [f"## {rid}", *draw(text_chunks(rid))]
        if k == count - 1 and draw(st.booleans()):
            lines += ["~~~", "code the person never closed"]  # runs to the end of the note
        if state == "mine":
            lines += claim_lines(k, f"m{k}")
        elif state == "done":
            lines += [*claim_lines(k, f"d{k}", OTHER, "host3"), *result_lines(rid, k, agent=OTHER)]
        blocks.append(lines + draw(st.sampled_from([[""], [], ["", ""]])))
        states.append(state)
    return header, blocks, states


def rid_of(block: list[str]) -> str:
    return block[0][3:]


@st.composite
def ours_on(draw: st.DrawFn, base: bytes, blocks: list[list[str]], states: list[str]) -> Scenario:
    """X: P plus what a pass of ours inserts with the real edits_for/splice, and sometimes a line the person
    typed on this clone (right under a request's heading)."""
    s = Scenario(base, base, base)
    raw = base
    if draw(st.booleans()):
        n = draw(st.integers(0, len(blocks) - 1))
        note = parse_note("i.md", raw)
        line = f"typed on this clone under {rid_of(blocks[n])}"
        raw = splice(raw, note.text.newline, [Edit(note.requests[n].start, (line,))])
        s.person_x.append(line)
    inserts = []
    for k, (block, state) in enumerate(zip(blocks, states, strict=True)):
        rid = rid_of(block)
        if state == "open":
            action = draw(st.sampled_from(["none", "claim", "claim+result"]))
            if action == "none":
                continue
            lines = claim_lines(k, f"x{k}")
            if action == "claim+result":
                lines += result_lines(rid, k)
                s.with_result.add(rid)
            inserts.append(Insert(Target(rid), tuple(lines), frozenset({State.OPEN})))
        elif state == "mine" and draw(st.booleans()):
            lines = result_lines(rid, k)
            s.with_result.add(rid)
            inserts.append(Insert(Target(rid), tuple(lines), frozenset({State.RUNNING}), claim=f"m{k}"))
        else:
            continue
        s.inserted[rid] = lines
    note = parse_note("i.md", raw)
    applied = Applied()
    s.ours = splice(raw, note.text.newline, edits_for(note, inserts, applied))
    landed = {ins.target.request_id for ins in applied.landed}  # a claim inside an open fence is no claim
    s.inserted = {rid: lines for rid, lines in s.inserted.items() if rid in landed}
    s.last = rid_of(blocks[-1])
    if draw(st.booleans()):  # a request the person appended on this clone, as obsidian-git commits it
        nl = note.text.newline.encode()
        ends = s.ours.endswith((b"\n", b"\r"))
        appended = s.ours + (b"" if ends else nl) + nl + b"## REQ-typed-here" + nl + b"typed here" + nl
        if "REQ-typed-here" in [r.id for r in parse_note("i.md", appended).requests]:
            s.ours, s.person_new = appended, "REQ-typed-here"
            s.person_x.append("typed here")
    return s


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    header, blocks, states = draw(inboxes())
    ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    final, bom = draw(st.booleans()), draw(st.booleans())
    base = join([*header, *(line for b in blocks for line in b)], ending, final, bom)
    s = draw(ours_on(base, blocks, states))

    # R: the person's edits on another clone...
    theirs = [list(b) for b in blocks]
    intro = list(header)
    for n, op in enumerate(
        draw(st.lists(st.sampled_from(["type", "append", "edit", "delete", "blank", "intro", "insert"])))
    ):
        k = draw(st.integers(0, len(theirs) - 1)) if theirs else 0
        if op == "type" and theirs:
            body = len(theirs[k]) - sum(1 for line in reversed(theirs[k]) if not line)
            theirs[k].insert(draw(st.integers(1, max(1, body))), f"typed remotely {n}")
        elif op == "append":
            theirs.append([*draw(st.sampled_from([[""], []])), f"## REQ-new-{n}", f"new request {n}"])
        elif op == "insert":
            theirs.insert(k, [f"## REQ-mid-{n}", f"inserted request {n}", ""])
        elif op == "edit" and theirs:
            theirs[k] = [line + " (edited)" if line.startswith("text of") else line for line in theirs[k]]
        elif op == "delete" and theirs:
            s.deleted.add(rid_of(theirs.pop(k)))
        elif op == "blank" and theirs:
            theirs[k] = theirs[k][:-1] if theirs[k][-1] == "" else [*theirs[k], ""]
        elif op == "intro":
            intro = [line.replace("Intro", "The intro, edited,") for line in intro]
    raw = join([*intro, *(line for b in theirs for line in b)], ending, final, bom)
    # ...and another machine's claims and takeovers
    note = parse_note("i.md", raw)
    inserts = []
    for k, (block, state) in enumerate(zip(blocks, states, strict=True)):
        rid = rid_of(block)
        if rid in s.deleted or state == "done" or not draw(st.booleans()):
            continue
        lines = claim_lines(k, f"o{k}", OTHER, "host2") if state == "open" else takeover_lines(k)
        inserts.append(Insert(Target(rid), tuple(lines), frozenset(State)))
    applied = Applied()
    s.theirs = splice(raw, note.text.newline, edits_for(note, inserts, applied))
    s.taken = {ins.target.request_id for ins in applied.landed}
    return s


# --- properties ----------------------------------------------------------------------------------


@settings(max_examples=settings().max_examples * 2)
@given(scenarios())
def test_replay_keeps_the_remote_and_places_our_lines_by_fencing(s: Scenario) -> None:
    out = replay("i.md", s.base, s.ours, s.theirs)
    theirs, result = lines_of(s.theirs), lines_of(out.raw)
    assert is_subsequence(theirs, result)
    assert not any(line.startswith(MARKERS) for line in result)
    note = parse_note("i.md", out.raw)
    ids = [r.id for r in note.requests]
    if s.person_new:
        # a new request stays whole, and after the block it was appended to, past what R added there
        assert ids.count(s.person_new) == 1
        at = ids.index(s.person_new)
        assert [line for line in block_lines(note, s.person_new)[1:] if line.strip()] == ["typed here"]
        if s.last in ids[:at] and s.last not in s.deleted:
            assert ids[at - 1] == s.last
        ids.remove(s.person_new)
    assert ids == [r.id for r in parse_note("i.md", s.theirs).requests]
    for line in s.person_x:
        assert line in result
    for rid, ours in s.inserted.items():
        mentioned = any(f" {rid}: " in sentence for sentence in out.dropped)
        if rid in s.deleted:
            assert mentioned and rid not in out.late
            assert ours[0] not in result
            continue
        block = block_lines(note, rid)
        if rid not in s.taken:
            assert contains_run(block, ours), (rid, ours, block)
            assert rid not in out.late and not mentioned
            continue
        # another machine acted on it: none of our lock or status lines, our output only as a late result
        assert not any(line in result for line in control_lines(ours))
        if rid in s.with_result:
            assert rid in out.late and not mentioned
            [late] = [n for n, line in enumerate(block) if line.startswith(fmt.LATE_RESULT)]
            others = [n for n, line in enumerate(block) if line.startswith(f"- locked-by: {OTHER}")]
            assert others and max(others) < late
            [before] = [r for r in parse_note("i.md", s.base).requests if r.id == rid]
            claims = [line.split("claim ")[1].rstrip(")") for line in control_lines(ours) if "claim" in line]
            claim = claims[-1] if claims else before.lock.claim if before.lock else ""
            expected = late_result(ours, claim)
            assert block[late : late + len(expected)] == expected
            # nothing of ours after it; the person's lines whose block the remote deleted land at the end
            after = [line for line in block[late + len(expected) :] if line.strip()]
            assert all(line in s.person_x for line in after), after
        else:
            assert mentioned and rid not in out.late
    assert set(out.late) <= set(s.inserted)


@given(inboxes(), st.sampled_from(["\n", "\r\n", "\r"]), st.booleans(), st.booleans(), st.data())
def test_on_an_unchanged_remote_the_result_is_our_commit(
    inbox: tuple[list[str], list[list[str]], list[str]],
    ending: str,
    final: bool,
    bom: bool,
    data: st.DataObject,
) -> None:
    header, blocks, states = inbox
    base = join([*header, *(line for b in blocks for line in b)], ending, final, bom)
    s = data.draw(ours_on(base, blocks, states))
    out = replay("i.md", s.base, s.ours, s.base)
    assert out.raw == s.ours
    assert out.late == out.dropped == ()
    assert replay("i.md", s.base, s.ours, s.ours) == out  # a remote that already has our commit


@given(scenarios())
def test_with_nothing_of_ours_the_result_is_the_remote(s: Scenario) -> None:
    out = replay("i.md", s.base, s.base, s.theirs)
    assert out.raw == s.theirs
    assert out.late == out.dropped == ()


@given(
    st.lists(st.sampled_from(["a", "b", "", "- x", "## h"]), max_size=30),
    st.lists(st.tuples(st.integers(0, 40), st.sampled_from(["new", "a", "", "- x", "b"])), max_size=6),
    st.lists(st.integers(0, 40), max_size=3),
)
def test_runs_put_back_what_was_inserted(
    old: list[str], inserts: list[tuple[int, str]], deletes: list[int]
) -> None:
    new = list(old)
    for where, line in inserts:
        new.insert(min(where, len(new)), line)
    check_runs(old, new)
    for where in deletes:  # X may also have lost lines (a person's edit on a shared clone)
        if new:
            del new[where % len(new)]
    rebuilt = rebuild(old, new)
    assert is_subsequence(new, rebuilt) and is_subsequence(old, rebuilt)


def rebuild(old: list[str], new: list[str]) -> list[str]:
    out: list[str] = []
    done = 0
    for i, run in insertion_runs(old, new):
        out += [*old[done:i], *run]
        done = i
    return [*out, *old[done:]]


def check_runs(old: list[str], new: list[str]) -> None:
    assert rebuild(old, new) == new
    runs = insertion_runs(old, new)
    assert [i for i, _ in runs] == sorted({i for i, _ in runs})  # one run per place, in order


def test_runs_where_longest_blocks_would_replace_lines() -> None:
    for k in (3, 250):  # a gap small enough to find the fewest runs, and one that is not
        # SequenceMatcher pairs the long run of a's with new's, then "replaces" old's b with new's a
        old = [*["a"] * k, "b"]
        new = ["n", "a", "b", *["a"] * (k - 1), "b", "b"]
        check_runs(old, new)
    assert insertion_runs(["a", "a", "a", "b"], ["n", "a", "b", "a", "a", "b", "b"]) == [
        (0, ["n"]), (1, ["b"]), (3, ["b"])
    ]  # fmt: skip


# --- examples ------------------------------------------------------------------------------------

BASE = [
    "# Inbox",
    "",
    "## REQ-a",
    "Is stripe installed?",
    *claim_lines(0, "abc123"),
    "",
    "## REQ-b",
    "Why the 502?",
]


def raw_of(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def test_a_result_for_a_claim_taken_over_becomes_a_late_result() -> None:
    base = raw_of(BASE)
    ours = raw_of([*BASE[:6], *result_lines("REQ-a", 0), *BASE[6:]])
    theirs = raw_of([*BASE[:6], *takeover_lines(0), *BASE[6:]])
    out = replay("i.md", base, ours, theirs)
    assert out.late == ("REQ-a",) and out.dropped == ()
    late = late_result(result_lines("REQ-a", 0), "abc123")
    assert late[0] == "### Late result — 2026-05-04 08:05 — hermes (claim abc123, superseded)"
    assert decode(out.raw) == decode(raw_of([*BASE[:6], *takeover_lines(0), *late, *BASE[6:]]))
    [a, _] = parse_note("i.md", out.raw).requests
    assert a.state is State.INTERRUPTED and a.lock is not None and a.lock.claim == "o0"


def test_a_claim_that_lost_is_dropped_and_said() -> None:
    base = raw_of(BASE)
    ours = raw_of([*BASE, *claim_lines(1, "mine01")])
    theirs = raw_of([*BASE, *claim_lines(1, "other1", OTHER, "host2")])
    out = replay("i.md", base, ours, theirs)
    assert out.raw == theirs
    assert out.late == ()
    assert out.dropped == (
        "i.md: REQ-b: changed on the remote meanwhile (now running, claim other1); "
        "our claim mine01 lost, 2 lines not replayed",
    )


def test_our_lines_stay_in_our_block_when_a_request_is_appended_after_it() -> None:
    base = raw_of(BASE)
    ours = raw_of([*BASE, *claim_lines(1, "mine01")])
    theirs = raw_of([*BASE, "## REQ-c", "New request typed on the phone"])
    out = replay("i.md", base, ours, theirs)
    assert decode(out.raw) == decode(
        raw_of([*BASE, *claim_lines(1, "mine01"), "", "## REQ-c", "New request typed on the phone"])
    )
    b = parse_note("i.md", out.raw).requests[1]
    assert (b.id, b.state) == ("REQ-b", State.RUNNING)


def test_a_block_gone_from_the_remote_drops_our_lines() -> None:
    base = raw_of(BASE)
    ours = raw_of([*BASE[:6], *result_lines("REQ-a", 0), *BASE[6:]])
    theirs = raw_of([*BASE[:2], *BASE[6:]])
    out = replay("i.md", base, ours, theirs)
    assert out.raw == theirs
    assert out.dropped == (
        f"i.md: REQ-a: its block is gone from the remote version; {len(result_lines('REQ-a', 0))} lines "
        "not replayed",
    )


def test_daily_note_keeps_both_machines_lines() -> None:
    base = b"# 2026-05-04\n\n## Log\n- 08:00 started\n\n## Notes\nnothing yet\n"
    ours = base.replace(b"started\n", b"started\n- 08:31 hermes: REQ-a done\n")
    theirs = base.replace(b"started\n", b"started\n- 08:32 atlas: REQ-b done\n")
    out = replay("Daily/2026-05-04.md", base, ours, theirs, requests=False)
    assert out.raw == base.replace(
        b"started\n", b"started\n- 08:31 hermes: REQ-a done\n- 08:32 atlas: REQ-b done\n"
    )
    assert out.late == out.dropped == ()


def test_a_line_at_the_very_start_goes_after_the_byte_order_mark() -> None:
    base = b"\xef\xbb\xbf## REQ-a\r\ntext\r\n"
    ours = b"\xef\xbb\xbfTop line\r\n## REQ-a\r\ntext\r\n"
    theirs = base + b"more\r\n"
    assert replay("i.md", base, ours, theirs).raw == b"\xef\xbb\xbfTop line\r\n## REQ-a\r\ntext\r\nmore\r\n"
    assert replay("i.md", b"", b"first\n", b"").raw == b"first\n"


def test_person_lines_follow_their_anchor_in_the_same_block() -> None:
    base = raw_of(["## REQ-a", "- type: research", "one", "", "## REQ-b", "- type: research", "two"])
    ours = raw_of(["## REQ-a", "- type: research", "one", "", "## REQ-b", "- type: research", "added", "two"])
    theirs = raw_of(
        ["## REQ-b", "- type: research", "two (edited)", "", "## REQ-a", "- type: research", "one"]
    )
    out = replay("i.md", base, ours, theirs)
    assert lines_of(out.raw) == [
        "## REQ-b", "- type: research", "added", "two (edited)", "", "## REQ-a", "- type: research", "one"
    ]  # fmt: skip


# --- late_result ---------------------------------------------------------------------------------


def test_late_result_keeps_only_result_sections_and_fenced_output_verbatim() -> None:
    output = "~~~\n- status: done @ x\n- locked-by: a @ b (c, claim d)\n## REQ-z"
    run = results.RunResult(
        State.ERROR, "worker-code", T0, 12.0, output, reason="exit 2", cost_usd=0.01, turns=3
    )
    block = results.result_block(
        run, agent=ME, type_="code", complexity="heavy", safety="routine", max_lines=200
    )
    lines = [
        *results.lock_and_start(ME, "vps1", "c1", T0), *block, *results.status_only(State.DONE, T0, "ok")
    ]
    late = late_result(lines, "c1")
    assert late == [fmt.late_result_heading("2026-05-04 08:00", ME, "c1"), *block[1:-1]]
    assert late[-1].startswith("~~~~") and any(line.startswith("- cost:") for line in late)


def test_late_result_with_backtick_fences_several_sections_and_none() -> None:
    lines = [
        "- status: running @ t",
        "### Result — 2026-05-04 08:00 — a",
        "- outcome: done",
        "````text",
        "```",
        "- status: done @ inside",
        "````",
        "- cost: $0.1000",
        "",
        "- status: done @ t2",
        "### Run — 2026-05-04 09:00 — b",
        "~~~text",
        "unclosed",
    ]
    assert late_result(lines, "k9") == [
        fmt.late_result_heading("2026-05-04 08:00", "a", "k9"),
        "- outcome: done", "````text", "```", "- status: done @ inside", "````", "- cost: $0.1000",
        fmt.late_result_heading("2026-05-04 09:00", "b", "k9"),
        "~~~text", "unclosed", "~~~",
    ]  # fmt: skip
    assert late_result(["- locked-by: a @ t (h, claim c)", "- status: running @ t"], "c") == []
    assert late_result([], "c") == []


def test_a_request_appended_at_the_end_goes_after_what_the_remote_added_to_the_last_block() -> None:
    """The commonest clash: the person appends a request at the end of the inbox (committed by
    obsidian-git) while another machine appends a result to the last block.  git cannot merge that;
    the replay keeps the result with its request and the new request whole after it."""
    base = raw_of(BASE)
    new_request = ["", "## REQ-c", "- ready: yes", "Summarise the week."]
    ours = raw_of([*BASE, *new_request])
    theirs = raw_of([*BASE, *result_lines("REQ-b", 1, agent=OTHER)])
    out = replay("i.md", base, ours, theirs)
    assert decode(out.raw) == decode(raw_of([*BASE, *result_lines("REQ-b", 1, agent=OTHER), *new_request]))
    b, c = parse_note("i.md", out.raw).requests[1:]
    assert (b.id, b.state, c.id, c.state) == ("REQ-b", State.DONE, "REQ-c", State.OPEN)


def test_our_result_and_a_request_typed_after_it_are_split_when_the_claim_was_taken_over() -> None:
    """On a shared clone our commit may carry the person's new request right after our result: when our
    claim lost, the result becomes a late result and the person's request still lands whole."""
    base = raw_of(BASE)
    new_request = ["", "## REQ-c", "Summarise the week."]
    ours = raw_of([*BASE, *result_lines("REQ-b", 1), *new_request])
    theirs = raw_of([*BASE, *takeover_lines(1)])
    out = replay("i.md", base, ours, theirs)
    note = parse_note("i.md", out.raw)
    assert [r.id for r in note.requests] == ["REQ-a", "REQ-b", "REQ-c"]
    assert out.late == ("REQ-b",)
    assert note.requests[1].state == State.INTERRUPTED
    assert note.lines[note.requests[2].start :] == ["## REQ-c", "Summarise the week."]


def test_our_result_counts_when_the_remote_holds_our_claim_although_our_parent_did_not() -> None:
    """obsidian-git committed on our clone between our claim's push and the clone following it, so our
    result commit's parent lacks the claim the remote has: the result is ours, not a late one."""
    base = raw_of(BASE)
    mine = claim_lines(1, "mine01")
    ours = raw_of([*BASE, *mine, *result_lines("REQ-b", 1)])
    theirs = raw_of([*BASE, *mine])
    out = replay("i.md", base, ours, theirs)
    assert out.raw == ours
    assert out.late == out.dropped == ()
