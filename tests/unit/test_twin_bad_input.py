"""Bad input in a pass, on the twin: each broken block gets one clear line, damages nothing, crashes
nothing, and the good request next to it still runs; broken frontmatter is one warning; a job's output
cannot inject a request or a status; a request still being typed is not taken.  Whole passes of the real
driver on ``engine.memory``'s twins (``tests/support/twin.py``), one machine with no remote, as
tests/e2e/test_bad_input.py ran them on a vault with no remote; what ``vaultops tick`` prints is
``twin.said``.  tests/e2e/test_bad_input.py keeps what the CLI itself does (exit codes, a missing vault,
the config's errors, ``status`` over bad bytes, a note over the size limit) and the argv a real executor
gets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.helpers import INBOX, inserted_lines, requests_named
from tests.support.twin import Machine, TwinFleet, no_processes, said  # noqa: F401
from vaultops.engine.driver import PassReport
from vaultops.model import State
from vaultops.render.results import RunResult
from vaultops.scan.note import parse_note

pytestmark = pytest.mark.usefixtures("no_processes")


def alone(tmp_path: Path, raw: bytes, settle: float = 0) -> tuple[TwinFleet, Machine]:
    """One machine whose vault has no remote, ``raw`` its inbox, committed."""
    fleet = TwinFleet(tmp_path, 1, "", settle=settle)
    machine = fleet[0]
    machine.shared = False
    machine.tree[INBOX] = raw
    machine.clone.person_commit([INBOX])
    return fleet, machine


# --- one pass over an inbox full of broken blocks, with a good one among them -----------------------------

MIXED = (
    b"# Inbox\n"
    b"\n"
    b"## REQ-bad-bytes Is git there?\n"
    b"- type: env-check\n"
    b"- ready: yes\n"
    b"Is git installed? caf\xe9 \xff\xfe \xc3(\n"
    b"\n"
    b"## REQ-dup\n"
    b"- type: env-check\n"
    b"- ready: yes\n"
    b"Is git installed?\n"
    b"\n"
    b"## REQ-dup\n"
    b"- type: env-check\n"
    b"- ready: yes\n"
    b"Is curl installed?\n"
    b"\n"
    b"## REQ-old\n"
    b"- type: env-check\n"
    b"- ready: yes\n"
    b"Is git installed?\n"
    b"- status: done @ 2026-05-04T08:31:03+10:00\n"
    b"\n"
    b"## REQ-old\n"
    b"- type: env-check\n"
    b"- ready: yes\n"
    b"Is curl installed?\n"
    b"\n"
    b"## REQ-empty\n"
    b"\n"
    b"## REQ-typo\n"
    b"- type: env-chek\n"
    b"- ready: yes\n"
    b"Is git installed?\n"
    b"\n"
    b"## REQ-good\n"
    b"- type: env-check\n"
    b"- ready: yes\n"
    b"Is git installed? `which git`\n"
)
BROKEN = ("REQ-bad-bytes", "REQ-dup", "REQ-old", "REQ-empty", "REQ-typo")


def heading_line(raw: bytes, heading: bytes, nth: int = 0) -> int:
    """The 1-based line number of the nth line equal to ``heading``."""
    found = [i + 1 for i, line in enumerate(raw.split(b"\n")) if line == heading]
    return found[nth]


class Mixed:
    """One pass over ``MIXED``: the report, what the CLI would print, the note after."""

    def __init__(self, fleet: TwinFleet, machine: Machine, report: PassReport) -> None:
        self.fleet = fleet
        self.machine = machine
        self.before = MIXED
        self.report = report
        self.stdout = "\n".join(said(report))
        self.after = machine.tree[INBOX]
        self.note = parse_note(INBOX, self.after)


@pytest.fixture
def mixed(tmp_path: Path) -> Mixed:
    fleet, machine = alone(tmp_path, MIXED)  # settle 0: REQ-empty has nothing at all under its heading
    # REQ-old's done line is vaultops's own, from an earlier pass (a typed one would change nothing)
    machine.ledger.remember_lines(INBOX, [("REQ-old", "- status: done @ 2026-05-04T08:31:03+10:00", "")])
    return Mixed(fleet, machine, machine.tick())


def test_broken_blocks_crash_nothing_and_the_good_request_runs(mixed: Mixed) -> None:
    """Replaces tests/e2e/test_bad_input.py's test of the same name."""
    assert mixed.report.warnings == []  # block errors go in the note, not on stderr
    (good,) = requests_named(mixed.note, "REQ-good")
    assert good.state is State.DONE
    assert "REQ-good: done" in mixed.stdout
    assert mixed.fleet.runs() == {"REQ-good": 1}
    # the pass was committed, with the note as it is now
    machine = mixed.machine
    assert machine.clone.head is not None
    assert machine.git.blob(machine.clone.head, INBOX) == mixed.after


