"""Daily notes: moment.js formatting, the note's path, the plugin's settings file and templates."""

from __future__ import annotations

import calendar
import json
import re
import string
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultops.render.daily import (
    DailyNoteError,
    DailySettings,
    daily_note_path,
    format_moment,
    load_settings,
    render_template,
)

# Fri, Mon, Thu, Fri; the first two and last two straddle week-year boundaries.
Y2021 = datetime(2021, 1, 1, 0, 5, 9)
Y2024 = datetime(2024, 12, 30, 13, 7, 3)
Y2026 = datetime(2026, 12, 31, 23, 59, 59)
Y2027 = datetime(2027, 1, 1, 12, 0, 0)
MAY4 = datetime(2026, 5, 4, 8, 31, 2)  # Monday, day 124, ISO and en week 19
SUN = datetime(2022, 1, 2, 18, 0, 0)  # Sunday: en week 2 of 2022, ISO 2021-W52-7

# Expectations worked out by hand from the calendar; moment's rules are in the module's comments.
TABLE = [
    (Y2021, "YYYY-MM-DD", "2021-01-01"), (Y2021, "YY Y", "21 2021"), (Y2021, "Q Qo", "1 1st"),
    (Y2021, "M MM Mo MMM MMMM", "1 01 1st Jan January"),
    (Y2021, "D DD Do DDD DDDD DDDo", "1 01 1st 1 001 1st"),
    (Y2021, "d do dd ddd dddd e E", "5 5th Fr Fri Friday 5 5"),
    (Y2021, "w ww wo gggg gg", "1 01 1st 2021 21"),  # 1 January is always in en week 1
    (Y2021, "W WW Wo GGGG GG", "53 53 53rd 2020 20"),  # ISO: still 2020's last week
    (Y2021, "H HH h hh k kk m mm s ss a A", "0 00 12 12 24 24 5 05 9 09 am AM"),
    (Y2021, "Hmm Hmmss hmm hmmss", "005 00509 1205 120509"),
    (Y2024, "gggg-[W]ww-e", "2025-W01-1"),  # the week of Sun 29 Dec holds 1 Jan 2025
    (Y2024, "GGGG-[W]WW-E", "2025-W01-1"),  # its Thursday is 2 Jan 2025
    (Y2024, "DDD DDDD Do dd", "365 365 30th Mo"),  # 2024 is a leap year
    (Y2024, "h hh k a A", "1 01 13 pm PM"),
    (Y2026, "gggg-[W]ww wo", "2027-W01 1st"),  # Sun 27 Dec 2026 to Sat 2 Jan 2027
    (Y2026, "GGGG-[W]WW Wo", "2026-W53 53rd"),  # 2026 starts on a Thursday: 53 ISO weeks
    (Y2026, "d e E DDD DDDo Q Qo Mo Do", "4 4 4 365 365th 4 4th 12th 31st"),
    (Y2026, "h hh k kk H a", "11 11 23 23 23 pm"),
    (Y2027, "gggg-ww GGGG-WW e E", "2027-01 2026-53 5 5"),
    (Y2027, "h k H a", "12 12 12 pm"),
    (MAY4, "YYYY/MM/YYYY-MM-DD ddd", "2026/05/2026-05-04 Mon"),
    (MAY4, "dddd, MMMM Do YYYY", "Monday, May 4th 2026"),
    (MAY4, "w W gggg GGGG DDD", "19 19 2026 2026 124"),
    (SUN, "d do e E dd w W gggg GGGG", "0 0th 0 7 Su 2 52 2022 2021"),
    (datetime(2021, 1, 3), "w W GGGG", "2 53 2020"),
    (datetime(2022, 1, 1), "w ww gggg W GGGG", "1 01 2022 52 2021"),
    (datetime(2026, 12, 26), "w gggg", "52 2026"),
    (datetime(2026, 4, 11), "DDDo Do", "101st 11th"),
    (datetime(2026, 4, 21), "DDDo Do", "111th 21st"),
    (datetime(2026, 4, 22), "DDDo Do", "112th 22nd"),
    (datetime(2026, 4, 23), "DDDo Do", "113th 23rd"),
    (datetime(2026, 5, 3), "DDDo", "123rd"),
    (datetime(2026, 5, 12), "Do MMM", "12th May"),
    (datetime(2026, 9, 13), "Do MMM ddd", "13th Sep Sun"),
    (datetime(2026, 10, 2), "Mo Qo", "10th 4th"),
    (datetime(2026, 11, 1), "Mo", "11th"),
    (datetime(999, 3, 1), "YYYY Y YY", "0999 0999 99"),
    # literal text
    (MAY4, "[Week] W", "Week 19"),
    (MAY4, "YYYY-MM-DD [at] HH:mm", "2026-05-04 at 08:31"),
    (MAY4, "[YYYY]-YYYY", "YYYY-2026"),
    (MAY4, "[]YYYY[]", "2026"),
    (MAY4, "[a]]", "a]"),  # the bracket ends at the first "]"
    (MAY4, "[[]YYYY", "[2026"),  # "[" cannot open a bracket that holds "[", so it is printed
    (MAY4, "[a[b]", "[amb"),  # …and what follows it is formatted: "a" is am/pm
    (MAY4, "YYYY [", "2026 ["),
    (MAY4, "\\YYYY-YYYY", "YYYY-2026"),  # a backslash escapes the whole token, as in moment
    (MAY4, "\\T\\o\\d\\a\\y", "Today"),
    (MAY4, "\\[YYYY]", "[2026]"),
    (MAY4, "YYYYMMDD\\", "20260504"),  # a lone backslash vanishes
    (MAY4, "YYYY-MM-DD_HH.mm, ss", "2026-05-04_08.31, 02"),
    (MAY4, "ww|", "19|"),
    (MAY4, "Week", "19118"),  # W e e k are all tokens: moment (and so Obsidian) prints this too
]  # fmt: skip


