"""Where Obsidian's core "Daily notes" plugin keeps today's note, and what it writes into a new one.

vaultops appends to the very note Obsidian opens, so the rules here copy Obsidian and moment.js (which turns
the plugin's date format into a file name) exactly.  Where vaultops cannot be sure of Obsidian's result it
raises DailyNoteError rather than guess: an entry in a file nobody opens is worse than a clear error.

Only English names and moment's default "en" week rules are known.  Obsidian switches moment's locale to its
display language, so a vault used in another language should avoid name tokens (MMMM, dddd…) and locale
weeks (w, gggg, e); ISO weeks (W, GGGG, E) and numbers are the same everywhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

DEFAULT_FORMAT = "YYYY-MM-DD"
SETTINGS_FILE = "daily-notes.json"
_FIX = "change it in Settings → Daily notes"
# Windows and Obsidian's own rename dialog refuse these; a vault synced to any machine must avoid them.
_FORBIDDEN = frozenset(':*?"<>|')


class DailyNoteError(ValueError):
    """A daily-notes setting or template that vaultops cannot follow exactly; the message says what to do."""


@dataclass(frozen=True, slots=True)
class DailySettings:
    folder: str = ""
    format: str = DEFAULT_FORMAT
    template: str = ""  # vault-relative path of the template note, with ".md", or ""


# --- settings ------------------------------------------------------------------------------------


def load_settings(vault: Path, config_dir: str = ".obsidian") -> DailySettings:
    """The plugin's settings as Obsidian reads them: missing or empty values mean the defaults."""
    path = vault / config_dir / SETTINGS_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        return DailySettings()  # Obsidian writes the file only once a setting is changed
    except OSError as exc:
        raise DailyNoteError(f"cannot read {path} ({exc.strerror or exc}); make it a readable file") from exc
    except ValueError as exc:  # not UTF-8, or not JSON
        raise DailyNoteError(
            f"{path} is not valid JSON ({exc}); fix it, or delete it to use the default daily-note settings"
        ) from exc
    if not isinstance(raw, dict):
        raise DailyNoteError(f'{path} must hold a JSON object like {{"format": "YYYY-MM-DD"}}; fix it')
    values: dict[str, str] = {}
    for key in ("folder", "format", "template"):
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise DailyNoteError(f'"{key}" in {path} must be text, not {json.dumps(value)}; {_FIX}')
        values[key] = value or ""
    # Obsidian trims folder and template but uses the format as typed (only an empty one means the default).
    template = values["template"].strip()
    if template:
        template = _clean_path(template, f'the daily-note template "{template}" set in {path}')
        if not template.endswith(".md"):
            template += ".md"  # the setting names a note, as a link would, without its extension
    return DailySettings(values["folder"].strip(), values["format"] or DEFAULT_FORMAT, template)


# --- the note's path -----------------------------------------------------------------------------


def daily_note_path(settings: DailySettings, when: datetime) -> str:
    """Vault-relative posix path of the daily note for ``when``, e.g. ``Journal/2026/2026-05-04.md``."""
    folder = _clean_path(settings.folder.strip(), f'the daily-note folder "{settings.folder}"')
    fmt = settings.format or DEFAULT_FORMAT
    name = format_moment(fmt, when)
    subject = f'the file name "{name}" made by the daily-note format "{fmt}"'
    if "\\" in name:  # Obsidian would turn it into a folder separator; no one means that
        raise DailyNoteError(f'{subject} contains "\\", which Obsidian forbids in file names; {_FIX}')
    if not name.rsplit("/", 1)[-1].strip():
        raise DailyNoteError(f"{subject} has no file name after its last folder; {_FIX}")
    name = _clean_path(name, subject)
    if not name.endswith(".md"):  # the plugin adds ".md" only when the name does not already end with it
        name += ".md"
    return f"{folder}/{name}" if folder else name


def _clean_path(value: str, subject: str) -> str:
    """Obsidian's normalizePath ("\\" and repeated "/" become one "/", none at the ends), refusing escapes."""
    for ch in value:
        if ch in _FORBIDDEN or ord(ch) < 32 or ord(ch) == 127:
            bad = json.dumps(ch, ensure_ascii=False)
            raise DailyNoteError(f"{subject} contains {bad}, which Obsidian forbids in file names; {_FIX}")
    parts = [p for p in value.replace("\\", "/").split("/") if p]
    for part in parts:
        if part in (".", ".."):  # a path that could climb out of the vault is never followed
            raise DailyNoteError(f'{subject} contains "{part}", a relative step vaultops refuses; {_FIX}')
        if part.startswith("."):  # Obsidian does not see files or folders whose names start with "."
            raise DailyNoteError(f'{subject} contains "{part}", a hidden name Obsidian ignores; {_FIX}')
    return "/".join(parts)


