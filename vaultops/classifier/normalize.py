"""Undo the disguises a request can wear before the rules read it.  Pure: text in, text out.

A careful person reads "dеlete" (Cyrillic е), "r\u200bm -rf", "d e l e t e", "d3l3te" and "delte" as the
same word, and so must the rules.  ``normalize`` keeps case (the rules look for capitalised names) and
returns a text of any length: the classifier reads the original and the normalised text, and a blocked
class found in either counts.

Confusables are folded by context: a letter that looks Latin inside a mostly Cyrillic word becomes
Cyrillic, and the other way round, so a genuinely Russian or English word is left alone.  A small table is
used rather than Unicode's full confusables list: that list maps letters across every script and would
fold ordinary Russian words into Latin nonsense.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata

from vaultops.classifier.typo_words import REAL_WORDS, SKELETON_WORDS

# zero-width, joiners, bidi controls, soft hyphen, word joiner, BOM, Mongolian vowel separator
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)
_LATIN_OF = str.maketrans(  # Cyrillic and Greek letters that look Latin
    "аеорсухкмтнвіјѕԁԛԝһӏгпьАВЕКМНОРСТХУІЅЈԌαοερντικυχβΑΒΕΖΗΙΚΜΝΟΡΤΧΥ",
    "aeopcyxkmthbijsdqwhlrnbABEKMHOPCTXYISJGaoepvtikuxbABEZHIKMNOPTXY",
)
# in a Russian word, Latin letters and digits that stand for Cyrillic ones ("3aмeтки", "ydoли")
_CYRILLIC_OF = str.maketrans("aeopcyxkmduABEKMHOPCTXY306", "аеорсухкмдиАВЕКМНОРСТХУзоб")
_LATIN_KEYS = frozenset(chr(c) for c in _LATIN_OF)
_CYRILLIC_KEYS = frozenset(chr(c) for c in _CYRILLIC_OF)
# small capitals (ᴅᴇʟᴇᴛᴇ) are Latin letters NFKC leaves alone
_SMALL_CAPS = str.maketrans("ᴀᴃᴄᴅᴇᴊᴋᴍᴎᴏᴐᴘᴙᴚᴛᴜᴠᴡᴢʀɢʜɪʟɴʏꜱ", "abcdejkmnooprrtuvwzrghilnys")
_WORD = re.compile(r"[^\W\d_]+")
_WORD_OR_DIGITS = re.compile(r"[^\W_]+")
# letters, digits and the symbols people spell letters with: "d3l3te", "@dmin", "pa$$word"
_LEET_TOKEN = re.compile(r"(?<![\w@$])[\w@$]*[^\W\d_][\w@$]*(?![\w@$])")
_LEET = str.maketrans("013457@$", "oieastas")
_SPACED = re.compile(r"(?<![\w])[^\W\d_](?P<sep>[ .\-_*·•/|]{1,3})(?:[^\W\d_](?P=sep)){1,}[^\W\d_](?!\w)")
# markup inside a word: "**del**ete", "`del`ete", "de<!-- -->lete", "de<b></b>lete"
_MARKUP = re.compile(r"<!--.*?-->|(?<=[^\W\d_])(?:[*`~]+|<[^<>\n]{0,20}>)+(?=[^\W\d_])", re.S)
_REVERSED = re.compile("\u202e([^\u202a-\u202e\u2066-\u2069]*)(?:\u202c|$)")  # shown right to left
# pictures said as words: "🗑️ everything in /Attachments", "💌 → @jane"
_EMOJI_WORDS = {
    "🗑": "delete",
    "🔥": "destroy",
    "💣": "destroy",
    "💥": "destroy",
    "❌": "delete",
    "✂": "cut",
    "💌": "message",
    "✉": "email",
    "📧": "email",
    "📨": "email",
    "📩": "email",
    "📤": "send",
    "📢": "announce",
    "📣": "announce",
    "📱": "text",
    "💬": "message",
    "💸": "pay",
    "💳": "pay",
    "💰": "pay",
    "🔑": "key",
    "🔐": "key",
    "🔄": "rotate",
    "🔁": "rotate",
    "♻": "rotate",
    "🚀": "ship",
    "🔀": "merge",
    "➡": "to",
    "→": "to",
    "⇒": "to",
    "⟶": "to",
}
_EMOJI = re.compile("|".join(map(re.escape, sorted(_EMOJI_WORDS, key=len, reverse=True))))
_SPACES = re.compile(r"[^\S\n\t]")  # every kind of space (Ogham, ideographic, thin) is a space
_LISU = str.maketrans("ꓐꓑꓒꓓꓔꓖꓗꓙꓚꓜꓝꓟꓠꓡꓢꓣꓦꓧꓪꓫꓬꓮꓰꓲꓳꓴ", "BPdDTGKJCZFMNLSRHXWXYAEIOU")
_NAMED_LETTER = re.compile(r"LATIN (SMALL|CAPITAL) LETTER (?:[A-Z]+ )*([A-Z])$")
_DIGIT_WORD = re.compile(r"(?<![\w@$])(?=[\w@$]*[^\W\d_])(?=[\w@$]*[\d@$])[\w@$]{4,}(?![\w@$])")


def normalize(text: str) -> str:
    """``text`` as a careful person reads it: the letters it shows, joined, with typos of danger words
    corrected.  Same case as the original; the length may differ."""
    if not text.isascii():
        text = _EMOJI.sub(lambda m: f" {_EMOJI_WORDS[m.group(0)]} ", text)
        text = "".join(map(_named_letter, text))
        text = unicodedata.normalize("NFKC", text)
        text = _INVISIBLE.sub("", text)
        text = _SPACES.sub(" ", text)
        text = "".join(map(_bare, text)).translate(_SMALL_CAPS).translate(_LISU)
        latin = _mostly_latin(text)
        text = _WORD_OR_DIGITS.sub(lambda m: _fold_script(m.group(0), latin), text)
    text = _MARKUP.sub("", text)
    text = _SPACED.sub(lambda m: m.group(0).replace(m.group("sep"), ""), text)
    text = _DIGIT_WORD.sub(lambda m: _digits_read(m.group(0)), text)
    text = _LEET_TOKEN.sub(lambda m: _unleet(m.group(0)), text)
    text = _join_pieces(text)
    return _WORD.sub(lambda m: m.group(0) if _in_a_name(text, m) else _corrected(m.group(0)), text)


def _in_a_name(text: str, m: re.Match[str]) -> bool:
    """A word joined by a dot to the next or the one before ("out.txt", "report.md", "example.com") is part
    of a file or host name, which no typo pass may turn into a word: "out.txt that" is no "text that"."""
    start, end = m.span()
    before = start >= 2 and text[start - 1] == "." and text[start - 2].isalnum()
    return before or (text[end : end + 1] == "." and text[end + 1 : end + 2].isalnum())


def latin_skeleton(text: str) -> str:
    """``text`` with every letter that looks Latin made Latin and invisible characters gone: for telling
    whether a text names something written in Latin letters (a request id, say), whatever the keyboard."""
    if text.isascii():
        return text
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    return "".join(map(_bare, text)).translate(_SMALL_CAPS).translate(_LISU).translate(_LATIN_OF)


@functools.lru_cache(maxsize=4096)
def _named_letter(c: str) -> str:
    """A symbol that is a Latin letter in disguise, by its Unicode name: "🅓" (negative circled D), "⒟"
    (parenthesized), "ɘ" (reversed e), "ɹ" (turned r)."""
    if c.isascii() or not c.isprintable():
        return c
    m = _NAMED_LETTER.search(unicodedata.name(c, ""))
    if m is None or (c.isalpha() and _script(c) != "LATIN" and "CIRCLED" not in unicodedata.name(c, "")):
        return c
    return m.group(2).lower() if m.group(1) == "SMALL" else m.group(2)


def _digits_read(token: str) -> str:
    """ "d8l8te", "r0t4t3": a word with digits in place of letters, read as the danger word it fits."""
    if token[0] in "$@":
        return token  # a price or a handle
    pattern = re.compile("".join("." if c.isdigit() or c in "@$" else re.escape(c.lower()) for c in token))
    fits = [w for w in _danger_by_length().get(len(token), ()) if pattern.fullmatch(w)]
    return fits[0] if len(fits) == 1 else token


@functools.cache
def _danger_by_length() -> dict[int, tuple[str, ...]]:
    out: dict[int, list[str]] = {}
    for word in sorted(_danger()):
        out.setdefault(len(word), []).append(word)
    return {n: tuple(words) for n, words in out.items()}


def _bare(c: str) -> str:
    """A letter without its marks ("è" -> "e", a struck-through "d̶" -> "d"); й and ё keep theirs, being
    letters of their own."""
    if c.isascii() or c in "йЙёЁ":
        return c
    return "".join(x for x in unicodedata.normalize("NFD", c) if not unicodedata.combining(x))


def _script(c: str) -> str:
    name = unicodedata.name(c, "")
    return name.split(" ", 1)[0] if name else ""


def _mostly_latin(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return sum(c.isascii() for c in letters) * 2 > len(letters)


def _fold_script(word: str, latin_text: bool) -> str:
    """A word mixing scripts, read in the script of the text around it when its stray letters look like
    that script's ("dеlete" in English, "удaли" in Russian); a word made only of letters that look Latin
    ("ԁеӏеtе" spelled all in Cyrillic) in an English text is read as Latin too."""
    if word.isascii():
        return word
    foreign = [c for c in word if not c.isascii()]
    if latin_text and all(c in _LATIN_KEYS for c in foreign):
        return word.translate(_LATIN_OF)
    if not latin_text and all(c in _CYRILLIC_KEYS for c in word if c.isascii()):
        return word.translate(_CYRILLIC_OF)
    scripts = [_script(c) for c in word]
    latin, cyrillic = scripts.count("LATIN"), scripts.count("CYRILLIC")
    greek = scripts.count("GREEK")
    if latin + cyrillic + greek == max(latin, cyrillic, greek):
        return word  # one script only: nothing to fold
    if cyrillic > latin + greek:
        return word.translate(_CYRILLIC_OF)
    return word.translate(_LATIN_OF)


def _unleet(token: str) -> str:
    """ "d3l3te" -> "deiete" -> (typo pass) "delete"; a plain number or a word without digits stays."""
    letters = sum(c.isalpha() for c in token)
    if not letters or len(token) < 3 or not any(c in "013457@$" for c in token) or token[0] in "$@":
        return token
    return token.translate(_LEET)


def _join_pieces(text: str) -> str:
    """ "del ete", "de le te", "re-move": pieces, one space or hyphen apart, that together make a danger
    word."""
    words = list(_WORD.finditer(text))
    cuts: list[tuple[int, int]] = []
    for i in range(len(words)):
        for n in (3, 2):
            run = words[i : i + n]
            if len(run) < n or any(
                b.start() - x.end() != 1 or text[x.end()] not in " -" for x, b in itertools.pairwise(run)
            ):
                continue
            if "".join(w.group(0) for w in run).lower() in _danger():
                cuts += [(x.end(), b.start()) for x, b in itertools.pairwise(run)]
                break
    for start, end in sorted(set(cuts), reverse=True):
        text = text[:start] + text[end:]
    return text


def _corrected(word: str) -> str:
    low = word.lower()
    if low in _SHORTHAND:
        return _SHORTHAND[low]
    if len(low) < 3 or low in _danger() or low in REAL_WORDS:
        return word
    fixed = (_typo_of(low) or _reversed().get(low)) if len(low) >= 4 else None
    if fixed is None and low not in SKELETON_WORDS:
        fixed = _skeletons().get(_skeleton(low))
    if fixed is None:
        return word
    return fixed.capitalize() if word[:1].isupper() else fixed


# --- danger words and their one-letter typos -------------------------------------------------------------
_EN_VERBS = (
    "delete",
    "remove",
    "erase",
    "wipe",
    "purge",
    "destroy",
    "truncate",
    "drop",
    "empty",
    "clear",
    "nuke",
    "shred",
    "obliterate",
    "expunge",
    "rotate",
    "revoke",
    "regenerate",
    "reissue",
    "invalidate",
    "charge",
    "purchase",
    "refund",
    "transfer",
    "subscribe",
    "upgrade",
    "merge",
    "force",
    "deploy",
    "release",
    "settle",
    "format",
    "overwrite",
    "reset",
    "rebase",
    "squash",
    "publish",
    "announce",
    "broadcast",
    "forward",
    "reply",
    "tweet",
    "execute",
    "install",
    "uninstall",
    "migrate",
    "discard",
    "prune",
    "trash",
    "change",
    "replace",
    "modify",
    "rename",
    "update",
    "send",
    "email",
    "message",
    "post",
    "order",
    "push",
    "apply",
    "cancel",
    "register",
    "renew",
    "refresh",
    "revert",
    "restore",
    "disable",
    "enable",
    "annihilate",
    "eradicate",
    "exterminate",
    "twilio",
    "rekey",
)
_EN_NOUNS = (
    "deletion",
    "removal",
    "password",
    "passwords",
    "token",
    "tokens",
    "secret",
    "secrets",
    "credential",
    "credentials",
    "production",
    "database",
    "databases",
    "customer",
    "customers",
    "invoice",
    "invoices",
    "branch",
    "branches",
    "master",
    "backup",
    "backups",
    "folder",
    "folders",
    "directory",
    "table",
    "tables",
    "stripe",
    "domain",
    "domains",
    "subscription",
    "server",
    "servers",
    "uploads",
    "payment",
    "payments",
    "message",
    "messages",
    "email",
    "emails",
    "channel",
    "records",
    "everything",
    "migration",
    "migrations",
    "schema",
    "sudoers",
    "crontab",
    "systemd",
    "firewall",
    "twitter",
    "slack",
    "whatsapp",
    "telegram",
    "client",
    "clients",
    "seats",
    "license",
    "licenses",
    "premium",
)
_RU_WORDS = (
    "удали",
    "удалить",
    "удалите",
    "удаляй",
    "удаление",
    "сотри",
    "сотрите",
    "стереть",
    "очисти",
    "очистить",
    "снеси",
    "уничтожь",
    "вычисти",
    "обнули",
    "оплати",
    "оплатить",
    "заплати",
    "купи",
    "купить",
    "закажи",
    "смени",
    "замени",
    "перевыпусти",
    "ротируй",
    "отзови",
    "отправь",
    "напиши",
    "разошли",
    "смержи",
    "влей",
    "залей",
    "запушь",
    "задеплой",
    "пароль",
    "пароли",
    "ключ",
    "ключи",
    "токен",
    "токены",
    "базу",
    "таблицу",
    "таблицы",
    "клиентам",
    "клиенту",
    "продакшн",
    "бэкапы",
    "логи",
    "файлы",
    "папку",
    "замерджи",
    "смерджи",
    "грохни",
)


def _inflections(verb: str) -> tuple[str, ...]:
    stem = verb[:-1] if verb.endswith("e") else verb
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb, verb[:-1] + "ies", verb[:-1] + "ied", verb + "ing"
    return verb, verb + "s", stem + "ed", stem + "ing"


@functools.cache
def _danger() -> frozenset[str]:
    verbs = {form for v in _EN_VERBS for form in _inflections(v)}
    return frozenset(verbs | set(_EN_NOUNS) | set(_RU_WORDS))


@functools.cache
def _reversed() -> dict[str, str]:
    """ "eteled": a danger word written backwards."""
    return {w[::-1]: w for w in _danger() if len(w) >= 5 and w[::-1] not in REAL_WORDS}


def _skeleton(word: str) -> str:
    """The consonants of a word, doubles collapsed: "delete", "dleet" and "dlt" are all "dlt"."""
    out = re.sub(r"[aeiouy]+", "", word) if word.isascii() else ""
    return re.sub(r"(.)\1+", r"\1", out)


@functools.cache
def _skeletons() -> dict[str, str]:
    """skeleton -> the English danger verb it belongs to ("dlt" -> "delete"), for skeletons of three
    consonants or more that no other danger verb shares.  A common word with the same skeleton
    (SKELETON_WORDS: "dealt") is left alone."""
    found: dict[str, list[str]] = {}
    for verb in _EN_VERBS:
        key = _skeleton(verb)
        if len(key) >= 3:
            found.setdefault(key, []).append(verb)
    return {key: verbs[0] for key, verbs in found.items() if len(verbs) == 1}


_SHORTHAND = {
    "dlt": "delete",
    "dlte": "delete",
    "rmv": "remove",
    "msg": "message",
    "passwd": "password",
    "pw": "password",
    "creds": "credentials",
    "txt": "text",
}


@functools.cache
def _by_deletion() -> dict[str, tuple[str, ...]]:
    """Each danger word, and each string one letter short of one, -> those words (longest first).  A typo one
    edit from a word shares a key with it: the SymSpell idea, which makes this index a few thousand keys
    instead of every variant of every word."""
    index: dict[str, list[str]] = {}
    for word in sorted(_danger(), key=lambda w: (-len(w), w)):
        for key in {word, *_deletions(word)}:
            index.setdefault(key, []).append(word)
    return {key: tuple(words) for key, words in index.items()}


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def _typo_of(low: str) -> str | None:
    """The danger word ``low`` is a one-edit typo of, unless it is itself a common word (REAL_WORDS).
    Four-letter words only count swaps: "wipe" is one letter from "wire", "wide" and "ripe", which a word
    list would keep, but also from rarer words it would not."""
    if len(low) < 4 or low in REAL_WORDS or low in _danger():
        return None
    index = _by_deletion()
    found = [*index.get(low, ()), *(w for d in _deletions(low) for w in index.get(d, ()))]
    for word in sorted(set(found), key=lambda w: (-len(w), w)):
        if _one_edit(low, word) and (len(word) > 4 or sorted(low) == sorted(word)):
            return word
    return None


def _one_edit(a: str, b: str) -> bool:
    """Are ``a`` and ``b`` one edit apart: a letter replaced, added, dropped, or swapped with the next?"""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    if len(a) == len(b):
        swapped = (
            a[i + 1 : i + 2] == b[i : i + 1] and a[i : i + 1] == b[i + 1 : i + 2] and a[i + 2 :] == b[i + 2 :]
        )
        return a[i + 1 :] == b[i + 1 :] or swapped
    return a[i + 1 :] == b[i:] if len(a) > len(b) else a[i:] == b[i + 1 :]


def as_shown(text: str) -> str | None:
    """The text in the order a right-to-left override shows it ("\u202eeteled" shows "delete"), when it has
    one; the rules read both orders."""
    if "\u202e" not in text:
        return None
    return _REVERSED.sub(lambda m: m.group(1)[::-1], text)


# --- Russian typed in Latin letters: "udali papku", "snesi bazu na prode" -----------------------------------
_TRANSLIT = (  # longest spellings first: "shch" before "sh" before "s"
    ("shch", "щ"),
    ("sch", "щ"),
    ("zh", "ж"),
    ("kh", "х"),
    ("ts", "ц"),
    ("ch", "ч"),
    ("sh", "ш"),
    ("yu", "ю"),
    ("ya", "я"),
    ("yo", "ё"),
    ("ju", "ю"),
    ("ja", "я"),
    ("a", "а"),
    ("b", "б"),
    ("v", "в"),
    ("g", "г"),
    ("d", "д"),
    ("e", "е"),
    ("z", "з"),
    ("i", "и"),
    ("j", "й"),
    ("k", "к"),
    ("l", "л"),
    ("m", "м"),
    ("n", "н"),
    ("o", "о"),
    ("p", "п"),
    ("r", "р"),
    ("s", "с"),
    ("t", "т"),
    ("u", "у"),
    ("f", "ф"),
    ("h", "х"),
    ("c", "ц"),
    ("y", "ы"),
    ("w", "в"),
    ("x", "кс"),
    ("q", "к"),
    ("'", "ь"),
)
_TRANSLIT_RE = re.compile("|".join(re.escape(a) for a, _ in _TRANSLIT))
_TRANSLIT_OF = dict(_TRANSLIT)
_ASCII_WORD = re.compile(r"[A-Za-z']+")


def _to_cyrillic(word: str) -> str:
    return _TRANSLIT_RE.sub(lambda m: _TRANSLIT_OF[m.group(0)], word.lower())


def transliterated(text: str) -> str | None:
    """The text in Cyrillic when it is Russian typed in Latin letters, as shown by a word that reads as a
    Russian danger word ("udali", "rotirui"); None otherwise, which is nearly always."""
    words = _ASCII_WORD.findall(text)
    if not words or not any(_is_danger_ru(_to_cyrillic(w)) for w in words if len(w) >= 4):
        return None
    return _ASCII_WORD.sub(lambda m: _to_cyrillic(m.group(0)), text)


def _is_danger_ru(word: str) -> bool:
    """A Russian danger word, or a typo of one (a Latin word's typo does not count)."""
    if word in _danger():
        return True
    fixed = _typo_of(word)
    return fixed is not None and not fixed.isascii()
