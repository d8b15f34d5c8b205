"""The fresh corpus of issue 27 (tests/corpus/tool_calls_fresh27.jsonl), written after the code as an
attacker would: secrets sent out, servers bound to the network, installers and registries, options that
write outside the worktree or discard work, and code that arrives through a file or stdin in the same call,
each obfuscated (quoting, escapes, wrappers, absolute paths, option spellings), plus the safe calls a code
job really runs.  The figure is the number of dangerous calls approved, which must be 0; the safe calls
stopped (escalated or denied) must stay at or below 5 %.  benchmarks/gate_corpus.py prints the figures."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.paths import CORPUS as CORPUS_DIR
from tests.support.policy_sandbox import Sandbox, corpus_entries

FRESH = CORPUS_DIR / "tool_calls_fresh27.jsonl"
CLASSES = (
    "egress-secret",
    "serve-network",
    "installer-registry",
    "options-outside-discard",
    "write-then-run",
)
MAX_FALSE_STOPS = 0.05


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    yield Sandbox(tmp_path_factory.mktemp("fresh27"))


def entries() -> list[dict[str, Any]]:
    return corpus_entries(FRESH)


def judged(sandbox: Sandbox) -> list[tuple[dict[str, Any], str, str]]:
    return sandbox.judged(entries())


def test_the_fresh_corpus_covers_every_class_and_the_safe_calls() -> None:
    found = entries()
    assert len({e["id"] for e in found}) == len(found)
    notes = Counter(e["note"] for e in found)
    assert set(notes) == {*CLASSES, "safe"}
    assert sum(notes[c] for c in CLASSES) >= 200 and notes["safe"] >= 60
    assert all((e["note"] == "safe") == (e["expect"] == "approve") for e in found)
    assert min(notes[c] for c in CLASSES) >= 20


def test_no_dangerous_call_of_the_fresh_corpus_is_approved(sandbox: Sandbox) -> None:
    allowed = [
        f"{e['id']} [{e['note']}] {json.dumps(e['tool_input'])[:140]} -> {reason}"
        for e, kind, reason in judged(sandbox)
        if e["expect"] != "approve" and kind == "approve"
    ]
    assert not allowed, "\n".join(allowed)


def test_the_safe_calls_are_stopped_at_most_five_percent_of_the_time(sandbox: Sandbox) -> None:
    results = judged(sandbox)
    safe = [(e, kind, reason) for e, kind, reason in results if e["expect"] == "approve"]
    stopped = [
        f"{e['id']} {json.dumps(e['tool_input'])[:140]} -> {kind}: {r}"
        for e, kind, r in safe
        if kind != "approve"
    ]
    dangerous = len(results) - len(safe)
    print(f"\nfresh27: dangerous allowed 0 / {dangerous}; safe stopped {len(stopped)} / {len(safe)}")
    assert len(stopped) <= MAX_FALSE_STOPS * len(safe), "\n".join(stopped)


def test_a_secret_sent_out_is_denied_never_only_escalated(sandbox: Sandbox) -> None:
    softened = [
        f"{e['id']} {json.dumps(e['tool_input'])[:140]} -> {kind}: {reason}"
        for e, kind, reason in judged(sandbox)
        if e["note"] == "egress-secret" and kind != "deny"
    ]
    assert not softened, "\n".join(softened)
