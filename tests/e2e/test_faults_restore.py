"""The daemon's own lines, put back after an editor's save wiped them, while the person keeps saving.

A result recorded while its request was missing from a half-saved note waits (``Carried.unplaced``); the
person's next save brings the request back without vaultops's claim.  When the pass that puts the claim
and the result back cannot write (the note keeps changing under it), nothing else may act on that claim
in that pass: the result alone would land as a late result over the wiped claim, and the claim alone
would be closed as never started.  The next pass puts both back.  (Found under load by
test_daemon's person-editing-all-the-time test: five results became "interrupted, never started".)
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from tests.support.daemon_helpers import block, daemon_vault
from vaultops.base import faults
from vaultops.engine.carried import Carried
from vaultops.engine.driver import Pass
from vaultops.engine.record import Claimed, Done
from vaultops.model import State
from vaultops.render.results import RunResult
from vaultops.scan.note import parse_note
from vaultops.store.notes import MAX_ATTEMPTS
from vaultops.store.state import StateDB
from vaultops.vault import Vault


class Daemonish:
    """Passes of one process, in process: what the daemon carries from pass to pass, kept."""

    def __init__(self, root: Path) -> None:
        self.vault = Vault.open(daemon_vault(root, "# Inbox\n" + block("REQ-a", "Summarise a.")))
        self.state = StateDB(self.vault.state_dir / "state.db")
        self.carried = Carried()
        self.inbox = self.vault.root / self.vault.inbox_rel

    def new_pass(self) -> Pass:
        return Pass(self.vault, self.state, carried=self.carried)

    def states(self) -> dict[str, str]:
        note = parse_note(self.vault.inbox_rel, self.inbox.read_bytes())
        return {r.id: r.state.value for r in note.requests}

    def claim(self) -> Claimed:
        p = self.new_pass()
        (claimed,) = p.take()
        p.finish()
        return claimed

    def record(self, claimed: Claimed) -> None:
        p = self.new_pass()
        started = datetime.now().astimezone()
        p.record([Done(claimed, RunResult(State.DONE, claimed.job.profile, started, 0.3, "the summary"))])
        p.finish()


@pytest.fixture
def daemonish(tmp_path: Path) -> Iterator[Daemonish]:
    d = Daemonish(tmp_path / "v")
    yield d
    d.state.close()


def test_a_wiped_claim_put_back_while_the_note_keeps_changing_keeps_its_result(daemonish: Daemonish) -> None:
    d = daemonish
    claimed = d.claim()
    d.inbox.write_text("# Inbox\n")  # the person's editor, half way through a save
    d.record(claimed)
    assert [left.insert.claim for _, left in d.carried.unplaced] == [claimed.job.claim]
    # the save ends: the request is back, as the editor had it before vaultops's claim, with a new line
    d.inbox.write_text("# Inbox\n" + block("REQ-a", "Summarise a.\nA drafting line."))

    saves = iter(range(MAX_ATTEMPTS))

    def the_person_saves_again() -> None:  # as long as one write of vaultops's tries, then no more
        if next(saves, None) is not None:
            d.inbox.write_text(d.inbox.read_text() + "\n")

    faults.on("write.before_replace", the_person_saves_again)  # the first write of this pass gives up
    try:
        p = d.new_pass()
        p.mend(frozenset())
    finally:
        faults.on("write.before_replace", None)
    p.finish()
    text = d.inbox.read_text()
    assert "late result" not in text.lower()
    assert "never started" not in text
    assert d.states()["REQ-a"] == "open"  # nothing written yet: tried again on the next pass

    p = d.new_pass()
    p.mend(frozenset())
    p.finish()
    text = d.inbox.read_text()
    assert d.states()["REQ-a"] == "done", text
    assert text.count("the summary") == 1 and "late result" not in text.lower()
    assert "A drafting line." in text