@pytest.mark.parametrize(("when", "fmt", "expected"), TABLE)
def test_format_table(when: datetime, fmt: str, expected: str) -> None:
    assert format_moment(fmt, when) == expected


@pytest.mark.parametrize("when", [Y2021, Y2024, Y2026, Y2027, MAY4, SUN])
def test_iso_tokens_agree_with_isocalendar(when: datetime) -> None:
    iso = when.isocalendar()
    assert format_moment("GGGG-WW-E", when) == f"{iso.year}-{iso.week:02d}-{iso.weekday}"


def test_offset_and_unix_tokens() -> None:
    plus10 = datetime(2026, 5, 4, 8, 31, 2, 123456, tzinfo=timezone(timedelta(hours=10)))
    unix = calendar.timegm((2026, 5, 3, 22, 31, 2))
    assert format_moment("Z ZZ X x", plus10) == f"+10:00 +1000 {unix} {unix}123"
    minus = datetime(2026, 1, 1, tzinfo=timezone(-timedelta(hours=3, minutes=30)))
    assert format_moment("Z|ZZ", minus) == "-03:30|-0330"
    assert format_moment("Z X", datetime(1970, 1, 1, tzinfo=UTC)) == "+00:00 0"


def test_empty_format_is_moments_default() -> None:
    utc = datetime(2026, 5, 4, 8, 31, 2, tzinfo=UTC)
    assert format_moment("", utc) == "2026-05-04T08:31:02+00:00"


UNSUPPORTED = [
    "LT", "LTS", "L", "LL", "LLL", "LLLL", "l", "ll", "lll", "llll",  # locale formats
    "N", "NN", "NNNN", "NNNNN", "y", "yy", "yyy", "yyyy", "yo",  # eras
    "S", "SS", "SSS", "SSSSSSSSS", "z", "zz", "YYYYY", "YYYYYY", "ggggg", "GGGGG",
    "T", "b", "c", "f", "i", "j", "n", "o", "p", "q", "r", "t", "u", "v",
    "B", "C", "F", "I", "J", "K", "O", "P", "R", "U", "V", "é", "ж",
    "w|", "W|",  # moment's tokenizer takes "w|" as one (unknown) token
]  # fmt: skip


@pytest.mark.parametrize("token", UNSUPPORTED)
def test_unsupported_token_names_itself(token: str) -> None:
    fmt = f"YYYY-MM-DD {token}"
    with pytest.raises(DailyNoteError) as info:
        format_moment(fmt, MAY4)
    message = str(info.value)
    assert f'uses "{token}"' in message and f'"{fmt}"' in message
    assert "Settings → Daily notes" in message and "[brackets]" in message


def test_unsupported_token_message_matches_the_brief() -> None:
    with pytest.raises(DailyNoteError) as info:
        format_moment("YYYY-MM-DD LT", MAY4)
    assert str(info.value) == (
        'the daily-note format "YYYY-MM-DD LT" uses "LT", which vaultops does not support; '
        "change it in Settings → Daily notes or put literal text in [brackets]"
    )