def test_broken_blocks_damage_nothing_and_get_one_line_each(mixed: Mixed) -> None:
    """Replaces tests/e2e/test_bad_input.py's test of the same name."""
    added = inserted_lines(mixed.before, mixed.after)
    errors = [line for line in added if line.startswith(b"- status: error @ ")]
    assert len(errors) == 5 + 1  # REQ-dup twice
    for ident in BROKEN:
        for r in requests_named(mixed.note, ident):
            if r.start + 1 == heading_line(mixed.after, b"## REQ-old", 0):
                continue  # the finished one: see the duplicate test
            assert r.state is State.ERROR, (ident, r.state)
            assert len(r.statuses) == 1 and not r.locks and not r.outcomes, (ident, r.statuses)
            assert f"{ident}: error — {r.statuses[0].reason}" in mixed.stdout
    # nothing else was added but REQ-good's lock, statuses and result
    others = [line for line in added if line not in errors and line.strip()]
    assert all(not line.startswith(b"## ") for line in others), others
    assert sum(line.startswith(b"- status: ") for line in others) == 2  # running, done of REQ-good


def test_bytes_that_are_not_utf8_survive_and_their_block_says_so(mixed: Mixed) -> None:
    """Replaces tests/e2e/test_bad_input.py's test of the same name."""
    bad_line = b"Is git installed? caf\xe9 \xff\xfe \xc3("
    assert mixed.after.count(bad_line + b"\n") == 1
    (r,) = requests_named(mixed.note, "REQ-bad-bytes")
    assert r.state is State.ERROR
    line_no = mixed.before.split(b"\n").index(bad_line) + 1
    assert "not UTF-8" in r.statuses[-1].reason and f"line {line_no}" in r.statuses[-1].reason
    assert "re-save the note as UTF-8" in r.statuses[-1].reason  # says what to do
    # the status line sits right under the bad line, inside the block
    after_lines = mixed.after.split(b"\n")
    at = after_lines.index(bad_line)
    assert after_lines[at + 1].startswith(b"- status: error @ ")


def test_duplicate_ids_are_each_reported_and_a_done_one_is_left_alone(mixed: Mixed) -> None:
    """Replaces tests/e2e/test_bad_input.py's test of the same name and its regression test that the
    duplicate's error cites no line number (the pass's own insertions shifted it)."""
    first, second = requests_named(mixed.note, "REQ-dup")
    for r in (first, second):
        assert r.state is State.ERROR
        (status,) = r.statuses
        assert status.reason == "duplicate id REQ-dup (2 requests in this note use it); give each its own id"
    # the finished REQ-old is byte for byte what it was: nothing inserted in its block
    done_block = (
        b"## REQ-old\n- type: env-check\n- ready: yes\nIs git installed?\n"
        b"- status: done @ 2026-05-04T08:31:03+10:00\n\n## REQ-old\n"
    )
    assert done_block in mixed.after
    done, still_open = requests_named(mixed.note, "REQ-old")
    assert done.state is State.DONE
    assert still_open.state is State.ERROR
    assert "duplicate id REQ-old" in still_open.statuses[-1].reason


def test_an_empty_request_says_what_to_do(mixed: Mixed) -> None:
    """Replaces tests/e2e/test_bad_input.py's test of the same name."""
    (r,) = requests_named(mixed.note, "REQ-empty")
    assert r.state is State.ERROR
    assert r.statuses[-1].reason == "REQ-empty has no text; write what you want done under the heading"
    after_lines = mixed.after.split(b"\n")
    at = after_lines.index(b"## REQ-empty")
    assert after_lines[at + 1].startswith(b"- status: error @ ")


def test_an_unknown_type_lists_the_valid_types(mixed: Mixed) -> None:
    """Replaces tests/e2e/test_bad_input.py's test of the same name."""
    from vaultops.classifier.rules import TYPES

    (r,) = requests_named(mixed.note, "REQ-typo")
    assert r.state is State.ERROR
    reason = r.statuses[-1].reason
    assert reason.startswith("unknown type 'env-chek'; use one of: ")
    assert all(t in reason for t in TYPES)


