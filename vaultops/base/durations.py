"""How long, as a note or the config says it: ``90``, ``90s``, ``5m``, ``2h``, ``1d``.  Pure, standard library
only (the plan note parser, the router and the config read one)."""

from __future__ import annotations

import re

_DURATION = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?)?\s*$", re.I
)


def parse_duration(text: str) -> float | None:
    m = _DURATION.match(text)
    if not m:
        return None
    value = float(m.group(1))
    unit = (m.group(2) or "s").lower()
    scale = {"d": 86400, "h": 3600, "m": 60}.get(unit[0], 1)
    return value * scale
