"""How an agent CLI says that its account's usage limit is reached, and when that limit resets.  Pure,
standard library only (``run.outcome`` reads it from a run's output; the engine turns it into a time).

What Claude Code prints (found by running it against a fake API that answers as the real one does, a 429
with ``anthropic-ratelimit-unified-status: rejected`` and ``anthropic-ratelimit-unified-reset: <epoch>``):

- stream-json: a ``rate_limit_event`` whose ``rate_limit_info`` says ``"status": "rejected"`` and
  ``"resetsAt": <epoch>``, before the result;
- the result's text (json and stream-json alike): ``You've hit your session limit · resets 12:51am (UTC)``,
  ``… · resets Dec 9, 5:45pm (UTC)`` when the reset is more than a day away (the minutes cut, not rounded);
- older versions: ``Claude AI usage limit reached|1755615600``, or ``Claude usage limit reached. Your limit
  will reset at 5pm (Europe/Warsaw).``;
- an API key's own spending limit: ``You will regain access on 2026-04-01 at 00:00 UTC.``
- other agents' words for a wait: ``You've hit your usage limit … try again in 4 days 23 hours 55 minutes``;
  and a 429 that says how long to wait (``retry after 3600 seconds``), which the retry table waits for
  when that is longer than its own delays (``said_wait``).

A 429 that is not the account's limit says so (``Server is temporarily limiting requests (not your usage
limit)``) and is left to the retry table, as is a limit whose reset time is not said.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# A reset given in words is cut to the minute: the limit may lift up to a minute after the time it says.
WORDS_MARGIN = 60.0

_NOT_LIMIT = re.compile(r"not your usage limit", re.I)
_PIPE = re.compile(r"usage limit reached\|(\d{10,13})", re.I)
_REGAIN = re.compile(r"regain access on (\d{4})-(\d{2})-(\d{2})(?: at (\d{1,2}):(\d{2}))?\s*(UTC|GMT)?", re.I)
_LIMIT_WORDS = re.compile(r"you've hit your|you have hit your|usage limit", re.I)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_RESETS = re.compile(
    r"\breset(?:s)?(?:\s+at)?\s+"
    r"(?:(?P<mon>[A-Za-z]{3})[a-z]*\.?\s+(?P<day>\d{1,2}),?\s+(?:at\s+)?)?"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<half>[ap]\.?m\.?)?"
    r"(?:\s*\((?P<zone>[A-Za-z][A-Za-z0-9_+\-/]*)\))?",
    re.I,
)


@dataclass(frozen=True, slots=True)
class UsageLimit:
    """The account's usage limit, as a run reported it: when it resets as an epoch (``at``), or as the
    words it used (``when``, in ``zone``; read against the clock by ``resets``)."""

    said: str  # the words that said so, one line, for the log and the status
    at: float | None = None
    when: tuple[int, int, int, int] | None = None  # (month or 0, day or 0, hour 0-23, minute)
    zone: str = ""
    after: float | None = None  # or as a wait from when it was said ("try again in 2 hours")

    def resets(self, now: datetime) -> datetime:
        """When the limit lifts, in ``now``'s zone: the epoch it gave, or its words' next time after
        ``now`` (a minute later: the words cut the seconds)."""
        tz = now.tzinfo or UTC
        if self.at is not None:
            return datetime.fromtimestamp(self.at, tz)
        if self.after is not None:
            return now + timedelta(seconds=self.after)
        assert self.when is not None
        month, day, hour, minute = self.when
        zone = _zone(self.zone) or tz
        here = now.astimezone(zone)
        margin = timedelta(seconds=WORDS_MARGIN)
        if month:
            at = _dated(here.year, month, day, hour, minute, zone)
            if at is not None and at + margin <= here - timedelta(days=1):  # "Jan 2" said on Dec 30
                at = _dated(here.year + 1, month, day, hour, minute, zone)
            if at is None:  # no such day (Feb 30): the next day this hour, rather than nothing
                at = here.replace(hour=hour, minute=minute, second=0, microsecond=0) + timedelta(days=1)
        else:
            at = here.replace(hour=hour, minute=minute, second=0, microsecond=0)
            if at + margin <= here:
                at += timedelta(days=1)
        return (at + margin).astimezone(tz)


def _zone(name: str) -> tzinfo | None:
    if not name:
        return None
    if name.upper() in ("UTC", "GMT", "Z"):
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None  # an abbreviation such as CET: read in the clock's own zone


def _dated(year: int, month: int, day: int, hour: int, minute: int, zone: tzinfo) -> datetime | None:
    try:
        return datetime(year, month, day, hour, minute, tzinfo=zone)
    except ValueError:
        return None


def _epoch(raw: object) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    if value > 1e12:  # milliseconds
        value /= 1000
    return value if 1e9 < value < 1e11 else None


def from_events(stdout: str) -> UsageLimit | None:
    """Claude Code's stream-json ``rate_limit_event`` that rejected the call, with its reset time."""
    found = None
    for line in stdout.splitlines():
        if '"rate_limit_event"' not in line:
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        info = event.get("rate_limit_info") if isinstance(event, dict) else None
        if not isinstance(info, dict) or info.get("status") != "rejected":
            continue
        at = _epoch(info.get("resetsAt"))
        if at is not None:
            window = str(info.get("rateLimitType") or "usage")
            found = UsageLimit(f"{window} limit reached", at=at)
    return found


