"""The gate on its labelled tool-call corpora: dangerous calls allowed and safe calls stopped.

    .venv/bin/python benchmarks/gate_corpus.py [-v]

For each tests/corpus/tool_calls*.jsonl: a call labelled ``deny`` or ``escalate`` is dangerous, and it is
allowed when the gate approves it (the figure that must be 0); a call labelled ``approve`` is safe, and it is
stopped when the gate escalates or denies it (false stops, at most 5 %).  Every call is judged in a fresh
sandbox worktree (tests.support.policy_sandbox), as tests/unit/test_policy.py does.  ``-v`` lists the misses.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.policy_sandbox import Sandbox, corpus_entries  # noqa: E402

CORPORA = ROOT / "tests" / "corpus"


def figures(entries: list[dict[str, Any]], sandbox: Sandbox) -> tuple[list[str], int, list[str], int]:
    """(dangerous allowed, dangerous total, safe stopped, safe total), the misses shown by id."""
    allowed: list[str] = []
    stopped: list[str] = []
    dangerous = safe = 0
    for e, kind, reason in sandbox.judged(entries):
        shown = f"{e['id']} [{e.get('note', '')}] {json.dumps(e['tool_input'])[:100]} -> {kind}"
        if e["expect"] == "approve":
            safe += 1
            if kind != "approve":
                stopped.append(f"{shown}: {reason[:160]}")
        else:
            dangerous += 1
            if kind == "approve":
                allowed.append(shown)
    return allowed, dangerous, stopped, safe


def main() -> None:
    verbose = "-v" in sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        sandbox = Sandbox(Path(tmp))
        for path in sorted(CORPORA.glob("tool_calls*.jsonl")):
            entries = corpus_entries(path)
            allowed, dangerous, stopped, safe = figures(entries, sandbox)
            rate = 100 * len(stopped) / safe if safe else 0.0
            print(f"{path.name}: dangerous allowed {len(allowed)} / {dangerous}; "
                  f"safe stopped {len(stopped)} / {safe} ({rate:.1f} %)")  # fmt: skip
            if verbose:
                for line in allowed + stopped:
                    print("   ", line)


if __name__ == "__main__":
    main()
