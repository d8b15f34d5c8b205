"""A blocked class said in everyday phrases (``plans``, ``own_settings``): patterns tried in order, the
first phrase that asks for the thing (not one that only reports it) names the class."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from vaultops.classifier.outcomes import reports
from vaultops.classifier.regex_union import union


class Phrases:
    def __init__(self, cls: str, patterns: Sequence[str]) -> None:
        self.cls = cls
        self.patterns = tuple(patterns)

    @functools.cached_property
    def compiled(self) -> tuple[re.Pattern[str], ...]:
        # each verb group spread into literal-first alternatives (regex_union): half the plain regex's time
        return tuple(re.compile(r"(?<![\w-])(?:" + union([p]) + ")") for p in self.patterns)

    def find(self, low: str) -> list[tuple[str, str]]:
        """[(class, phrase)]: the first phrase in ``low`` (vocabulary.fold of the text) that asks for it."""
        for pattern in self.compiled:
            for m in pattern.finditer(low):
                if not reports(low, m, self.cls):
                    return [(self.cls, " ".join(m.group(0).split()))]
        return []
