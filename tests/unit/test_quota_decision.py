"""Waiting for the quota, decided as values: the retry table on an attempt at its account's usage limit,
the gate on requests whose account is at it, which account a profile pays with, and the setting."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.unit.test_decision_gate import CONFIG, LIGHT, NOW, RESEARCH, facts_for, inbox, kinds
from vaultops.base.errors import ConfigError
from vaultops.base.usage_limit import UsageLimit
from vaultops.config import Config, ProfileConfig, load_config
from vaultops.decide.gate import agenda_for
from vaultops.decide.quota import MIN_WAIT, account_of, held, resume_at, waiting_reason
from vaultops.engine.quota import session_gone
from vaultops.model import State
from vaultops.render import results
from vaultops.run.outcome import Attempt, Failure
from vaultops.run.retry import next_step

LIMITED = Attempt(
    "claude", Failure.QUOTA, "", "usage limit: You've hit your session limit · resets 12:51am (UTC)", 0.4,
    status_code=429, session_id="s1", usage=UsageLimit("You've hit your session limit", at=1.8e9),
)  # fmt: skip
RESET = NOW + timedelta(hours=2)


def test_the_retry_table_waits_for_the_quota_instead_of_retrying_or_falling_back() -> None:
    step = next_step([LIMITED], ("claude", "codex"))
    assert (step.action, step.profile) == ("wait", "claude")
    assert step.reason == LIMITED.detail


def test_with_on_quota_fallback_the_quota_goes_to_the_next_profile_at_once_or_gives_up() -> None:
    assert next_step([LIMITED], ("claude", "codex"), on_quota="fallback").action == "fallback"
    assert next_step([LIMITED], ("claude", "codex"), on_quota="fallback").profile == "codex"
    alone = next_step([LIMITED], ("claude",), on_quota="fallback")
    assert (alone.action, alone.reason) == ("give-up", LIMITED.detail)


def test_a_429_that_is_not_the_quota_is_retried_as_before() -> None:
    rate = replace(LIMITED, failure=Failure.RATE_LIMIT, usage=None)
    assert next_step([rate], ("claude",)).action == "retry"


def test_a_request_on_an_account_at_its_limit_waits_saying_until_when_and_light_checks_run() -> None:
    note = inbox(LIGHT, RESEARCH)
    facts = facts_for(note, quota={"claude": RESET.timestamp()})
    plan = agenda_for(note, facts, CONFIG)
    assert kinds(plan) == {"REQ-1": "builtin", "REQ-2": "wait"}
    assert plan.items[1].handling.reason == "usage limit of claude; resumes at 2026-12-02 11:00 UTC"


def test_it_starts_at_the_reset_and_a_profile_on_another_account_is_not_held() -> None:
    note = inbox(RESEARCH)
    at_reset = facts_for(note, now=RESET, quota={"claude": RESET.timestamp()})
    assert kinds(agenda_for(note, at_reset, CONFIG)) == {"REQ-2": "profile"}
    other = facts_for(note, quota={"codex": RESET.timestamp()})
    assert kinds(agenda_for(note, other, CONFIG)) == {"REQ-2": "profile"}


def test_the_wait_is_said_once_not_on_every_pass() -> None:
    reason = waiting_reason("claude", RESET)
    said = "\n" + "\n".join(results.status_only(State.WAITING, NOW, reason))
    note = inbox(RESEARCH + said)
    assert agenda_for(note, facts_for(note, quota={"claude": RESET.timestamp()}), CONFIG).items == ()
    assert kinds(agenda_for(note, facts_for(note, now=RESET), CONFIG)) == {"REQ-2": "profile"}


def test_held_is_only_while_the_reset_is_ahead() -> None:
    holds = {"claude": RESET.timestamp()}
    assert held("claude", holds, NOW) == ("claude", RESET)
    assert held("claude", holds, RESET) is None
    assert held("codex", holds, NOW) is None


def test_a_reset_said_to_be_past_still_waits_a_minute() -> None:
    assert resume_at(NOW - timedelta(hours=1), NOW) == NOW + timedelta(seconds=MIN_WAIT)
    assert resume_at(RESET, NOW) == RESET


def test_profiles_share_an_account_when_they_pay_with_the_same_credentials() -> None:
    plain = ProfileConfig(command=("claude", "-p", "{prompt}"))
    other_flags = ProfileConfig(command=("/usr/bin/claude", "-p", "{prompt}", "--model", "opus"), timeout=60)
    second_login = ProfileConfig(
        command=("claude", "-p", "{prompt}"), env={"CLAUDE_CONFIG_DIR": "~/.claude-2"}
    )
    key = ProfileConfig(command=("claude", "-p", "{prompt}"), env={"ANTHROPIC_API_KEY": "sk-1", "TZ": "UTC"})
    codex = ProfileConfig(command=("codex", "exec", "{prompt}"))
    assert account_of(plain) == account_of(other_flags)
    assert len({account_of(p) for p in (plain, second_login, key, codex)}) == 4
    assert "sk-1" not in account_of(key)
    assert account_of(key) == account_of(replace_env(key, TZ="Europe/Paris"))  # not a credential


def replace_env(profile: ProfileConfig, **env: str) -> ProfileConfig:
    return profile.model_copy(update={"env": {**profile.env, **env}})


def test_on_quota_is_wait_by_default_and_a_typo_names_the_file(tmp_path: Path) -> None:
    assert Config.model_validate({}).limits.on_quota == "wait"
    assert Config.model_validate({"limits": {"on_quota": "fallback"}}).limits.on_quota == "fallback"
    (tmp_path / ".vaultops").mkdir()
    (tmp_path / ".vaultops" / "config.toml").write_text('[limits]\non_quota = "wiat"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, environ={})
    said = str(caught.value)
    assert "config.toml" in said and "on_quota" in said and "'wait' or 'fallback'" in said, said


def test_the_status_says_the_profile_and_the_minute_in_the_clocks_zone() -> None:
    assert waiting_reason("worker-code", datetime(2026, 12, 4, 0, 52, tzinfo=UTC)) == (
        "usage limit of worker-code; resumes at 2026-12-04 00:52 UTC"
    )


def test_a_resume_that_failed_before_its_first_turn_had_no_session_to_go_on_in() -> None:
    gone = "Claude Code printed no JSON result (exit 1): No conversation found with session ID: 0b1c2d3e"
    printed_json = Attempt("claude", Failure.OTHER, "", gone, 0.3, 1)
    streamed = Attempt(
        "claude", Failure.OTHER, "", "Claude Code stopped: error_during_execution", 0.3, turns=0
    )
    worked_then_failed = replace(streamed, turns=3)
    assert session_gone(printed_json) and session_gone(streamed)
    assert not session_gone(worked_then_failed)
    assert not session_gone(replace(LIMITED, turns=0)), "the limit again: it waits again, in its session"


def test_the_persons_retry_under_a_waiting_request_tries_it_now() -> None:
    said = "\n" + "\n".join(results.status_only(State.WAITING, NOW, waiting_reason("claude", RESET)))
    holds = {"claude": RESET.timestamp()}
    waiting = inbox(RESEARCH + said)
    assert agenda_for(waiting, facts_for(waiting, quota=holds), CONFIG).items == ()
    retried = inbox(RESEARCH + said + "\n- retry: yes")
    assert kinds(agenda_for(retried, facts_for(retried, quota=holds), CONFIG)) == {"REQ-2": "profile"}
