"""How long the classifier takes per request, and what reading like a careful person costs.

    .venv/bin/python benchmarks/classify.py [--rounds N]

Over every text of both corpora (tests/corpus/*.yaml), timed per request:

- classify(): normalise the text, read it as written, normalised and step by step, outcome phrases, types
  (its cache cleared each round: a daemon's later passes hit it for requests that did not change);
- the baseline: the rules alone on the text as written (``find_blocked`` on ``fold``), which is
  what the classifier did for blocked classes before it read normalised text, steps and outcomes.

Prints the median and p99 in microseconds and the ratio against the baseline.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from vaultops.classifier import rules
from vaultops.classifier.blocked import find_blocked
from vaultops.classifier.rules import classify
from vaultops.classifier.vocabulary import fold, scan

CORPORA = Path(__file__).resolve().parent.parent / "tests" / "corpus"


def texts() -> list[str]:
    found: list[str] = []
    for name in ("requests.yaml", "requests_fresh.yaml", "requests_second.yaml", "requests_third.yaml"):
        found += [str(item["text"]) for item in yaml.safe_load((CORPORA / name).read_text(encoding="utf-8"))]
    return found


def rules_alone(text: str) -> object:
    low = fold(text)
    return find_blocked(text, low, scan(low))


def timed(fn: Callable[[str], object], items: list[str], rounds: int) -> list[float]:
    for text in items:  # warm the caches, as a running daemon has them
        fn(text)
    out = []
    for _ in range(rounds):
        rules._secrets_named.cache_clear()  # time the work, not the cache a daemon's later passes hit
        for text in items:
            start = time.perf_counter_ns()
            fn(text)
            out.append((time.perf_counter_ns() - start) / 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    items = texts()
    base = timed(rules_alone, items, args.rounds)
    full = timed(lambda t: classify(t), items, args.rounds)
    for name, values in (("rules alone (baseline)", base), ("classify()", full)):
        p99 = statistics.quantiles(values, n=100)[98]
        print(f"{name:24s} median {statistics.median(values):7.1f} µs   p99 {p99:7.1f} µs")
    print(
        f"ratio classify/baseline: median {statistics.median(full) / statistics.median(base):.1f}x over "
        f"{len(items)} requests x {args.rounds} rounds"
    )


if __name__ == "__main__":
    main()
