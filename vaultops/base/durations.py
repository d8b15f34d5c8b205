"""How long, as a note says it: ``90``, ``90s``, ``5m``, ``2h``.  Pure, standard library only (the plan
note parser and the router both read a ``timeout:``)."""

from __future__ import annotations

import re

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)?\s*$", re.I)


def parse_duration(text: str) -> float | None:
    m = _DURATION.match(text)
    if not m:
        return None
    value = float(m.group(1))
    unit = (m.group(2) or "s").lower()
    return value * (3600 if unit.startswith("h") else 60 if unit.startswith("m") else 1)
