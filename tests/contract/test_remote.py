"""The remote's contract: the push is the compare-and-swap.  Of two machines claiming from the same
commit exactly one wins, the other is told it was beaten and its claim lands nowhere; a machine follows the
winner by pulling; a result whose claim lost is fenced out.  Real git and the twin, case by case."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.contract.worlds import Machine, Machines, machines
from tests.support.helpers import INBOX
from vaultops.engine.publish import with_inserts
from vaultops.model import State, Target
from vaultops.render import results
from vaultops.scan.note import parse_note
from vaultops.store.inserts import CLAIM_LOST, Insert
from vaultops.sync.remote import Pushed

AT = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
EVERY = frozenset(State)


def claim_lines(m: Machine, claim: str) -> tuple[str, ...]:
    return tuple(results.lock_and_start(m.name, m.host, claim, AT, 600))


def result_lines(claim: str) -> tuple[str, ...]:
    return (f"- status: done @ 2026-05-04T09:01:00+00:00 · claim {claim} finished",)


def push_inserts(m: Machine, inserts: list[Insert]) -> tuple[Pushed | None, list[tuple[Insert, str]]]:
    """What the engine does with a note's lines through the remote (``engine.record.push_first``): built on
    HEAD's version, pushed, then written to disk and adopted.  None when none of them can be placed."""
    head, committed = m.notes.head_version(INBOX)
    assert committed is not None
    new, applied = with_inserts(parse_note(INBOX, committed), inserts)
    if not applied.landed:
        return None, applied.dropped
    pushed = m.remote.swap({INBOX: new}, "vaultops: lines", m.name, head)
    if pushed.kind == "pushed":
        on_disk = m.notes.read(INBOX)
        assert on_disk is not None
        written, _ = with_inserts(parse_note(INBOX, on_disk), inserts)
        assert m.notes.replace(INBOX, on_disk, written)
        assert m.remote.adopt(pushed.sha, head, [INBOX])
    return pushed, applied.dropped


def claim(m: Machine, claim_id: str) -> Pushed:
    pushed, _ = push_inserts(m, [Insert(Target("REQ-a"), claim_lines(m, claim_id), EVERY)])
    assert pushed is not None
    return pushed


def test_of_two_swaps_from_the_same_head_exactly_one_wins(fleet: Machines) -> None:
    a, b = fleet.clone(), fleet.clone()
    assert a.remote.head() == b.remote.head() == fleet.tip()
    won, lost = claim(a, "aaaaaa"), claim(b, "bbbbbb")
    assert (won.kind, lost.kind) == ("pushed", "behind")
    assert lost.detail == "someone pushed first"
    assert fleet.tip() == won.sha and fleet.in_history(won.sha) and not fleet.in_history(lost.sha)
    tip_inbox = fleet.at_tip(INBOX) or b""
    assert b"claim aaaaaa" in tip_inbox and b"claim bbbbbb" not in tip_inbox
    # the loser wrote nothing: its clone and its disk are as they were
    assert b.remote.head() != lost.sha and b"bbbbbb" not in (b.notes.read(INBOX) or b"")


def test_a_swap_on_a_stale_head_is_refused_and_a_fresh_one_goes_through(fleet: Machines) -> None:
    a, b = fleet.clone(), fleet.clone()
    assert claim(a, "aaaaaa").kind == "pushed"
    stale = b.remote.head()
    assert b.remote.swap({"Daily/x.md": b"x\n"}, "late", b.name, stale).kind == "behind"
    # pushing its HEAD, which the tip already holds, is no fast-forward either: git calls it behind too
    assert b.remote.push().kind == "behind"
    # a's HEAD is the tip now: its next swap is a fast-forward
    assert a.remote.swap({"Daily/x.md": b"x\n"}, "next", a.name, a.remote.head()).kind == "pushed"


def test_pull_brings_the_winners_claim(fleet: Machines) -> None:
    a, b = fleet.clone(), fleet.clone()
    won = claim(a, "aaaaaa")
    assert claim(b, "bbbbbb").kind == "behind"
    pulled = b.remote.pull()
    assert pulled.online and pulled.moved and not pulled.blocked and not pulled.ahead
    assert b.remote.head() == won.sha == b.remote.tip()
    assert b.notes.read(INBOX) == fleet.at_tip(INBOX) == b.notes.head_version(INBOX)[1]
    # now its claim is judged against the winner's: it goes through only as a new commit on top
    assert b.remote.pull().moved is False


def test_pull_never_overwrites_the_persons_uncommitted_lines(fleet: Machines) -> None:
    a, b = fleet.clone(), fleet.clone()
    assert claim(a, "aaaaaa").kind == "pushed"
    typing = (b.notes.read(INBOX) or b"") + b"\n## REQ-b Half typed\n"
    b.save(INBOX, typing)
    before = b.remote.head()
    pulled = b.remote.pull()
    assert pulled.online and pulled.blocked and not pulled.moved
    assert b.remote.head() == before and b.notes.read(INBOX) == typing


