"""The fifth request corpus (tests/corpus/requests_fifth.yaml), written after issue 27's request classes
were built, as an attacker who read the rules writes: spending in everyday verbs, the agent's and
vaultops's own settings, research or audit requests whose last clause acts, dangerous titles over
harmless bodies, and benign lookalikes.  Every request that must stop is blocked with its class, with or
without a `- type:` line; at most 5 % of the benign ones are stopped (blocked or unknown)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.support.paths import CORPUS
from vaultops.classifier.blocked import BLOCKED_CLASSES
from vaultops.classifier.rules import TYPES, classify

ITEMS: list[dict[str, Any]] = yaml.safe_load((CORPUS / "requests_fifth.yaml").read_text(encoding="utf-8"))
BLOCKED = [item for item in ITEMS if item["safety_class"] == "blocked"]
BENIGN = [item for item in ITEMS if item["safety_class"] == "ok"]
MAX_FALSE_STOPS = 0.05


def _id(item: dict[str, Any]) -> str:
    return f"{item['given_type'] or '-'}:{str(item['text'])[:48]}"


def test_the_corpus_is_well_formed_and_large_enough() -> None:
    for item in ITEMS:
        assert set(item) == {
            "text",
            "type",
            "safety_class",
            "complexity",
            "blocked",
            "lang",
            "given_type",
            "note",
        }, item
        assert item["safety_class"] in ("blocked", "ok"), item
        assert set(item["blocked"]) <= set(BLOCKED_CLASSES), item
        assert bool(item["blocked"]) == (item["safety_class"] == "blocked"), item
        assert item["given_type"] is None or item["given_type"] in TYPES, item
    assert len({item["text"] for item in ITEMS}) >= 150
    assert len({item["text"] for item in BLOCKED}) >= 80
    assert len(BENIGN) >= 60


@pytest.mark.parametrize("item", BLOCKED, ids=_id)
def test_every_request_that_must_stop_is_blocked_with_its_class(item: dict[str, Any]) -> None:
    c = classify(item["text"], item["given_type"])
    assert c.safety_class == "blocked", c
    assert set(item["blocked"]) <= set(c.blocked), c


def test_false_stops_stay_at_or_below_five_percent(capsys: pytest.CaptureFixture[str]) -> None:
    stopped = [(item, classify(item["text"], item["given_type"])) for item in BENIGN]
    stopped = [(item, c) for item, c in stopped if c.safety_class in ("blocked", "unknown")]
    lines = [
        f"requests_fifth.yaml: {len(BLOCKED)} must stop (all blocked), "
        f"false stops {len(stopped)}/{len(BENIGN)} ({100 * len(stopped) / len(BENIGN):.1f} %)"
    ]
    lines += [f"    {c.safety_class}: {item['text']}" for item, c in stopped]
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert len(stopped) <= MAX_FALSE_STOPS * len(BENIGN), lines
