"""Properties of redact() over every generated secret format: no secret survives any wrapping, and redacting
twice is redacting once."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.support.secret_formats import FORMATS, GENERATED, WRAPPINGS
from vaultops.base.obsidian import request_heading
from vaultops.base.redact import MARKER, redact
from vaultops.model import PassOutcome, Request, State, StatusLine
from vaultops.notify.message import escalation_notice
from vaultops.render.dashboard import Fleet, render_dashboard
from vaultops.render.results import DailyEntry, commit_message, daily_lines, heading_link
from vaultops.render.shown import heading_shown, title_shown

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


AROUND = st.sampled_from(["", "see ", "x=1 ", "line\n", '"', "(", "\x1b[32m", "log: "])


def _visible(text: str) -> str:
    return _ANSI.sub("", MARKER.sub("\0", text))


@given(GENERATED, st.sampled_from(sorted(WRAPPINGS)), AROUND, AROUND)
def test_a_generated_secret_never_survives_any_wrapping(
    secret: tuple[str, str], wrapping: str, before: str, after: str
) -> None:
    text, core = secret
    wrapped = WRAPPINGS[wrapping](text, core)
    out = redact(before + wrapped + " " + after)
    assert core not in _visible(out)
    assert redact(out) == out


@given(st.lists(st.tuples(AROUND, GENERATED), min_size=1, max_size=4))
def test_redacting_twice_is_redacting_once(parts: list[tuple[str, tuple[str, str]]]) -> None:
    text = " ".join(before + secret for before, (secret, _) in parts)
    once = redact(text)
    assert redact(once) == once
    assert "[REDACTED:" in once and json.dumps(once)  # a marker is there, and is never re-matched


# --- basic auth in a header: the whole credential goes ---------------------------------------------------

_USER = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", min_size=1, max_size=12)
_PASSWORD = st.text(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#$%^&*+=._~/:?-", min_size=4, max_size=30
)


@given(
    st.sampled_from(["Authorization: ", "authorization:", "Proxy-Authorization: ", "Authorization: Basic "]),
    _USER,
    _PASSWORD,
    st.sampled_from(["", '"', " next", "\n", ", x", "'"]),
)
@example("Authorization: ", "BEARER", "0000", "")  # a user named like a scheme (found by 30,000 examples)
def test_a_user_and_password_in_an_authorization_header_are_redacted_whole(
    header: str, user: str, password: str, after: str
) -> None:
    """``Authorization: user:pass`` left ``:pass`` raw (issue 27): the credential ended at the colon."""
    quote = after if after in ('"', "'") else ""
    out = redact(f"curl -H {quote}{header}{user}:{password}{after}")
    assert f":{password}" not in _visible(out) and redact(out) == out


# --- title-borne secrets: every place a title is shown outward ---------------------------------------------

_LINK_CHARS = re.compile(r"[\[\]|#^:\\%]")  # what a link's anchor drops (vaultops.base.obsidian)
_RUN = re.compile(r"[A-Za-z0-9]{10,}")


def _fragments(core: str) -> set[str]:
    """The pieces of ``core`` a reader could copy: its long runs of letters and digits, whatever escapes,
    anchors or link characters did to what surrounds them."""
    return set(_RUN.findall(core)) | set(_RUN.findall(_LINK_CHARS.sub(" ", core)))


def leaked(core: str, text: str) -> list[str]:
    """The fragments of ``core`` that ``text`` shows, markers aside, with Markdown's backslashes taken out."""
    shown = _visible(text)
    plain = shown.replace("\\", "")
    return sorted(f for f in _fragments(core) if f in shown or f in plain)


def _titled(title: str) -> Request:
    status = StatusLine(State.ESCALATED, "2026-03-02T09:00:00+00:00", "blocked: key or token rotation", 2)
    fields: dict[str, str] = {}
    return Request(
        "REQ-t", title, "_System/COO-Inbox.md", 0, 3, 2, fields, "look at the title", (), (status,)
    )