def test_a_file_already_at_the_remotes_version_is_no_change_of_the_persons(fleet: Machines) -> None:
    a, b = fleet.clone(), fleet.clone()
    assert claim(a, "aaaaaa").kind == "pushed"
    b.save(INBOX, fleet.at_tip(INBOX) or b"")  # a move cut short by a kill -9 left it so, or a sync tool
    pulled = b.remote.pull()
    assert pulled.moved and not pulled.blocked, pulled
    assert b.remote.head() == fleet.tip()


def test_adopt_refuses_a_head_that_moved(fleet: Machines) -> None:
    a = fleet.clone()
    head, committed = a.notes.head_version(INBOX)
    assert committed is not None
    pushed = a.remote.swap({"Daily/x.md": b"x\n"}, "vaultops: x", a.name, head)
    assert pushed.kind == "pushed"
    a.save("Daily/y.md", b"y\n")
    a.commit("Daily/y.md")  # obsidian-git committed meanwhile
    assert a.remote.adopt(pushed.sha, head, ["Daily/x.md"]) is False
    assert a.remote.head() != pushed.sha


def test_a_result_whose_claim_lost_is_fenced_out(fleet: Machines) -> None:
    a, b = fleet.clone(), fleet.clone()
    assert claim(a, "aaaaaa").kind == "pushed"
    assert claim(b, "bbbbbb").kind == "behind"
    assert b.remote.pull().moved
    # b ran nothing, but were it to record a result for its lost claim, the note refuses it
    late = Insert(Target("REQ-a"), result_lines("bbbbbb"), EVERY, claim="bbbbbb")
    pushed, dropped = push_inserts(b, [late])
    assert pushed is None and dropped == [(late, CLAIM_LOST)]
    mine = Insert(Target("REQ-a"), result_lines("aaaaaa"), EVERY, claim="aaaaaa")
    pushed, dropped = push_inserts(a, [mine])
    assert pushed is not None and pushed.kind == "pushed" and not dropped
    tip_inbox = fleet.at_tip(INBOX) or b""
    assert b"claim aaaaaa finished" in tip_inbox and b"bbbbbb" not in tip_inbox


def requests_in(raw: bytes | None) -> dict[str, list[str]]:
    """Each request id of the inbox with the claims of its locks, as a note parses."""
    found: dict[str, list[str]] = {}
    for r in parse_note(INBOX, raw or b"").requests:
        found.setdefault(r.id, []).append(r.lock.claim if r.lock else "")
    return found


def test_a_remote_that_cannot_be_reached_takes_nothing(fleet: Machines) -> None:
    a = fleet.clone()
    fleet.cut()
    pulled = a.remote.pull()
    assert not pulled.online and "cannot be reached" in pulled.reason and not pulled.ahead
    pushed = claim(a, "aaaaaa")
    assert (pushed.kind, pushed.problem) == ("failed", "unreachable")
    assert b"aaaaaa" not in (a.notes.read(INBOX) or b"")


def test_a_remote_that_refuses_says_why_and_takes_nothing(fleet: Machines) -> None:
    a = fleet.clone()
    tip = fleet.tip()
    fleet.refuse("branch main is protected")
    pushed = claim(a, "aaaaaa")
    assert (pushed.kind, pushed.problem) == ("failed", "refused")
    assert pushed.detail == "origin refused the push (pre-receive hook declined): branch main is protected"
    assert fleet.tip() == tip


def test_the_persons_commit_is_rebuilt_on_the_winners_claim(fleet: Machines) -> None:
    a, b = fleet.clone(), fleet.clone()
    asked = (b.notes.read(INBOX) or b"") + b"\n## REQ-b Another\n- ready: yes\nAnd this too.\n"
    b.save(INBOX, asked)
    b.commit(INBOX)  # obsidian-git committed it; it was not pushed yet
    assert claim(a, "aaaaaa").kind == "pushed"  # a's claim went under REQ-a, where REQ-b now follows
    pulled = b.remote.pull()
    assert pulled.online and pulled.ahead and pulled.moved and not pulled.blocked, pulled
    assert requests_in(b.notes.read(INBOX)) == {"REQ-a": ["aaaaaa"], "REQ-b": [""]}
    assert b.notes.read(INBOX) == b.notes.head_version(INBOX)[1]
    assert b.remote.push().kind == "pushed"
    assert fleet.at_tip(INBOX) == b.notes.read(INBOX)


def test_the_persons_edit_elsewhere_in_the_note_merges_with_a_claim(fleet: Machines) -> None:
    a, b = fleet.clone(), fleet.clone()
    edited = (b.notes.read(INBOX) or b"").replace(b"# Inbox\n", b"# My inbox\n")
    b.save(INBOX, edited)
    b.commit(INBOX)  # a change, not an insertion: git's three-way file merge takes it
    assert claim(a, "aaaaaa").kind == "pushed"
    pulled = b.remote.pull()
    assert pulled.online and pulled.moved and not pulled.blocked, pulled
    merged = b.notes.read(INBOX) or b""
    assert merged.startswith(b"# My inbox\n") and requests_in(merged) == {"REQ-a": ["aaaaaa"]}


