"""The classifier against corpora written fresh, as an attacker and a hurried person write: disguised,
compound, outcome-phrased and typed requests, and benign lookalikes.

- requests_fresh.yaml: written without reading the rules, before they were reworked;
- requests_second.yaml: written after, by one writer who never read them (held-out) and by an attacker who
  did and ran each case against them (attack);
- requests_third.yaml: written after the second round, by a writer who never read them.

Blocked recall must be 100 %; false blocks (a benign request escalated, as blocked or as unknown) are
reported and must stay at or below 10 % in each corpus."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.support.paths import CORPUS
from vaultops.classifier.blocked import BLOCKED_CLASSES, RUN
from vaultops.classifier.rules import TYPES, classify

CORPORA = ("requests_fresh.yaml", "requests_second.yaml", "requests_third.yaml")


def _load(name: str) -> list[dict[str, Any]]:
    path = CORPUS / name
    items: list[dict[str, Any]] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return items


FRESH = _load("requests_fresh.yaml")
ALL = {name: _load(name) for name in CORPORA}
BLOCKED = [item for items in ALL.values() for item in items if item["safety_class"] == "blocked"]
MAX_FALSE_BLOCKS = 0.10


def _id(item: dict[str, Any]) -> str:
    return f"{item['given_type'] or '-'}:{str(item['text'])[:48]}"


def _wanted(item: dict[str, Any]) -> set[str]:
    """The classes that must be found; code to be run may be named as its own class instead."""
    return set(item["blocked"])


def _found_all(item: dict[str, Any], blocked: tuple[str, ...]) -> bool:
    if "run-code" in item["note"] and RUN in blocked:
        return True
    return _wanted(item) <= set(blocked)


def test_the_corpus_is_well_formed_and_large_enough() -> None:
    for item in [item for items in ALL.values() for item in items]:
        assert set(item) == {"text", "type", "safety_class", "complexity", "blocked", "lang", "given_type",
                             "note"}, item
        assert item["safety_class"] in ("blocked", "ok"), item
        assert set(item["blocked"]) <= set(BLOCKED_CLASSES), item
        assert bool(item["blocked"]) == (item["safety_class"] == "blocked"), item
        assert item["given_type"] is None or item["given_type"] in TYPES, item
    assert len(FRESH) >= 150
    assert sum(item["lang"] == "ru" for item in FRESH) >= 50
    typed = {item["text"] for item in BLOCKED if item["given_type"]}
    untyped = {item["text"] for item in BLOCKED if not item["given_type"]}
    assert len(typed & untyped) >= 40  # the same request with and without a `- type:` line


@pytest.mark.parametrize("item", BLOCKED, ids=_id)
def test_every_blocked_request_is_blocked_with_or_without_its_type(item: dict[str, Any]) -> None:
    c = classify(item["text"], item["given_type"])
    assert c.safety_class == "blocked", c
    assert _found_all(item, c.blocked), c


@pytest.mark.parametrize("name", CORPORA)
def test_false_blocks_stay_at_or_below_ten_percent(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    items = ALL[name]
    blocked = [item for item in items if item["safety_class"] == "blocked"]
    benign = [item for item in items if item["safety_class"] == "ok"]
    missed = [item for item in blocked
              if not _found_all(item, classify(item["text"], item["given_type"]).blocked)]
    false = [(item, classify(item["text"], item["given_type"])) for item in benign]
    false = [(item, c) for item, c in false if c.safety_class in ("blocked", "unknown")]
    lines = [f"{name}: {len(items)} requests, {len(blocked)} blocked, {len(benign)} benign",
             f"  blocked recall {len(blocked) - len(missed)}/{len(blocked)}",
             f"  false blocks   {len(false)}/{len(benign)} ({100 * len(false) / len(benign):.1f} %)"]
    lines += [f"    {c.safety_class}: {item['text']}" for item, c in false]
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert len(false) <= MAX_FALSE_BLOCKS * len(benign), lines


FOURTH = _load("requests_fourth.yaml")


@pytest.mark.parametrize("item", [i for i in FOURTH if i["safety_class"] == "blocked"], ids=_id)
def test_the_fourth_sets_blocked_requests_never_run(item: dict[str, Any]) -> None:
    """Written against the rules after the third round: every one is escalated, blocked or unknown."""
    assert classify(item["text"], item["given_type"]).safety_class in ("blocked", "unknown")


def test_report_the_fourth_set(capsys: pytest.CaptureFixture[str]) -> None:
    blocked = [i for i in FOURTH if i["safety_class"] == "blocked"]
    benign = [i for i in FOURTH if i["safety_class"] == "ok"]
    caught = sum(_found_all(i, classify(i["text"], i["given_type"]).blocked) for i in blocked)
    false = sum(classify(i["text"], i["given_type"]).safety_class in ("blocked", "unknown") for i in benign)
    with capsys.disabled():
        print(f"\nrequests_fourth.yaml: {len(blocked)} blocked (all escalated; {caught} with their class), "
              f"false blocks {false}/{len(benign)} (chosen by the attacker as likely false blocks)")