# --- moment.js formatting ------------------------------------------------------------------------

# moment's own tokenizer (src/lib/format/format.js), in its order, so that the same text splits into the
# same tokens: [bracketed literal], or an optional "\" escape and the longest token.  Its locale tokens
# (LT, LL…) come first because moment expands them before formatting; vaultops rejects them.  "." excludes
# the line breaks JavaScript's "." excludes: moment drops those characters, and so do we.
_TOKEN = re.compile(
    r"(\[[^\[]*\])|(\\)?(LTS|LT|LL?L?L?|l{1,4}|[Hh]mm(?:ss)?|Mo|MM?M?M?|Do|DDDo|DD?D?D?|ddd?d?|do?|w[o|w]?"
    r"|W[o|W]?|Qo?|N{1,5}|YYYYYY|YYYYY|YYYY|YY|y{2,4}|yo?|gg(?:ggg?)?|GG(?:GGG?)?|e|E|a|A|hh?|HH?|kk?|mm?"
    r"|ss?|S{1,9}|x|X|zz?|ZZ?|[^\n\r\u2028\u2029])"
)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")  # fmt: skip
_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def format_moment(fmt: str, when: datetime) -> str:
    """``moment(when).format(fmt)`` in moment's "en" locale, or DailyNoteError for what is not supported.

    A naive ``when`` is local time, as moment's is; only X, x and Z/ZZ need to know the offset.
    """
    return _format(fmt, when, f'the daily-note format "{fmt}"', f"{_FIX} or put literal text in [brackets]")


def _format(fmt: str, when: datetime, subject: str, fix: str) -> str:
    if not fmt:
        fmt = "YYYY-MM-DD[T]HH:mm:ssZ"  # what moment's format("") gives
    out: list[str] = []
    for m in _TOKEN.finditer(fmt):
        bracketed, escaped, token = m.groups()
        if bracketed is not None:
            out.append(bracketed[1:-1])
            continue
        func = None if escaped else _TOKENS.get(token)
        if func is not None:
            out.append(func(when))
        elif escaped or not any(c.isalpha() for c in token):
            out.append(token.replace("\\", ""))  # moment prints these with every "\" removed
        else:
            # moment would print an unknown letter as it is, but it is almost always a mistyped token.
            raise DailyNoteError(f'{subject} uses "{token}", which vaultops does not support; {fix}')
    return "".join(out)


def _week(day: date, first_weekday: int, jan: int) -> tuple[int, int]:
    """(week-year, week) when weeks start on ``first_weekday`` (0 = Sunday) and week 1 holds January ``jan``.

    A week belongs to the year of its day number ``7 - jan`` (0 = its first day): the Thursday for ISO
    (Monday start, 4 January), the Saturday for moment's "en" (Sunday start, 1 January).
    """
    start = day - timedelta(days=(day.isoweekday() % 7 - first_weekday) % 7)
    anchor = start + timedelta(days=7 - jan)
    return anchor.year, (anchor.timetuple().tm_yday - 1) // 7 + 1


def _ordinal(n: int) -> str:
    """moment's English ordinal: 1st 2nd 3rd 4th … 11th 12th 13th … 21st … 111th."""
    suffix = "th" if n % 100 // 10 == 1 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _aware(t: datetime) -> datetime:
    return t if t.utcoffset() is not None else t.astimezone()


def _offset(t: datetime, sep: str) -> str:
    minutes = round((_aware(t).utcoffset() or timedelta(0)).total_seconds() / 60)
    hours, rest = divmod(abs(minutes), 60)
    return f"{'-' if minutes < 0 else '+'}{hours:02d}{sep}{rest:02d}"


def _n(get: Callable[[datetime], int], width: int = 1) -> Callable[[datetime], str]:
    return lambda t: str(get(t)).zfill(width)


def _o(get: Callable[[datetime], int]) -> Callable[[datetime], str]:
    return lambda t: _ordinal(get(t))


def _day(t: datetime) -> int:
    return t.isoweekday() % 7  # moment's day(): 0 = Sunday … 6 = Saturday


def _yday(t: datetime) -> int:
    return t.timetuple().tm_yday


def _quarter(t: datetime) -> int:
    return (t.month + 2) // 3


def _h12(t: datetime) -> int:
    return t.hour % 12 or 12


def _lweek(t: datetime) -> tuple[int, int]:
    return _week(t.date(), 0, 1)