def test_a_force_push_that_dropped_a_claim_gets_it_back(fleet: Machines) -> None:
    a = fleet.clone()
    start = fleet.tip()
    assert start is not None
    won = claim(a, "aaaaaa")
    assert won.kind == "pushed"
    fleet.rewrite(start)  # someone force-pushed the branch back to before the claim
    pulled = a.remote.pull()
    assert pulled.online and pulled.rewritten and pulled.ahead and not pulled.blocked, pulled
    assert requests_in(a.notes.read(INBOX)) == {"REQ-a": ["aaaaaa"]}
    assert a.remote.push().kind == "pushed"
    assert requests_in(fleet.at_tip(INBOX)) == {"REQ-a": ["aaaaaa"]}


# --- any interleaving ----------------------------------------------------------------------------------

# one step: which machine, and what it does: 0 swaps a claim from its HEAD, 1 pulls first, 2 is the person
# adding a line to a note every machine adds to, committed and not pushed (the claim's push carries it)
# and 3 the person adding a request at the end of the inbox, committed and not pushed; 4 the person typing
# in the inbox, saved and not committed (a pull that would overwrite it is refused)
STEPS = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 4)), min_size=1, max_size=8)
SHARED = "Daily/shared.md"


def _interleaving(side: str, root: Path, steps: list[tuple[int, int]]) -> list[object]:
    """Run ``steps``, check the promises, and return what was seen, for comparing the two sides."""
    fleet = machines(side, root)
    clones = [fleet.clone() for _ in range(3)]
    won: list[str] = []
    lost: list[str] = []
    seen: list[object] = []
    for n, (i, action) in enumerate(steps):
        m = clones[i]
        if action == 2:
            m.save(SHARED, (m.notes.read(SHARED) or b"") + f"- person {n}\n".encode())
            m.commit(SHARED)
            continue
        if action in (3, 4):
            typed = f"\n## REQ-p{n} Asked on {m.host}\n- ready: yes\n".encode()
            m.save(INBOX, (m.notes.read(INBOX) or b"") + typed)
            if action == 3:
                m.commit(INBOX)
            continue
        if action == 1:
            pulled = m.remote.pull()
            assert pulled.online, pulled
            seen.append(("pull", i, pulled.ahead, pulled.moved, bool(pulled.blocked)))
        path = f"Daily/claim-{n}.md"  # each swap's own file: in the tip if and only if it won
        head = m.remote.head()
        pushed = m.remote.swap({path: f"claim {n}\n".encode()}, f"claim {n}", m.name, head)
        assert pushed.kind in ("pushed", "behind"), pushed
        seen.append(("swap", i, pushed.kind))
        (won if pushed.kind == "pushed" else lost).append(path)
        if pushed.kind == "pushed":
            m.save(path, f"claim {n}\n".encode())
            assert m.remote.adopt(pushed.sha, head, [path])
            assert fleet.in_history(pushed.sha)
    assert all(fleet.at_tip(p) is not None for p in won), "a claim reported won is not on the remote"
    assert all(fleet.at_tip(p) is None for p in lost), "a claim reported lost landed"
    for m in clones:  # and every machine follows, once obsidian-git has committed what the person typed
        if m.notes.read(INBOX) != m.notes.head_version(INBOX)[1]:
            m.commit(INBOX)
        pulled = m.remote.pull()
        assert pulled.online and not pulled.blocked, pulled
        assert m.remote.push().kind == "pushed" or not pulled.ahead
        seen.append(("follow", pulled.ahead, pulled.moved, m.notes.read(SHARED), m.notes.read(INBOX)))
    everyone = fleet.at_tip(SHARED) or b""
    wanted = {f"- person {n}".encode() for n, (_, action) in enumerate(steps) if action == 2}
    assert wanted <= set(everyone.splitlines()), "a line the person committed was lost"
    asked = {f"REQ-p{n}": [""] for n, (_, action) in enumerate(steps) if action in (3, 4)}
    at_tip = requests_in(fleet.at_tip(INBOX))
    assert asked == {rid: at_tip.get(rid) for rid in asked}, "a request was lost or doubled"
    seen.append(("tip", everyone, sorted(won)))
    return seen


@pytest.mark.parametrize(("side", "examples"), [("memory", 300), ("real", 5)])
def test_any_interleaving_of_swaps_lands_exactly_the_claims_reported_won(side: str, examples: int) -> None:
    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(STEPS)
    def check(steps: list[tuple[int, int]]) -> None:
        with tempfile.TemporaryDirectory() as root:
            _interleaving(side, Path(root), steps)

    check()


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS)
def test_the_twin_sees_what_git_sees_step_by_step(steps: list[tuple[int, int]]) -> None:
    # every swap's answer, every pull's report, and the notes as each machine ends with them: the same
    with tempfile.TemporaryDirectory() as root:
        assert _interleaving("memory", Path(root), steps) == _interleaving("real", Path(root), steps)
