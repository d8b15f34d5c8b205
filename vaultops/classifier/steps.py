"""Every step of a compound request is judged on its own.  Pure: folded text in, folded text out.

"Summarise the Hetzner invoice and then settle it", "review PR #12 and, if it looks good, ship it": the
dangerous step names its object with a pronoun, and the rules, which look for a verb and its object, see
only "settle it".  ``resolved`` writes the pronouns as the objects named before them ("settle the
invoice", "ship the pr"), which the rules then read like any other request.
"""

from __future__ import annotations

import functools
import re

from vaultops.classifier.regex_union import union
from vaultops.classifier.vocabulary import OBJECTS

_PRONOUN = re.compile(
    r"(?<=\s)(?:it|them|those|these|all\s+of\s+(?:it|them)|его|её|ее|их|это|всё\s+это"
    r"|все\s+это"
    # "rotate whatever is older than 90 days", "delete the stale ones", "email any that
    # fail": a relative or an indefinite stands for what the research found
    r"|(?:each|every)\s+one|whatever|whichever(?:\s+ones?)?|anything|everything|something|the\s+(?:[\w-]+\s+){0,2}?ones?"
    r"|(?:all|any|each|every\s+one|some)(?:\s+of\s+(?:them|those|these))?(?=\s+(?:that|which"
    r"|who|older|newer|stale|unused|expired|expiring|past|over|under|not|without|with|from|in"
    r"|you|we|still|left|found|flagged|listed)(?!\w))"
    r"|what\s+(?:you|we)\s+(?:find|found|flag|flagged|identif\w+|list|listed|turn\s+up)"
    r"|the\s+(?:results?|findings?|matches|hits|candidates|offenders|culprits|leftovers|rest"
    r"|lot|bunch)"
    r"|что\s+найд\w+|то,?\s+что)(?!\w)"
)
_EXTRA = (  # what a later step refers back to, beyond the rules' own objects
    r"migrations?|invoices?|bills?|drafts?|apolog(?:y|ies)|replies|reply|posts?|threads?|announcements?"
    r"|changelogs?|summar(?:y|ies)|reports?|releases?|builds?|fix(?:es)?|patch(?:es)?|changes|domains?"
    r"|subscriptions?|plans?|keys?|tokens?|passwords?|secrets?|payments?|charges?|orders?|pr|prs|#\d+|sk"
    r"|sk_\w+|pats?|branch(?:es)?|sandbox|hooks?|gate|allow\s*list|plans?|tiers?|seats?|instances?|droplets?"
    r"|счет\w*|сч[её]т\w*|письм\w*|ответ\w*|черновик\w*|пост\w*|миграци\w*|ключ\w*|токен\w*|парол\w*"
    r"|платеж\w*|заказ\w*|домен\w*|подписк\w*"
)


@functools.cache
def _object() -> re.Pattern[str]:
    return re.compile(r"(?<![\w/.-])(?:" + union([OBJECTS, _EXTRA]) + r")(?![\w-])")


_BOUNDARY = re.compile(r"[.;:!?\n,]|\s(?:and|then|but|or|if|once|и|а|но|затем|потом|если|после)(?=\s)")


def _step_start(low: str, pos: int) -> int:
    """Where the step holding ``pos`` starts: after the last comma, stop or "and"/"then" before it."""
    cuts = [b.end() for b in _BOUNDARY.finditer(low, 0, pos)]
    return cuts[-1] if cuts else 0


def resolved(low: str) -> list[str]:
    """Each step that names its object with a pronoun, written with an object named before it instead:
    one reading per pronoun and per object (which one "it" means is the person's to know, so each reading
    is judged), the step alone so that its words do not run into the steps around it."""
    objects = [(o.start(), o.group(0)) for o in _object().finditer(low)]
    readings: list[str] = []
    for m in _PRONOUN.finditer(low):
        start = _step_start(low, m.start())
        after = _BOUNDARY.search(low, m.end())
        end = after.start() if after else len(low)
        named = list(dict.fromkeys(word for at, word in objects if at < m.start()))[-3:]
        for word in named:
            said = ("the " + word) if m.group(0).isascii() else word
            readings.append(low[start : m.start()] + said + low[m.end() : end])
        if len(readings) >= 8:
            break
    return (readings + _bare_verbs(low, [word for _, word in objects]))[:12]


# a verb that ends its sentence has its object elsewhere: "the backups folder: get rid of.", "leaked. rotate."
_BARE = re.compile(
    r"(?<![\w-])(?P<v>[^\W\d_]+(?:\s+(?:rid|off|out|up))?)(?:\s+(?:of|it|them))?"
    r"\s*(?:[.!;]|$)"
)


def _bare_verbs(low: str, objects: list[str]) -> list[str]:
    """ "The GitHub PAT: replace." read as "replace the pat": each verb that ends a sentence, with each
    object the text names."""
    named = list(dict.fromkeys(objects))[-3:]
    out = []
    for m in _BARE.finditer(low):
        words = m.group("v").split()
        if words and words[0] in _VERBS:
            before = low[_step_start(low, m.start()) : m.start()]  # "don't pay it." stays negated
            out += [f"{before}{m.group('v')} the {word}" for word in named]
    return out[:6]


_VERBS = frozenset(
    {
        "delete",
        "upgrade",
        "extend",
        "bump",
        "top",
        "subscribe",
        "disable",
        "remove",
        "erase",
        "wipe",
        "purge",
        "drop",
        "nuke",
        "destroy",
        "clear",
        "empty",
        "get",
        "rotate",
        "replace",
        "revoke",
        "regenerate",
        "reissue",
        "renew",
        "swap",
        "refresh",
        "merge",
        "land",
        "ship",
        "pay",
        "settle",
        "charge",
        "buy",
        "send",
        "post",
        "publish",
        "forward",
        "kill",
        "trash",
        "bin",
        "scrap",
        "ditch",
        "reset",
        "truncate",
        "удали",
        "сотри",
        "снеси",
        "смени",
        "замени",
        "оплати",
        "отправь",
        "ротируй",
        "перевыпусти",
        "смержи",
    }
)