def _iweek(t: datetime) -> tuple[int, int]:
    return _week(t.date(), 1, 4)


def _ms(t: datetime) -> int:
    return (_aware(t) - _EPOCH) // timedelta(milliseconds=1)


_TOKENS: dict[str, Callable[[datetime], str]] = {
    "Y": _n(lambda t: t.year, 4),  # moment ≥ 2.29 pads Y like YYYY for years up to 9999
    "YY": _n(lambda t: t.year % 100, 2),
    "YYYY": _n(lambda t: t.year, 4),
    "Q": _n(_quarter), "Qo": _o(_quarter),
    "M": _n(lambda t: t.month), "MM": _n(lambda t: t.month, 2), "Mo": _o(lambda t: t.month),
    "MMM": lambda t: _MONTHS[t.month - 1][:3], "MMMM": lambda t: _MONTHS[t.month - 1],
    "D": _n(lambda t: t.day), "DD": _n(lambda t: t.day, 2), "Do": _o(lambda t: t.day),
    "DDD": _n(_yday), "DDDD": _n(_yday, 3), "DDDo": _o(_yday),
    "d": _n(_day), "do": _o(_day),
    "dd": lambda t: _DAYS[_day(t)][:2], "ddd": lambda t: _DAYS[_day(t)][:3], "dddd": lambda t: _DAYS[_day(t)],
    "e": _n(_day),  # the locale weekday; "en" weeks start on Sunday, so it equals d
    "E": _n(lambda t: t.isoweekday()),
    "w": _n(lambda t: _lweek(t)[1]), "ww": _n(lambda t: _lweek(t)[1], 2), "wo": _o(lambda t: _lweek(t)[1]),
    "gg": _n(lambda t: _lweek(t)[0] % 100, 2), "gggg": _n(lambda t: _lweek(t)[0], 4),
    "W": _n(lambda t: _iweek(t)[1]), "WW": _n(lambda t: _iweek(t)[1], 2), "Wo": _o(lambda t: _iweek(t)[1]),
    "GG": _n(lambda t: _iweek(t)[0] % 100, 2), "GGGG": _n(lambda t: _iweek(t)[0], 4),
    "H": _n(lambda t: t.hour), "HH": _n(lambda t: t.hour, 2),
    "h": _n(_h12), "hh": _n(_h12, 2),
    "k": _n(lambda t: t.hour or 24), "kk": _n(lambda t: t.hour or 24, 2),
    "m": _n(lambda t: t.minute), "mm": _n(lambda t: t.minute, 2),
    "s": _n(lambda t: t.second), "ss": _n(lambda t: t.second, 2),
    # moment has these as single tokens (hour, then zero-filled minutes and seconds)
    "Hmm": lambda t: f"{t.hour}{t.minute:02d}", "Hmmss": lambda t: f"{t.hour}{t.minute:02d}{t.second:02d}",
    "hmm": lambda t: f"{_h12(t)}{t.minute:02d}", "hmmss": lambda t: f"{_h12(t)}{t.minute:02d}{t.second:02d}",
    "a": lambda t: "pm" if t.hour > 11 else "am", "A": lambda t: "PM" if t.hour > 11 else "AM",
    "X": _n(lambda t: _ms(t) // 1000), "x": _n(_ms),
    "Z": lambda t: _offset(t, ":"), "ZZ": lambda t: _offset(t, ""),
}  # fmt: skip


# --- templates -----------------------------------------------------------------------------------

# As the plugin matches them: any case, spaces allowed; a format runs to the first "}}" and is trimmed.
_PLACEHOLDER = re.compile(
    r"{{\s*(?:(?P<title>title)\s*|(?P<kind>date|time)\s*(?::(?P<fmt>.+?))?)}}", re.IGNORECASE
)


def render_template(template_text: str, when: datetime, title: str, date_format: str) -> str:
    """The text of a new daily note made from ``template_text``; ``title`` is the note's name without ".md".

    One pass, so text a placeholder brings in (a title with "{{date}}" in it) is never expanded again.
    Other ``{{…}}`` are left as they are, as Obsidian leaves them.
    """

    def fill(m: re.Match[str]) -> str:
        if m["title"]:
            return title
        if m["fmt"] is None:
            plain = date_format or DEFAULT_FORMAT if m["kind"].lower() == "date" else "HH:mm"
            return format_moment(plain, when)
        fix = "change it in the template note or put literal text in [brackets]"
        return _format(m["fmt"].strip(), when, f'the daily-note template placeholder "{m[0]}"', fix)

    return _PLACEHOLDER.sub(fill, template_text)