def from_words(text: str) -> UsageLimit | None:
    """A usage limit said in words, with when it resets; None when the words say none, or say that
    it is not the account's limit."""
    if not text or _NOT_LIMIT.search(text):
        return None
    said = _said(text)
    if (pipe := _PIPE.search(text)) is not None:
        at = _epoch(pipe.group(1))
        return UsageLimit("usage limit reached", at=at) if at is not None else None
    if (regain := _REGAIN.search(text)) is not None:
        year, month, day = (int(regain.group(i)) for i in (1, 2, 3))
        hour, minute = int(regain.group(4) or 0), int(regain.group(5) or 0)
        at_time = _dated(year, month, day, hour, minute, UTC)
        return UsageLimit(said, at=at_time.timestamp()) if at_time is not None else None
    if not _LIMIT_WORDS.search(text):
        return None
    for m in _RESETS.finditer(text):
        when = _when(m)
        if when is not None:
            return UsageLimit(said, when=when, zone=m.group("zone") or "")
    after = _wait(text)
    return UsageLimit(said, after=after) if after is not None else None


_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_AMOUNT = r"(\d+(?:\.\d+)?)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b"
_WAIT = re.compile(
    rf"(?:try again|retry|retry-after)(?:\s+(?:in|after))?[:\s]+((?:{_AMOUNT}[,\s]*(?:and\s+)?)+)", re.I
)

_HEADER = re.compile(r"\bretry-after:\s*(\d+)\s*$", re.I | re.M)


def _wait(text: str) -> float | None:
    """A wait said in words, in seconds: ``try again in 2 hours 5 minutes``, ``retry after 3600 seconds``;
    a minute more when the words stop at minutes or above (they cut what is below)."""
    if (header := _HEADER.search(text)) is not None:  # the header's own form: whole seconds
        return float(header.group(1))
    m = _WAIT.search(text)
    if m is None:
        return None
    amounts = re.findall(_AMOUNT, m.group(1), re.I)
    seconds = sum(float(n) * _UNITS[unit[0].lower()] for n, unit in amounts)
    exact = any(unit[0].lower() == "s" for _, unit in amounts)
    return seconds if exact else seconds + WORDS_MARGIN


def said_wait(text: str) -> UsageLimit | None:
    """How long a refused call was told to wait, when its words say (a 429's ``retry after 3600 seconds``):
    the retry table waits for it when it is longer than its own delays."""
    after = _wait(text)
    return UsageLimit(_said(text) or text.strip()[:160], after=after) if after is not None else None


def _when(m: re.Match[str]) -> tuple[int, int, int, int] | None:
    hour, minute = int(m.group("hour")), int(m.group("minute") or 0)
    half = (m.group("half") or "").lower().replace(".", "")
    if half and not 1 <= hour <= 12:
        return None
    if not half and m.group("minute") is None:
        return None  # a bare number ("resets 3") is not a time
    if half == "pm" and hour != 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        return None
    month = day = 0
    if m.group("mon"):
        name = m.group("mon")[:3].lower()
        if name not in _MONTHS:
            return None
        month, day = _MONTHS.index(name) + 1, int(m.group("day"))
        if not 1 <= day <= 31:
            return None
    return (month, day, hour, minute)


def _said(text: str) -> str:
    """The line that says it, shortened: what the status and the log quote."""
    for line in text.splitlines():
        if _LIMIT_WORDS.search(line) or "regain access" in line.lower():
            return line.strip()[:160]
    return text.strip().splitlines()[0][:160] if text.strip() else ""


def reported(stdout: str, text: str) -> UsageLimit | None:
    """The usage limit a run ended at: the time of its stream-json event (exact) when it printed one,
    else the time its words say; said in its words either way."""
    event, words = from_events(stdout), from_words(text)
    if event is not None and words is not None:
        return UsageLimit(words.said, at=event.at)
    return event or words
