"""The common words the typo pass must leave alone, from the word lists in ``words/`` (generated at
development time from wordfreq's frequency lists; see the header of each file)."""

from __future__ import annotations

from importlib.resources import files


def _words(name: str) -> frozenset[str]:
    text = files("vaultops.classifier").joinpath("words", name).read_text(encoding="utf-8")
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


REAL_WORDS = _words("real.txt")
SKELETON_WORDS = _words("skeleton.txt")