@pytest.mark.parametrize("fmt", ["YYYY-MM-DDTHH", "YYYY [Week] W Notes", "MMMM dddd Today"])
def test_bare_words_are_errors(fmt: str) -> None:
    with pytest.raises(DailyNoteError):
        format_moment(fmt, MAY4)


# --- hypothesis ----------------------------------------------------------------------------------

SUPPORTED = [
    "YYYY", "YY", "Y", "Q", "Qo", "M", "MM", "Mo", "MMM", "MMMM", "D", "DD", "Do", "DDD", "DDDD", "DDDo",
    "d", "dd", "ddd", "dddd", "do", "e", "E", "w", "ww", "wo", "W", "WW", "Wo", "gggg", "GGGG", "gg", "GG",
    "H", "HH", "h", "hh", "k", "kk", "m", "mm", "s", "ss", "Hmm", "Hmmss", "hmm", "hmmss", "a", "A",
    "X", "x", "Z", "ZZ",
]  # fmt: skip
SEPARATORS = ["-", "_", "/", ".", " ", ", ", ":", "–", "(", ")", "#", "[x]", "[Week ]"]
NEVER_IN_A_TOKEN = sorted(set(string.ascii_letters) - set("".join(SUPPORTED)))

moments = st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2100, 12, 31, 23, 59, 59))
parts_st = st.lists(st.tuples(st.sampled_from(SUPPORTED), st.sampled_from(SEPARATORS)), max_size=8)


def _literal(sep: str) -> str:
    return sep[1:-1] if sep.startswith("[") else sep


@given(moments, parts_st)
def test_supported_formats_never_raise_and_compose(when: datetime, parts: list[tuple[str, str]]) -> None:
    fmt = "YYYY-MM-DD " + "".join(tok + sep for tok, sep in parts)
    out = format_moment(fmt, when)
    assert format_moment("YYYY-MM-DD", when) == when.isoformat()[:10]
    # Separators keep tokens apart, so the whole is the concatenation of its parts.
    expected = when.isoformat()[:10] + " " + "".join(format_moment(t, when) + _literal(s) for t, s in parts)
    assert out == expected


def moment_week(day: date, dow: int, doy: int) -> tuple[int, int]:
    """moment's weekOfYear(), firstWeekOffset() and weeksInYear() transcribed line by line."""

    def first_week_offset(year: int) -> int:
        fwd = 7 + dow - doy
        fwdlw = (7 + date(year, 1, fwd).isoweekday() % 7 - dow) % 7
        return -fwdlw + fwd - 1

    def weeks_in_year(year: int) -> int:
        days = 366 if calendar.isleap(year) else 365
        return (days - first_week_offset(year) + first_week_offset(year + 1)) // 7

    week = (day.timetuple().tm_yday - first_week_offset(day.year) - 1) // 7 + 1
    if week < 1:
        return day.year - 1, week + weeks_in_year(day.year - 1)
    if week > weeks_in_year(day.year):
        return day.year + 1, week - weeks_in_year(day.year)
    return day.year, week


@given(moments)
def test_weeks_agree_with_moments_algorithm_and_isocalendar(when: datetime) -> None:
    iso = when.isocalendar()
    assert moment_week(when.date(), 1, 4) == (iso.year, iso.week)  # the transcription is right…
    assert format_moment("GGGG W E", when) == f"{iso.year} {iso.week} {iso.weekday}"
    year, week = moment_week(when.date(), 0, 6)  # …so it can judge moment's "en" weeks
    weekday = when.isoweekday() % 7
    assert format_moment("gggg w gg ww e", when) == f"{year} {week} {year % 100:02d} {week:02d} {weekday}"


letters = st.text(alphabet=string.ascii_letters, max_size=4)
bad_runs = st.one_of(
    st.sampled_from([u for u in UNSUPPORTED if u.isalpha()]),
    st.builds(lambda a, b, c: a + b + c, letters, st.sampled_from(NEVER_IN_A_TOKEN), letters),
)


@given(moments, parts_st, bad_runs, parts_st)
def test_unsupported_letter_runs_always_raise(
    when: datetime, before: list[tuple[str, str]], run: str, after: list[tuple[str, str]]
) -> None:
    fmt = "".join(t + s for t, s in before) + f" {run} " + "".join(t + s for t, s in after)
    with pytest.raises(DailyNoteError) as info:
        format_moment(fmt, when)
    reported = re.search(r'uses "(.+?)", which', str(info.value))
    assert reported is not None and reported.group(1) in run


