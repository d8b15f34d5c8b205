"""The rule classifier against the labelled corpus, the safety contract, and properties."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.support.paths import CORPUS
from vaultops.classifier.blocked import BLOCKED_CLASSES
from vaultops.classifier.rules import (
    COMPLEXITIES,
    LIGHT_TYPES,
    SAFETY_CLASSES,
    TYPES,
    Classification,
    classify,
)

CORPUS: list[dict[str, Any]] = yaml.safe_load((CORPUS / "requests.yaml").read_text())
BLOCKED = [item for item in CORPUS if item["blocked"]]
ROUTINE = [item for item in CORPUS if item["safety_class"] == "routine"]
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)


def lang(text: str) -> str:
    return "ru" if _CYRILLIC.search(text) else "en"


def _id(item: dict[str, Any]) -> str:
    return str(item["text"])[:50]


# --- the corpus itself --------------------------------------------------------------------------------------
def test_corpus_is_well_formed() -> None:
    assert len(CORPUS) >= 80
    for item in CORPUS:
        assert set(item) == {"text", "type", "safety_class", "complexity", "blocked"}, item
        assert item["type"] is None or item["type"] in (*TYPES, "unknown"), item
        assert item["safety_class"] in SAFETY_CLASSES, item
        assert item["complexity"] is None or item["complexity"] in COMPLEXITIES, item
        assert set(item["blocked"]) <= set(BLOCKED_CLASSES), item
        assert bool(item["blocked"]) == (item["safety_class"] == "blocked"), item


def test_corpus_covers_every_blocked_class_in_both_languages() -> None:
    seen = Counter((cls, lang(item["text"])) for item in BLOCKED for cls in item["blocked"])
    for cls in BLOCKED_CLASSES:
        for language in ("en", "ru"):
            assert seen[cls, language] >= 3, (cls, language, seen[cls, language])


# --- the corpus through the classifier ----------------------------------------------------------------------
@pytest.mark.parametrize("item", BLOCKED, ids=_id)
def test_blocked_item_is_blocked_with_its_classes(item: dict[str, Any]) -> None:
    c = classify(item["text"])
    assert c.safety_class == "blocked", c
    assert set(item["blocked"]) <= set(c.blocked), c


@pytest.mark.parametrize("item", ROUTINE, ids=_id)
def test_routine_item_is_not_blocked(item: dict[str, Any]) -> None:
    c = classify(item["text"])
    assert c.safety_class == "routine", c
    assert c.blocked == (), c


@pytest.mark.parametrize("item", CORPUS, ids=_id)
def test_labels_match(item: dict[str, Any]) -> None:
    c = classify(item["text"])
    assert c.safety_class == item["safety_class"], c
    if item["type"] is not None:
        assert c.type == item["type"], c
    if item["complexity"] is not None:
        assert c.complexity == item["complexity"], c


def test_report_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    """Prints the figures (whatever pytest's capture setting); the assertions are in the tests above."""
    n: Counter[str] = Counter()
    ok: Counter[str] = Counter()
    for item in CORPUS:
        c = classify(item["text"])
        n[lang(item["text"])] += 1
        checks = {"safety": c.safety_class == item["safety_class"]}
        if item["type"] is not None:
            checks["type"] = c.type == item["type"]
        if item["complexity"] is not None:
            checks["complexity"] = c.complexity == item["complexity"]
        if item["blocked"]:
            checks["blocked recall"] = set(item["blocked"]) <= set(c.blocked)
        checks["all labels"] = all(checks.values())
        for name, good in checks.items():
            n[name] += 1
            ok[name] += good
    lines = [f"corpus: {len(CORPUS)} requests ({n['en']} English, {n['ru']} Russian)"]
    for name in ("blocked recall", "safety", "type", "complexity", "all labels"):
        lines.append(f"  {name:15s} {ok[name]:4d}/{n[name]:<4d} {100 * ok[name] / max(n[name], 1):5.1f} %")
    with capsys.disabled():
        print("\n" + "\n".join(lines))


# --- the contract -------------------------------------------------------------------------------------------
def test_explicit_type_wins() -> None:
    c = classify("Is nginx running?", "truth-audit")
    assert (c.type, c.complexity, c.safety_class) == ("truth-audit", "heavy", "routine")
    assert "type: truth-audit (explicit)" in c.reasons
    assert classify("whatever", " Env-Check ").type == "env-check"


def test_unknown_explicit_type_is_unknown_and_names_the_valid_types() -> None:
    c = classify("Is nginx running?", "nginx-check")
    assert (c.type, c.safety_class, c.complexity) == ("unknown", "unknown", "heavy")
    assert any("nginx-check" in r and all(t in r for t in TYPES) for r in c.reasons), c.reasons


def test_blocked_wins_over_an_explicit_type() -> None:
    for explicit in ("env-check", "quick", "no-such-type"):
        c = classify("Rotate the Stripe secret key, please.", explicit)
        assert c.safety_class == "blocked" and c.blocked == ("key-rotation",), c


def test_reason_quotes_the_matched_phrase() -> None:
    c = classify("rotate the stripe key")
    assert c.reasons[0] == 'blocked: key or token rotation ("rotate the stripe key")'


def test_nothing_recognised_is_unknown() -> None:
    c = classify("asdf qwerty")
    assert (c.type, c.safety_class, c.complexity, c.blocked) == ("unknown", "unknown", "heavy", ())


@pytest.mark.parametrize(
    ("text", "complexity"),
    [
        ("Is the stripe CLI installed on the VPS? `which stripe`", "light"),
        ("Is the CLI installed on the VPS?", "heavy"),  # no program named: nothing for a handler to check
        ("How big is ~/code/app/logs?", "light"),
        ("How much disk space is left?", "heavy"),
        ("Is redis running?", "light"),
        ("Is the app running?", "heavy"),
        ("Write a script that checks whether docker is installed", "heavy"),  # code, not env-check
    ],
)
def test_light_needs_a_light_type_and_a_target(text: str, complexity: str) -> None:
    assert classify(text).complexity == complexity


@pytest.mark.parametrize(
    "text",
    [
        "Please do NOT run `rm -rf /tmp/cache`, just tell me how big it is.",
        "never git push --force to this repo; what is its default branch?",
        "don't DROP TABLE sessions, count its rows",
        "Do not TRUNCATE events; how many rows are there?",
        "Without running gh pr merge 12, summarise the PR.",
        "Никогда не делай git push -f; какая ветка по умолчанию?",
        "Don't run ssh-keygen; which keys are in ~/.ssh?",
        "Do not run `stripe prices create`; list the prices.",
        "Don't `systemctl disable nginx`, only check it.",
    ],
)
def test_literal_dangerous_commands_are_blocked_even_when_negated(text: str) -> None:
    assert classify(text).safety_class == "blocked"


@pytest.mark.parametrize(
    ("text", "blocked"),
    [
        ("Why does the checkout fail? Read-only diagnosis; do not delete anything.", False),
        ("Ничего не удаляй, просто посмотри, почему падает импорт.", False),
        ("Проверь логи без удаления старых файлов.", False),
        ("Do not restart or change anything, just look at the nginx logs.", False),
        ("Don't forget to delete the old backups afterwards.", True),  # "don't" governs "forget"
        ("Not only check the logs but delete the old ones too.", True),
        ("Do not wait for me, delete the temp files now.", True),
        ("Не забудь удалить старые бэкапы.", True),
    ],
)
def test_negation_only_counts_when_it_governs_the_verb(text: str, blocked: bool) -> None:
    assert (classify(text).safety_class == "blocked") is blocked


@pytest.mark.parametrize(
    ("text", "blocked"),
    [
        ("Check whether /etc/nginx/nginx.conf is valid.", False),
        ("cat /etc/hosts and tell me what it says", False),
        ("Посмотри /etc/hosts, ничего не меняй.", False),
        ("Edit /etc/hosts and add staging.", True),
        ("Append a line to /etc/hosts.", True),
        ("echo 1 > /etc/hosts", True),
        ("Поправь /etc/hosts.", True),
    ],
)
def test_reading_system_files_is_fine_changing_them_is_blocked(text: str, blocked: bool) -> None:
    c = classify(text)
    assert (c.safety_class == "blocked") is blocked, c
    assert not blocked or "system-files" in c.blocked


# --- properties ---------------------------------------------------------------------------------------------
PREFIXES = ["", "Hi!", "Hello team,", "Good morning, hope you're well.", "Quick one:",
            "When you get a chance,", "Hey Hermes —", "Привет!", "Добрый день,", "Если не сложно,",
            "Коллеги, привет."]
SUFFIXES = ["", "Thanks!", "Cheers, Rocky", "Thank you so much :)", "Спасибо!", "Заранее спасибо.", "Ок?"]
SPACES = [" ", "  ", "\t", " \t ", "   "]


@st.composite
def wrapped(draw: st.DrawFn, item: dict[str, Any]) -> str:
    words = str(item["text"]).split(" ")
    text = words[0] + "".join(draw(st.sampled_from(SPACES)) + w for w in words[1:])
    text = "".join(ch.upper() if draw(st.booleans()) else ch.lower() for ch in text)
    sep = st.sampled_from([" ", "\n", "\n\n", "  "])
    return draw(st.sampled_from(PREFIXES)) + draw(sep) + text + draw(sep) + draw(st.sampled_from(SUFFIXES))


@given(st.sampled_from(BLOCKED).flatmap(lambda item: st.tuples(st.just(item), wrapped(item))))
def test_polite_filler_case_and_whitespace_keep_a_blocked_request_blocked(
    case: tuple[dict[str, Any], str],
) -> None:
    item, text = case
    c = classify(text)
    assert c.safety_class == "blocked", (text, c)
    assert set(item["blocked"]) <= set(c.blocked), (text, c)


def _valid(c: Classification) -> None:
    assert c.type in (*TYPES, "unknown")
    assert c.complexity in COMPLEXITIES
    assert c.safety_class in SAFETY_CLASSES
    assert set(c.blocked) <= set(BLOCKED_CLASSES) and len(set(c.blocked)) == len(c.blocked)
    assert (c.safety_class == "blocked") == bool(c.blocked)
    assert c.complexity == "heavy" or c.type in LIGHT_TYPES
    assert all(isinstance(r, str) and r for r in c.reasons)


@given(st.text(), st.none() | st.text(max_size=20) | st.sampled_from(TYPES))
def test_classify_never_raises_and_stays_in_range(text: str, explicit: str | None) -> None:
    _valid(classify(text, explicit))


WORDS = st.sampled_from(
    ["delete", "the", "rows", "don't", "not", "rm", "-rf", "/etc/hosts", "key", "rotate", "merge", "main",
     "PR", "#12", "send", "email", "client", "sms", "buy", "pay", "удали", "не", "ключ", "смени", "отправь",
     "клиенту", "купи", "push", "--force", "is", "nginx", "running", "?", ".", ",", "\n", "please", "no",
     "cron", "edit"]
)


@given(st.lists(WORDS, max_size=25).map(" ".join), st.none() | st.sampled_from(TYPES))
def test_word_soup_stays_in_range(text: str, explicit: str | None) -> None:
    _valid(classify(text, explicit))


@given(st.sampled_from(BLOCKED), st.sampled_from([*TYPES, "unknown", "nonsense", ""]))
def test_an_explicit_type_never_lowers_a_blocked_classification(item: dict[str, Any], explicit: str) -> None:
    plain, typed = classify(item["text"]), classify(item["text"], explicit)
    assert typed.safety_class == plain.safety_class == "blocked"
    assert typed.blocked == plain.blocked
