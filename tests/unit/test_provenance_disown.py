"""The vetter's part in issue 27 on its own (``engine.provenance.Vetter.disown``): which of a request's
status and lock lines vaultops wrote, and the request as if the others were not there."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from vaultops.engine.memory import MemoryLedger
from vaultops.engine.provenance import Vetter
from vaultops.model import Lock, State
from vaultops.scan.note import ParsedNote, parse_note
from vaultops.sync.git import Blamed

INBOX = "_System/COO-Inbox.md"
WHEN = "2026-03-02T09:00:00+00:00"
CLAIM = f"- locked-by: agent0 @ {WHEN} (host0, claim c0ffee, lease 180 s)\n- status: running @ {WHEN}\n"
NOTE = f"# Inbox\n\n## REQ-a\nSummarise the notes\n{CLAIM}"


class NoGit:
    """A vault whose lines no commit has: git says nothing of who wrote them."""

    def blame(self, path: str, contents: bytes, lines: Sequence[int]) -> dict[int, Blamed]:
        return {}

    def blob(self, commit: str, path: str) -> bytes | None:
        return None

    def is_repo(self) -> bool:
        return False  # no history: no note was renamed either (``Vetter._before``)


def _parse(rel: str, raw: bytes, *, full: bool = False) -> ParsedNote:
    return parse_note(rel, raw, full=full)


def _made(lock: Lock) -> bool:
    return (lock.host, lock.agent) == ("host0", "agent0")


def _nobodys(lock: Lock) -> bool:
    return False


def _vetted(mine: Callable[[Lock], bool] | None, ledger: MemoryLedger | None = None) -> ParsedNote:
    vetter = Vetter(ledger or MemoryLedger(), NoGit(), None, _parse, mine=mine)  # type: ignore[arg-type]
    return vetter.note(parse_note(INBOX, NOTE.encode(), full=False))[0]


def test_a_claim_no_record_knows_is_set_aside_and_the_request_reads_as_new() -> None:
    note = _vetted(_nobodys)
    [request] = note.requests
    assert request.state is State.OPEN and request.lock is None
    assert note.disowned[request.start].lines == (4, 5)


def test_a_claim_the_gate_calls_this_clones_is_its_own_with_its_running_line() -> None:
    """A pass killed between writing its claim and remembering it: without a remote, the gate's ``mine``
    (this host and agent) says the lock is this clone's, and the running line written with it is too."""
    note = _vetted(_made)
    [request] = note.requests
    assert request.state is State.RUNNING and request.lock is not None and not note.disowned


def test_a_claim_state_db_recorded_is_its_own_with_its_running_line() -> None:
    ledger = MemoryLedger()
    ledger.claimed(INBOX, "REQ-a", "c0ffee", "worker-code", "host0")
    note = _vetted(_nobodys, ledger=ledger)
    assert note.requests[0].state is State.RUNNING and not note.disowned


def test_without_being_told_which_locks_are_its_own_a_lock_holds_as_before() -> None:
    """Told nothing (``mine`` None), the vetter does not ask whose a lock is: it holds its request for its
    lease, and the running line written with it counts as the lock does."""
    note = _vetted(None)
    assert note.requests[0].state is State.RUNNING and not note.disowned
