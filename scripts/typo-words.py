"""Regenerate vaultops/classifier/words/*.txt: the common words the typo pass must leave alone.

    pip download --no-deps -d /tmp/wf wordfreq msgpack    # development only, not a dependency
    (unpack both wheels; put msgpack on PYTHONPATH)
    .venv/bin/python scripts/typo-words.py /tmp/wf/wordfreq/data

Run it after changing the danger words in vaultops/classifier/normalize.py.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import msgpack  # type: ignore[import-not-found]

from vaultops.classifier import normalize as n

EN = "abcdefghijklmnopqrstuvwxyz"
RU = "абвгдежзийклмнопрстуфхцчшщъыьэюяё"
OUT = Path(__file__).resolve().parent.parent / "vaultops" / "decide" / "words"


def _variants(word: str, letters: str, substitute: bool) -> set[str]:
    """Every string one edit from ``word``: a letter swapped with the next, doubled or left out, or
    (``substitute``) replaced or added."""
    out = {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1)}
    out |= {word[:i] + word[i + 1:] for i in range(len(word))}
    out |= {word[:i] + word[i] + word[i:] for i in range(len(word))}
    if substitute:
        out |= {word[:i] + c + word[i + 1:] for i in range(len(word)) for c in letters}
        out |= {word[:i] + c + word[i:] for i in range(len(word) + 1) for c in letters}
    return out


def main() -> None:
    data = Path(sys.argv[1])
    en_all = msgpack.load(gzip.open(data / "large_en.msgpack.gz"), raw=False)
    ru_all = msgpack.load(gzip.open(data / "large_ru.msgpack.gz"), raw=False)
    en = set(list(dict.fromkeys(w for b in en_all[1:] for w in b))[:80_000])
    ru = set(list(dict.fromkeys(w for b in ru_all[1:] for w in b))[:200_000])
    real = set()
    for word in n._danger():
        cyrillic = not word.isascii()
        for typo in _variants(word, RU if cyrillic else EN, len(word) > 4):
            if typo in (ru if cyrillic else en) and typo not in n._danger() and len(typo) >= 4:
                real.add(typo)
    skeletons = {n._skeleton(v) for v in n._EN_VERBS if len(n._skeleton(v)) >= 3}
    skeleton_words = {w for w in en if w.isascii() and w.isalpha() and n._skeleton(w) in skeletons
                      and w not in n._danger()}
    for name, words in (("real.txt", real), ("skeleton.txt", skeleton_words)):
        path = OUT / name
        header = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
        path.write_text("\n".join([*header, *sorted(words)]) + "\n", encoding="utf-8")
        print(f"{name}: {len(words)} words")


if __name__ == "__main__":
    main()