# --- paths ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (DailySettings(), "2026-05-04.md"),
        (DailySettings(format=""), "2026-05-04.md"),
        (DailySettings("Journal/Daily", "YYYY/MM/YYYY-MM-DD ddd"), "Journal/Daily/2026/05/2026-05-04 Mon.md"),
        (DailySettings("/Journal\\Daily/", "YYYY-MM-DD"), "Journal/Daily/2026-05-04.md"),
        (DailySettings(" Journal//Daily ", "/YYYY//MM/DD"), "Journal/Daily/2026/05/04.md"),
        (DailySettings("/", "YYYY-MM-DD"), "2026-05-04.md"),
        (DailySettings("", "YYYY-MM-DD[.md]"), "2026-05-04.md"),
        (DailySettings("Notes", "gggg/[W]ww/dddd"), "Notes/2026/W19/Monday.md"),
        (DailySettings("Log", "[Day] DDDo, MMM 'YY"), "Log/Day 124th, May '26.md"),
    ],
)
def test_daily_note_path(settings: DailySettings, expected: str) -> None:
    assert daily_note_path(settings, MAY4) == expected


@pytest.mark.parametrize(
    ("settings", "quoted"),
    [
        (DailySettings(format="YYYY-MM-DD HH:mm"), '":"'),
        (DailySettings(format="YYYY[?]"), '"?"'),
        (DailySettings(format="YYYY[*]"), '"*"'),
        (DailySettings(format='YYYY["]'), '"\\""'),
        (DailySettings(format="YYYY[<>]"), '"<"'),
        (DailySettings(format="YYYY[|]"), '"|"'),
        (DailySettings(format="YYYY[\\]MM"), '"\\"'),
        (DailySettings(format="YYYY[\t]"), '"\\t"'),
        (DailySettings(format="[]"), "no file name"),
        (DailySettings(format="YYYY/"), "no file name"),
        (DailySettings(format="[ ]"), "no file name"),
        (DailySettings(format="[.]"), '"."'),
        (DailySettings(format="[..]/YYYY"), '".."'),
        (DailySettings(format="[.]YYYY"), '".2026"'),
        (DailySettings(folder=".."), '".."'),
        (DailySettings(folder="Journal/../../etc"), '".."'),
        (DailySettings(folder="./Journal"), '"."'),
        (DailySettings(folder=".obsidian"), '".obsidian"'),
        (DailySettings(folder="a:b"), '":"'),
        (DailySettings(format="YYYY-MM-DD LT"), '"LT"'),
    ],
)
def test_daily_note_path_refusals(settings: DailySettings, quoted: str) -> None:
    with pytest.raises(DailyNoteError) as info:
        daily_note_path(settings, MAY4)
    assert quoted in str(info.value)
    assert "Settings → Daily notes" in str(info.value)


@given(moments, parts_st)
def test_paths_stay_inside_the_vault(when: datetime, parts: list[tuple[str, str]]) -> None:
    fmt = "YYYY-MM-DD " + "".join(t + s for t, s in parts if s != ":" and t not in ("Z", "X", "x"))
    try:
        path = daily_note_path(DailySettings("Daily", fmt), when)
    except DailyNoteError:
        return  # e.g. a name ending in "/"; refused, never guessed
    assert path.startswith("Daily/") and path.endswith(".md") and "//" not in path
    assert not any(p in ("", ".", "..") or p.startswith(".") for p in path.split("/"))


# --- settings file -------------------------------------------------------------------------------


def write_settings(vault: Path, content: str, config_dir: str = ".obsidian") -> Path:
    path = vault / config_dir / "daily-notes.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def test_missing_settings_file_gives_defaults(tmp_path: Path) -> None:
    assert load_settings(tmp_path) == DailySettings("", "YYYY-MM-DD", "")
    (tmp_path / ".obsidian").mkdir()
    assert load_settings(tmp_path) == DailySettings()


def test_full_settings(tmp_path: Path) -> None:
    settings = {"folder": "Journal/Daily", "format": "YYYY/MM/YYYY-MM-DD ddd", "template": "Templates/Daily"}
    write_settings(tmp_path, json.dumps(settings))
    expected = DailySettings("Journal/Daily", "YYYY/MM/YYYY-MM-DD ddd", "Templates/Daily.md")
    assert load_settings(tmp_path) == expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{}", DailySettings()),
        ('{"folder": "", "format": "", "template": ""}', DailySettings()),
        ('{"folder": null, "format": null, "template": null}', DailySettings()),
        ('{"folder": "  Daily  ", "template": " T/Day.md "}', DailySettings("Daily", template="T/Day.md")),
        ('{"template": "/Templates\\\\Daily/"}', DailySettings(template="Templates/Daily.md")),
        ('{"format": " YYYY "}', DailySettings(format=" YYYY ")),  # Obsidian does not trim the format
        ('{"autorun": true, "format": "DD-MM-YYYY"}', DailySettings(format="DD-MM-YYYY")),
        ('\ufeff{"format": "YYYY"}', DailySettings(format="YYYY")),
    ],
)
def test_partial_settings(tmp_path: Path, content: str, expected: DailySettings) -> None:
    write_settings(tmp_path, content)
    assert load_settings(tmp_path) == expected