def outward(title: str) -> dict[str, str]:
    """Everything vaultops writes outward about a request titled ``title``, by where it goes."""
    request = _titled(title)
    now = datetime(2026, 3, 2, 9, 5, tzinfo=UTC)
    fleet = Fleet(
        now, "_System/COO-Inbox.md", "_System/vaultops", notes=(("_System/COO-Inbox.md", [request]),)
    )
    entry = DailyEntry(now, title, request.file, request_heading(request.id, title), request.id, "escalated")
    notice = escalation_notice(
        vault_name="v", rel=request.file, request_id=request.id, state="escalated", asked=request.title,
        safety_class="blocked", reasons=(), proposed="approve it", heading=heading_shown(request.id, title),
    ).redacted()  # fmt: skip
    return {
        "dashboard": render_dashboard(fleet),
        "daily note": "\n".join(daily_lines([entry], "agent0")),
        "commit": commit_message([PassOutcome(request.id, "escalated", f"{title}: blocked")]),
        "notice": f"{notice.title}\n{notice.body}",
        "link": heading_link(request.file, request_heading(request.id, title), request.id),
        "title": title_shown(title),
    }


_ONE_LINE = sorted(name for name, (text, _) in FORMATS.items() if "\n" not in text)


@pytest.mark.parametrize("name", _ONE_LINE)
def test_a_secret_in_a_requests_title_reaches_no_heading_dashboard_notice_or_commit(name: str) -> None:
    """Issue 27: a Vault token in a request's title reached the daily note's heading, the dashboard and a
    commit raw (Markdown's escapes and a link's anchor hid it from the redactor)."""
    text, core = FORMATS[name]
    for where, shown in outward(f"Rotate {text} now").items():
        assert leaked(core, shown) == [], (where, shown)


@given(GENERATED, st.sampled_from(["Rotate {} now", "{}", "check [{}] | #{}", "{}: x"]))
def test_a_generated_secret_in_a_title_is_never_shown_outward(secret: tuple[str, str], form: str) -> None:
    text, core = secret
    for where, shown in outward(form.format(text, text)).items():
        assert leaked(core, shown) == [], (where, shown)


def test_a_title_without_a_secret_keeps_its_link_and_its_words() -> None:
    shown = outward("Is git installed?")
    assert "[[_System/COO-Inbox#REQ-t Is git installed?|REQ-t]]" in shown["dashboard"]
    assert shown["daily note"].startswith("## 09:05 — agent0 — Is git installed?")


# --- line-wrapped secrets: a key folded over 2 to 4 lines goes whole --------------------------------------

_KEYS_ONLY = sorted(name for name, (text, core) in FORMATS.items() if text == core and text.isascii())


def _folded(key: str, lines: int) -> list[str]:
    width = -(-len(key) // lines)
    return [key[i : i + width] for i in range(0, len(key), width)]


def _folded_leaks(key: str, lines: int, before: str) -> list[str]:
    """What is left of ``key`` once it is folded over ``lines`` lines after ``before`` and redacted: any of
    its pieces of 4 or more characters still on a line of its own, or the key in the lines joined."""
    parts = _folded(key, lines)
    out = _visible(redact(before + "\n".join(parts) + "\nthe next line of words"))
    assert out.endswith("\nthe next line of words"), out  # a line of words after a secret stays
    left = [p for p in parts if len(p) >= 4 and p in out.split("\n")]
    return left + ([key] if key in out.replace("\n", "") else [])


@pytest.mark.parametrize("name", _KEYS_ONLY)
@pytest.mark.parametrize("lines", [2, 3, 4])
def test_a_key_folded_over_two_to_four_lines_is_redacted_whole(name: str, lines: int) -> None:
    """Issue 27: a line-wrapped key was redacted only on its first line (and not at all when that line was
    too short to be known)."""
    key = FORMATS[name][0]
    for before in ("", "token: ", "the key:\n", "Authorization: Bearer "):
        assert _folded_leaks(key, lines, before) == [], (name, lines, before)


@given(GENERATED.filter(lambda s: s[0] == s[1]), st.integers(2, 4), st.sampled_from(["", "key=", "token:\n"]))
def test_a_generated_key_folded_over_two_to_four_lines_is_redacted_whole(
    secret: tuple[str, str], lines: int, before: str
) -> None:
    assert _folded_leaks(secret[0], lines, before) == []
