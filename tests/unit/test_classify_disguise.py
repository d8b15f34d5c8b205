"""A blocked request stays blocked however it is disguised: homoglyphs, invisible characters, spacing,
leet, one-letter typos, fullwidth and small-capital letters.  And ordinary text is left as it was."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultops.classifier.normalize import normalize
from vaultops.classifier.rules import classify

# (request, the danger word in it that the disguise is applied to)
SEEDS = (
    ("Please delete the uploads folder on the VPS.", "delete"),
    ("Rotate the Stripe secret key today.", "Rotate"),
    ("Drop the legacy_sessions table in prod.", "Drop"),
    ("Wipe the staging bucket clean.", "Wipe"),
    ("Purge all backups older than a week.", "Purge"),
    ("Remove every file in ~/code/app/logs", "Remove"),
    ("Charge the customer $49 for the extra seat.", "Charge"),
    ("Merge the feature branch into main.", "Merge"),
    ("Revoke the old GitHub tokens.", "Revoke"),
    ("Удали все старые бэкапы на сервере.", "Удали"),
    ("Оплати счёт от Hetzner с карты компании.", "Оплати"),
)
_CONFUSABLE = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "y": "у", "x": "х", "i": "і", "s": "ѕ",
               "d": "ԁ", "l": "ӏ", "A": "А", "E": "Е", "O": "О", "P": "Р", "C": "С", "T": "Т", "M": "М",
               "R": "R", "D": "D", "W": "W", "u": "υ", "k": "κ", "t": "t",
               "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "О": "O"}
_INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u2066", "\u200e"]


def _blocked(text: str) -> tuple[str, ...]:
    return classify(text).blocked


def test_seeds_are_blocked_as_written() -> None:
    for text, _ in SEEDS:
        assert _blocked(text), text


def _disguise_word(text: str, word: str, new: str) -> str:
    assert word in text
    return text.replace(word, new, 1)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SEEDS), st.data())
def test_homoglyphs_in_the_danger_word_do_not_hide_it(seed: tuple[str, str], data: st.DataObject) -> None:
    text, word = seed
    mask = data.draw(st.lists(st.booleans(), min_size=len(word), max_size=len(word)))
    new = "".join(_CONFUSABLE.get(c, c) if flip else c for c, flip in zip(word, mask, strict=True))
    disguised = _disguise_word(text, word, new)
    assert set(_blocked(text)) <= set(_blocked(disguised)), disguised


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SEEDS), st.data())
def test_invisible_characters_anywhere_do_not_hide_it(seed: tuple[str, str], data: st.DataObject) -> None:
    text, _ = seed
    spots = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    marks = data.draw(st.lists(st.sampled_from(_INVISIBLE), min_size=len(spots), max_size=len(spots)))
    disguised = text
    for spot, mark in sorted(zip(spots, marks, strict=True), reverse=True):
        disguised = disguised[:spot] + mark + disguised[spot:]
    assert set(_blocked(text)) <= set(_blocked(disguised)), repr(disguised)


@pytest.mark.parametrize("sep", [" ", ".", "-", "_", "*", " . "[1]])
@pytest.mark.parametrize(("text", "word"), SEEDS)
def test_spaced_out_letters_do_not_hide_it(text: str, word: str, sep: str) -> None:
    disguised = _disguise_word(text, word, sep.join(word))
    assert set(_blocked(text)) <= set(_blocked(disguised)), disguised


@pytest.mark.parametrize(("text", "word"), SEEDS)
def test_fullwidth_and_small_capitals_do_not_hide_it(text: str, word: str) -> None:
    wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in word)
    small = word.lower().translate(str.maketrans("abcdeijklmnoprstuvwyz", "ᴀʙᴄᴅᴇɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ"))
    for new in (wide, small if word.isascii() else word):
        disguised = _disguise_word(text, word, new)
        assert set(_blocked(text)) <= set(_blocked(disguised)), disguised


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([s for s in SEEDS if s[1].isascii()]), st.data())
def test_one_letter_typos_do_not_hide_it(seed: tuple[str, str], data: st.DataObject) -> None:
    text, word = seed
    low = word.lower()
    i = data.draw(st.integers(0, len(low) - 2))
    kind = data.draw(st.sampled_from(["swap", "drop", "double"] + (["sub"] if len(low) > 4 else [])))
    if kind == "swap":
        typo = low[:i] + low[i + 1] + low[i] + low[i + 2:]
    elif kind == "drop":
        typo = low[:i] + low[i + 1:]
    elif kind == "double":
        typo = low[:i] + low[i] + low[i:]
    else:
        typo = low[:i] + data.draw(st.sampled_from("abcdefghijklmnopqrstuvwxyz")) + low[i + 1:]
    if len(low) <= 4 and kind != "swap":
        return  # short words are only corrected for swaps: "wipe" is one letter from "wire"
    disguised = _disguise_word(text, word, typo)
    assert set(_blocked(text)) <= set(_blocked(disguised)) or classify(disguised).safety_class != "routine", (
        disguised)


@pytest.mark.parametrize(("text", "word"), [s for s in SEEDS if s[1].isascii()])
def test_leet_does_not_hide_it(text: str, word: str) -> None:
    leet = word.translate(str.maketrans("eaoistEAOIST", "340157340157"))
    disguised = _disguise_word(text, word, leet)
    assert set(_blocked(text)) <= set(_blocked(disguised)), disguised


# --- and ordinary text is left alone -----------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "Check the remote server's uptime.", "Why did the charger logs change?",
    "What changed in the wire format?",
    "Удачи с релизом!", "Посмотри файл конфигурации.", "The delta between v2 and v3 of the s3 bucket policy.",
    "Is ffmpeg 6.1 installed on ec2 and k8s nodes?", "Привет, how are you?", "Café résumé naïve",
    "Let me know when the rotation schedule is published.",
])
def test_ordinary_words_are_not_corrected_into_danger(text: str) -> None:
    assert normalize(text) == unicodedata.normalize("NFKC", text) or not classify(text).blocked
    assert not classify(text).blocked, classify(text)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=400))
def test_normalize_takes_any_text(text: str) -> None:
    out = normalize(text)
    assert isinstance(out, str)
    assert "\u200b" not in out and "\u202e" not in out
    classify(text)  # never raises


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="ascii", categories=["L", "Zs", "P"]), max_size=200))
def test_plain_ascii_words_keep_their_letters_unless_a_typo_of_a_danger_word(text: str) -> None:
    out = normalize(text)
    # only letter-spacing joins and typo corrections change plain ASCII text; neither adds a character class
    assert set(out) <= set(text) | set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


# --- a reading step exempts what it reads about, never a step of its own ----------------------------------
@pytest.mark.parametrize("text", [
    "List the SMS templates in the repo.", "Find the note titled 'Delete me later'.",
    "Check how much we pay for Hetzner each month.", "Translate 'удалить' into English.",
    "Search the vault for notes mentioning 'rotate the keys'.",
    "Review PR #12 for merge into main readiness.",
])
def test_what_a_reading_step_reads_about_does_not_block(text: str) -> None:
    assert not classify(text).blocked, classify(text)


@pytest.mark.parametrize("text", [
    "Check whether deleting the backups folder works by deleting it", "Summarise the invoice to pay it",
    "Look for the old tokens to rotate", "Check the logs, then clear them all out",
    "List and delete old backups",
    "Find the old backups, delete them", "Read this: rm -rf ~/old", "Look at rm -rf ~/old and run it",
    "Check the disk — free space by removing old logs", "Tell me when you've deleted the backups folder",
])
def test_a_step_hidden_behind_a_reading_verb_still_blocks(text: str) -> None:
    assert classify(text).safety_class == "blocked", classify(text)


# --- commands and jargon that mean the act -------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "heroku pg:reset DATABASE_URL --confirm app", "churn the trial accounts that never logged in",
    "psql -c 'drop database app'", "find /data -mtime +30 -delete", "mysql -e 'DROP TABLE orders'",
    "Видали всі старі бекапи", "open a PR to main and enable auto-merge",
    "set up a recurring $20 donation to the EFF", "nuke and pave the build box", "factory reset the NAS",
])
def test_commands_and_jargon_for_the_act_block(text: str) -> None:
    assert classify(text).safety_class == "blocked", classify(text)


def test_a_request_that_defers_to_another_text_is_not_run_on_trust() -> None:
    c = classify("Fix it: do what the note Ops/todo.md says")
    assert c.safety_class == "unknown" and "another text" in c.reasons[-1], c