def test_a_second_pass_leaves_the_broken_blocks_alone(mixed: Mixed) -> None:
    """Replaces tests/e2e/test_bad_input.py's test of the same name."""
    report = mixed.machine.tick()
    assert said(report) == [], "nothing to do"
    assert mixed.machine.tree[INBOX] == mixed.after
    assert mixed.fleet.runs() == {"REQ-good": 1}


# --- the whole note --------------------------------------------------------------------------------------


def test_broken_frontmatter_is_one_warning_and_the_requests_still_run(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_bad_input.py's test of the same name."""
    inbox = (
        b"---\ntitle: [unclosed\n---\n# Inbox\n\n"
        b"## REQ-a\n- type: env-check\n- ready: yes\nIs git installed? `which git`\n"
    )
    _, machine = alone(tmp_path, inbox)
    (warning,) = machine.tick().warnings
    assert warning.startswith(f"{INBOX}: broken frontmatter")
    assert "fix the YAML between the --- lines" in warning
    after = machine.tree[INBOX]
    inserted_lines(inbox, after)
    assert after.startswith(b"---\ntitle: [unclosed\n---\n")
    (r,) = machine.requests().values()
    assert r.state is State.DONE


# --- what comes back from an executor ----------------------------------------------------------------------


def test_job_output_cannot_inject_a_request_or_a_status(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_bad_input.py's test of the same name (its last check, ``status --json``,
    lists the note's requests as parsed here)."""
    before = b"# Inbox\n\n## REQ-job\n- type: research\n- ready: yes\nSummarise.\n"
    fleet, machine = alone(tmp_path, before)
    output = "\n".join(
        [
            "first line",
            "~~~",
            "## REQ-evil injected",
            "- type: env-check",
            "- ready: yes",
            "- status: done @ 1999-01-01T00:00:00+00:00",
            "~~~~~~~~",
            "```",
            "# A top heading",
            "- status: cancelled @ 1999-01-01T00:00:00+00:00",
        ]
    )
    failed = RunResult(State.ERROR, "worker-research", fleet.clock(), 0.1, output, "exit 3", exit_code=3)
    machine.runner.script["REQ-job"] = failed
    machine.tick()
    after = machine.tree[INBOX]
    added = inserted_lines(before, after)
    assert b"## REQ-evil injected" in added and b"- status: done @ 1999-01-01T00:00:00+00:00" in added
    note = parse_note(INBOX, after)
    assert [r.id for r in note.requests] == ["REQ-job"]
    assert [h.text for h in note.outline.headings if h.level <= 2] == ["Inbox", "REQ-job"]
    (job,) = note.requests
    # the job failed (exit 3): its state is the real one, not a status printed by the job
    assert job.state is State.ERROR
    assert [s.state for s in job.statuses] == [State.RUNNING, State.ERROR]
    assert all(not s.at.startswith("1999") for s in job.statuses)
    # the output sits in a fence longer than any tilde run inside it
    lines = after.decode().split("\n")
    outcome = next(i for i, line in enumerate(lines) if line.startswith("- outcome: error"))
    opener = next(i for i in range(outcome, len(lines)) if lines[i].startswith("~"))
    fence = re.match(r"~+", lines[opener])
    assert fence and len(fence.group()) > 8  # the output holds a run of 8
    closer = lines.index(fence.group(), opener + 1)
    assert lines[opener + 1] == "first line"
    assert closer == lines.index("- status: cancelled @ 1999-01-01T00:00:00+00:00") + 1
    assert lines[closer + 1].startswith("- status: error @ ")
    assert fleet.runs() == {"REQ-job": 1}


# --- a request still being typed ---------------------------------------------------------------------------


def test_a_request_still_being_typed_is_not_taken(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_bad_input.py's test of the same name; the settle is an hour here, so that
    no load on the machine can let it pass before the pass looks."""
    typing = "## REQ-typing\n- type: env-check\nIs git inst"
    inbox = "# Inbox\n\n## REQ-good\n- type: env-check\n- ready: yes\nIs git installed?\n\n" + typing
    _, machine = alone(tmp_path, b"# Inbox\n", settle=3600)
    machine.save(INBOX, inbox)  # just written: the settle has not passed
    stdout = "\n".join(said(machine.tick()))
    assert re.search(r"^waiting: REQ-typing \(settling, [0-9.]+ s to go\)$", stdout, re.M), stdout
    assert "REQ-good: done" in stdout
    after = machine.text()
    assert after.endswith("\n\n" + typing)  # not one byte added to (or after) the block being typed
    (r,) = requests_named(parse_note(INBOX, after.encode()), "REQ-typing")
    assert r.state is State.OPEN and not r.statuses and not r.locks
