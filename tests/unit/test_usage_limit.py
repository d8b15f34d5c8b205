"""How a run's output says the account's usage limit is reached, and when it resets
(vaultops.base.usage_limit), and how an attempt that says so is classified (vaultops.run.outcome).  The
outputs are the real Claude Code CLI's (2.1.197), captured against the fake API's ``UsageLimit`` answer."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from vaultops.base.usage_limit import WORDS_MARGIN, from_events, from_words, reported, said_wait
from vaultops.run.outcome import Failure, from_claude, from_text
from vaultops.run.process import ProcessResult
from vaultops.run.retry import next_step

NOW = datetime(2026, 12, 3, 22, 51, 9, tzinfo=UTC)
RESET = 1796345469  # 2026-12-04 00:51:09 UTC

# what `claude -p --output-format stream-json --verbose` printed (init and usage trimmed)
STREAM = "\n".join(
    [
        '{"type":"system","subtype":"init","session_id":"dc7a4301"}',
        '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1796345469,'
        '"rateLimitType":"five_hour","isUsingOverage":false},"session_id":"dc7a4301"}',
        '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"num_turns":1,'
        '"result":"You\'ve hit your session limit · resets 12:51am (UTC)","session_id":"dc7a4301",'
        '"total_cost_usd":0}',
    ]
)
# what `--output-format json` printed, for the same answer
JSON = json.dumps(
    {
        "type": "result", "subtype": "success", "is_error": True, "api_error_status": 429, "num_turns": 1,
        "result": "You've hit your session limit · resets 12:51am (UTC)", "session_id": "4b6f1cba",
        "total_cost_usd": 0,
    }
)  # fmt: skip
# a 429 without the account's headers (a key's rate limit, or the server's own): not the quota
TRANSIENT = json.dumps(
    {
        "type": "result", "subtype": "success", "is_error": True, "api_error_status": 429,
        "result": "API Error: Server is temporarily limiting requests (not your usage limit) · This request "
        "would exceed your account's rate limit. Please try again later.",
    }
)  # fmt: skip
KEYED = json.dumps(
    {
        "type": "result", "subtype": "success", "is_error": True, "api_error_status": 429,
        "result": "API Error: Request rejected (429) · This request would exceed your account's rate limit.",
    }
)  # fmt: skip


KEY_LIMIT = "You have reached your specified API usage limits."  # an API key's own spending limit


def proc(stdout: str, code: int = 1) -> ProcessResult:
    return ProcessResult(("claude",), code, False, 0.5, stdout, "", None)


def test_stream_json_gives_the_exact_reset_and_the_result_its_words() -> None:
    found = reported(STREAM, "You've hit your session limit · resets 12:51am (UTC)")
    assert found is not None
    assert found.at == RESET
    assert found.resets(NOW) == datetime(2026, 12, 4, 0, 51, 9, tzinfo=UTC)
    assert found.said == "You've hit your session limit · resets 12:51am (UTC)"


def test_a_rate_limit_event_that_only_warns_is_no_limit() -> None:
    warned = STREAM.replace('"rejected"', '"allowed_warning"')
    assert from_events(warned) is None


def test_the_json_result_alone_resets_at_the_minute_it_says_and_one_more() -> None:
    found = from_words("You've hit your session limit · resets 12:51am (UTC)")
    assert found is not None
    assert found.resets(NOW) == datetime(2026, 12, 4, 0, 52, tzinfo=UTC)  # the words cut its 9 s


def test_each_way_the_cli_has_said_it() -> None:
    cases = {
        "You've hit your weekly limit · resets Dec 9, 5:45pm (UTC)": datetime(
            2026, 12, 9, 17, 46, tzinfo=UTC
        ),
        "You've hit your limit · resets 3pm (Europe/Paris)": datetime(2026, 12, 4, 14, 1, tzinfo=UTC),
        "Claude AI usage limit reached|1796345469": datetime(2026, 12, 4, 0, 51, 9, tzinfo=UTC),
        "Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).": datetime(
            2026, 12, 4, 16, 1, tzinfo=UTC
        ),
        f"{KEY_LIMIT} You will regain access on 2027-01-01 at 00:00 UTC.": datetime(2027, 1, 1, tzinfo=UTC),
        "You've hit your limit - resets Jan 2, 11am (Asia/Seoul)": datetime(2027, 1, 2, 2, 1, tzinfo=UTC),
    }
    for words, expected in cases.items():
        found = from_words(words)
        assert found is not None, words
        assert found.resets(NOW) == expected, words


def test_words_that_are_not_the_accounts_limit_say_nothing() -> None:
    for words in (
        "API Error: Server is temporarily limiting requests (not your usage limit) · resets 3pm (UTC)",
        "API Error: Request rejected (429) · This request would exceed your account's rate limit.",
        "You've hit your monthly spend limit. /model to switch models.",  # no time: the old way
        "the cron job resets at 3 (UTC) every night",
        "",
    ):
        assert from_words(words) is None, words


def test_the_claude_attempt_at_its_limit_is_the_quota_and_a_plain_429_is_not() -> None:
    for stdout in (STREAM, JSON):
        attempt = from_claude("worker-code", proc(stdout), 60.0)
        assert attempt.failure is Failure.QUOTA, stdout
        assert attempt.usage is not None
        assert attempt.detail == "usage limit: You've hit your session limit · resets 12:51am (UTC)"
        assert attempt.session_id is not None and attempt.status_code == 429
    for stdout in (TRANSIENT, KEYED):
        assert from_claude("worker-code", proc(stdout), 60.0).failure is Failure.RATE_LIMIT


def test_a_plain_text_agent_that_says_its_limit_is_the_quota_too() -> None:
    said = from_text("codex", proc("error: You've hit your usage limit · resets 4:30pm (UTC)"), 60.0)
    assert said.failure is Failure.QUOTA
    assert from_text("codex", proc("error: exit 2"), 60.0).failure is Failure.OTHER
    assert from_text("codex", proc("usage limit · resets 4:30pm (UTC)", code=0), 60.0).ok


def cli_words(reset: datetime, now: datetime) -> str:
    """How Claude Code words a reset (its time in its own zone, the minutes cut; the date when it is a day
    or more away)."""
    clock = reset.strftime("%I").lstrip("0") + (f":{reset:%M}" if reset.minute else "") + reset.strftime("%p")
    clock = clock.lower()
    day = f"{reset:%b} {reset.day}, " if reset - now >= timedelta(days=1) else ""
    zone = reset.tzinfo.key if isinstance(reset.tzinfo, ZoneInfo) else "UTC"
    return f"You've hit your session limit · resets {day}{clock} ({zone})"


@given(
    now=st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC)),
    ahead=st.integers(min_value=1, max_value=7 * 86400),
    zone=st.sampled_from(["UTC", "Europe/Paris", "Asia/Seoul", "America/New_York", "Australia/Adelaide"]),
)
def test_any_reset_the_cli_words_is_read_back_within_the_minute_after_it(
    now: datetime, ahead: int, zone: str
) -> None:
    reset = (now + timedelta(seconds=ahead)).astimezone(ZoneInfo(zone))
    found = from_words(cli_words(reset, now))
    assert found is not None
    resumes = found.resets(now)
    # never before the reset; at most the minute the words cut off, and the margin, after it
    # (a reset in a clock change's repeated hour reads as its first time: an hour early at worst, then the
    # run meets the limit once more and waits again)
    late = (resumes - reset).total_seconds()
    assert 0 <= late <= 2 * WORDS_MARGIN or abs(late + 3600) <= 2 * WORDS_MARGIN, (reset, resumes)


@given(st.text(max_size=300))
def test_any_text_is_read_without_failing(text: str) -> None:
    found = from_words(text)
    if found is not None:
        found.resets(NOW)
    from_events(text)


def test_other_agents_words_for_a_wait_are_read_as_one() -> None:
    codex = from_words(
        "You've hit your usage limit. Upgrade to Pro, or try again in 4 days 23 hours 55 minutes."
    )
    assert codex is not None and codex.after == 4 * 86400 + 23 * 3600 + 55 * 60 + WORDS_MARGIN
    assert codex.resets(NOW) == NOW + timedelta(seconds=codex.after)
    for words, seconds in {
        "Error: 429 Too Many Requests; retry after 3600 seconds": 3600.0,
        "rate limited\nRetry-After: 120": 120.0,
        "rate limited, try again in 2h 30m": 9000.0 + WORDS_MARGIN,
    }.items():
        wait = said_wait(words)
        assert wait is not None and wait.after == seconds, words
    assert said_wait("rate limited, try again in a moment") is None


def test_a_plain_agents_429_that_says_a_long_wait_waits_and_a_short_one_is_retried() -> None:
    long = from_text("codex", proc("Error: 429 Too Many Requests; retry after 3600 seconds"), 60.0)
    assert long.failure is Failure.RATE_LIMIT and long.usage is not None and long.usage.after == 3600
    assert next_step([long], ("codex",)).action == "wait"
    assert next_step([long], ("codex",), on_quota="fallback").action == "retry"  # the old way
    short = from_text("codex", proc("Error: 429 Too Many Requests; retry after 10 seconds"), 60.0)
    assert next_step([short], ("codex",)).action == "retry"
    said = json.loads(KEYED) | {"result": "API Error: Request rejected (429) · retry after 7200 seconds"}
    claude = from_claude("worker-code", proc(json.dumps(said)), 60.0)
    assert claude.failure is Failure.RATE_LIMIT and next_step([claude], ("worker-code",)).action == "wait"
    assert next_step([from_claude("worker-code", proc(KEYED), 60.0)], ("worker-code",)).action == "retry"
