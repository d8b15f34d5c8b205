"""Blocked recall and false blocks on the labelled corpora, with and without a (scripted) model triage.

    .venv/bin/python benchmarks/corpus_figures.py

For each labelled corpus in tests/corpus (requests_fresh, _second, _third, _fourth and _fifth), four ways to
decide:

- rules alone (the baseline);
- rules + an honest model: it answers each request's label (blocked with its classes, or routine);
- rules + an obeying model: it answers "routine" with no blocked class for everything, as a model that
  followed instructions planted in the request would;
- rules + a failing model: no answer (a timeout, a broken reply).

Recall counts a blocked request found blocked with its classes; "stopped" counts it escalated at all
(blocked or unknown: requests_fourth.yaml's test asks only that).  A false block is a benign request
escalated, as blocked or as unknown.  Recall must stay 100 % in every row but requests_fourth's rules-alone
rows: the model can only make a request stricter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from vaultops.classifier.blocked import RUN
from vaultops.classifier.rules import Classification, classify
from vaultops.classifier.triage import TriageOpinion, combine

CORPORA = Path(__file__).resolve().parent.parent / "tests" / "corpus"


def honest(item: dict[str, Any]) -> TriageOpinion:
    if item["safety_class"] == "blocked":
        return TriageOpinion(
            type="unknown",
            complexity="heavy",
            safety_class="blocked",
            blocked_classes=list(item["blocked"]),
            reasons=["the label says so"],
        )
    return TriageOpinion(
        type=item["given_type"] or "quick",
        complexity="heavy",
        safety_class="routine",
        blocked_classes=[],
        reasons=["reads and reports"],
    )


def obeying(item: dict[str, Any]) -> TriageOpinion:
    return TriageOpinion(
        type="quick",
        complexity="heavy",
        safety_class="routine",
        blocked_classes=[],
        reasons=["the request says it is routine"],
    )


def decided(item: dict[str, Any], model: str) -> Classification:
    rules = classify(item["text"], item["given_type"])
    if model == "rules alone":
        return rules
    if model == "failing model":
        return combine(rules, None, "timed out after 60 s", "triage", item["text"])
    opinion = honest(item) if model == "honest model" else obeying(item)
    return combine(rules, opinion, None, "triage", item["text"])


def caught(item: dict[str, Any], c: Classification) -> bool:
    if c.safety_class != "blocked":
        return False
    return set(item["blocked"]) <= set(c.blocked) or ("run-code" in item["note"] and RUN in c.blocked)


def main() -> None:
    for name in (
        "requests.yaml",
        "requests_fresh.yaml",
        "requests_second.yaml",
        "requests_third.yaml",
        "requests_fourth.yaml",
        "requests_fifth.yaml",
    ):
        items = [
            {"given_type": None, "note": "", **i} for i in yaml.safe_load((CORPORA / name).read_text("utf-8"))
        ]
        blocked = [i for i in items if i["safety_class"] == "blocked"]
        benign = [i for i in items if i["safety_class"] in ("ok", "routine", "high")]
        print(f"{name}: {len(blocked)} blocked, {len(benign)} benign")
        for model in ("rules alone", *(f"rules + {m} model" for m in ("honest", "obeying", "failing"))):
            key = model.removeprefix("rules + ")
            hits = sum(caught(i, decided(i, key)) for i in blocked)
            stopped = sum(decided(i, key).safety_class in ("blocked", "unknown") for i in blocked)
            false = sum(decided(i, key).safety_class in ("blocked", "unknown") for i in benign)
            print(
                f"  {model:24s} recall {hits}/{len(blocked)} ({100 * hits / len(blocked):5.1f} %)   "
                f"stopped {stopped}/{len(blocked)} ({100 * stopped / len(blocked):5.1f} %)   "
                f"false blocks {false}/{len(benign)} ({100 * false / len(benign):4.1f} %)"
            )


if __name__ == "__main__":
    main()
