"""state.db's contract as the engine uses it: flags, the claims this clone made, runs and what they cost.
A state.db file, and the twin (``StateDB`` on an in-memory database)."""

from __future__ import annotations

import time

from vaultops.engine.ports import Ledger


def test_a_flag_is_what_was_last_set(ledger: Ledger) -> None:
    assert ledger.get("said-not-committed:x") is None
    ledger.set("said-not-committed:x", "1")
    ledger.set("said-not-committed:x", "2")
    assert ledger.get("said-not-committed:x") == "2"


def test_a_claim_is_known_from_before_its_push_until_it_is_dropped(ledger: Ledger) -> None:
    assert not ledger.knows_claim("aaaaaa")
    ledger.claimed("inbox.md", "REQ-a", "aaaaaa", "direct", "host0", "claiming")
    assert ledger.knows_claim("aaaaaa")  # a kill -9 right after the push leaves it in the note
    ledger.drop_claims(["aaaaaa"])  # the push lost
    assert not ledger.knows_claim("aaaaaa")
    ledger.claimed("inbox.md", "REQ-a", "bbbbbb", "direct", "host0", "claiming")
    ledger.confirm_claims(["bbbbbb"])
    ledger.drop_claims(["bbbbbb"])  # a confirmed claim is no longer "claiming": it stays
    assert ledger.knows_claim("bbbbbb")


def test_costs_are_counted_from_when_runs_started(ledger: Ledger) -> None:
    before = time.time() - 1
    run = ledger.run_started("inbox.md", "REQ-a", "aaaaaa", 1, "worker-code", "host0", 123)
    assert ledger.unfinished_runs("host0")[0]["id"] == run
    ledger.run_ended(run, "done", 0, 1.5, None, 0.25)
    other = ledger.run_started("inbox.md", "REQ-b", "bbbbbb", 1, "worker-code", "host0", None)
    ledger.run_ended(other, "error", 1, 0.5, None, 0.5)
    assert ledger.cost_since(before) == 0.75
    assert ledger.cost_since(time.time() + 60) == 0.0
    assert ledger.unfinished_runs("host0") == []
    last = ledger.last_heavy_run("inbox.md", "REQ-a")
    assert last is not None and last["claim"] == "aaaaaa" and last["outcome"] == "done"


def test_a_version_is_first_seen_once(ledger: Ledger) -> None:
    assert ledger.first_seen("inbox.md", "REQ-a", "h1", 100.0) == 100.0
    assert ledger.first_seen("inbox.md", "REQ-a", "h1", 200.0) == 100.0
    assert ledger.first_seen("inbox.md", "REQ-a", "h2", 200.0) == 200.0


def test_lines_it_wrote_are_its_own_until_consumed(ledger: Ledger) -> None:
    line = "- status: escalated @ 2026-05-04T09:00:00+00:00"
    assert not ledger.wrote_line("inbox.md", "REQ-a", line)
    ledger.remember_lines("inbox.md", [("REQ-a", line, "hash")])
    own = ledger.own_line("inbox.md", "REQ-a", line)
    assert own is not None and own.seen == "hash" and not own.consumed
    ledger.consume("inbox.md", "REQ-a", line)
    own = ledger.own_line("inbox.md", "REQ-a", line)
    assert own is not None and own.consumed
    assert not ledger.wrote_line("other.md", "REQ-a", line)