def test_other_config_folder(tmp_path: Path) -> None:
    write_settings(tmp_path, '{"folder": "Days"}', ".obsidian-mobile")
    assert load_settings(tmp_path, ".obsidian-mobile").folder == "Days"
    assert load_settings(tmp_path).folder == ""


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('{"folder": "Days",', "not valid JSON"),
        ("", "not valid JSON"),
        ('["YYYY"]', "JSON object"),
        ('{"folder": 3}', '"folder"'),
        ('{"format": ["YYYY"]}', '"format"'),
        ('{"template": false}', '"template"'),
        ('{"template": "../outside/Secret"}', '".."'),
        ('{"template": ".hidden/Daily"}', '".hidden"'),
    ],
)
def test_broken_settings(tmp_path: Path, content: str, needle: str) -> None:
    path = write_settings(tmp_path, content)
    with pytest.raises(DailyNoteError) as info:
        load_settings(tmp_path)
    assert str(path) in str(info.value) and needle in str(info.value)


def test_unreadable_settings(tmp_path: Path) -> None:
    path = tmp_path / ".obsidian" / "daily-notes.json"
    path.mkdir(parents=True)  # a folder where the file should be
    with pytest.raises(DailyNoteError, match=re.escape(str(path))):
        load_settings(tmp_path)
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "daily-notes.json").write_bytes(b'{"format": "\xff"}')
    with pytest.raises(DailyNoteError, match="not valid JSON"):
        load_settings(tmp_path / "v", ".")


# --- templates -----------------------------------------------------------------------------------


def test_template_placeholders() -> None:
    text = "# {{title}}\nCreated {{date}} at {{time}}.\n{{date:dddd, MMMM Do}} · {{time:HH:mm:ss}}\n"
    out = render_template(text, MAY4, "2026-05-04 Mon", "YYYY-MM-DD ddd")
    assert out == "# 2026-05-04 Mon\nCreated 2026-05-04 Mon at 08:31.\nMonday, May 4th · 08:31:02\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{ date }}|{{  time  }}|{{ title }}", "2026/05/04|08:31|T"),
        ("{{date : YYYY }}|{{ time:  [at] h a }}", "2026|at 8 am"),
        ("{{DATE}} {{Title}} {{Time:mm}}", "2026/05/04 T 31"),
        ("{{time:YYYY}} {{date:HH}}", "2026 08"),  # a format makes date and time the same
        ("{{date:}}", None),
        ("{{title:x}} {{foo}} {{yesterday}} {{date+1d}} {date} {{ date", None),
        ("{{date:[}}]}}", "[]}}"),  # the format runs to the first "}}": "["
        ("", ""),
    ],
)
def test_template_variants(text: str, expected: str | None) -> None:
    assert render_template(text, MAY4, "T", "YYYY/MM/DD") == (text if expected is None else expected)


def test_template_format_runs_to_the_first_closing_braces() -> None:
    # As in the plugin's pattern, "{{date:" with nothing before "}}" takes "}} {{title" as its format;
    # moment would print that as literal letters, vaultops refuses instead.
    with pytest.raises(DailyNoteError, match=re.escape('"{{date:}} {{title}}" uses "t"')):
        render_template("{{date:}} {{title}}", MAY4, "x", "YYYY")


def test_template_is_expanded_once() -> None:
    assert render_template("{{title}}", MAY4, "{{date}}", "YYYY") == "{{date}}"
    assert render_template("{{date}}", MAY4, "x", "[{{title}}]") == "{{title}}"


def test_template_empty_date_format_is_the_default() -> None:
    assert render_template("{{date}}", MAY4, "x", "") == "2026-05-04"


def test_template_unsupported_token() -> None:
    with pytest.raises(DailyNoteError) as info:
        render_template("a\n{{date:LT}}\n", MAY4, "x", "YYYY-MM-DD")
    assert '"{{date:LT}}"' in str(info.value) and 'uses "LT"' in str(info.value)
    with pytest.raises(DailyNoteError, match='"LTS"'):
        render_template("{{date}}", MAY4, "x", "LTS")
