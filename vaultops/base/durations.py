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


def say_duration(seconds: float) -> str:
    """``seconds`` as a person says it: ``1 d``, ``4 h``, ``1 h 30 min``, ``30 min``, ``45 s``."""
    whole = round(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{n} {unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "min")) if n]
    if secs and not days and not hours:
        parts.append(f"{secs} s")
    return " ".join(parts[:2]) or "0 s"
