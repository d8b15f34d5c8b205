"""Waiting for an account's usage limit to reset (``[limits] on_quota = "wait"``).  Pure.

An account is what a profile's agent pays with: its program and the credentials its ``env`` gives it
(an API key, an OAuth token, a config folder that holds a login).  Profiles that give none share the
account of the machine's own login, per program.  When one run reports the account's limit, every
profile of that account waits until its reset: no request of theirs starts, so none of them spends a
call to learn what is known already (docs/quota.md).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from datetime import datetime

from vaultops.config import Config, ProfileConfig

# What in a profile's env chooses the account its agent pays with (Claude Code, and the usual others).
CREDENTIALS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR",
    "ANTHROPIC_BASE_URL", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "AWS_PROFILE",
    "OPENAI_API_KEY", "CODEX_HOME", "GEMINI_API_KEY", "HOME",
)  # fmt: skip

# A reset said to be now or past is not believed: the wait is at least this long, so that a CLI that
# keeps saying a past time cannot start the request again on every pass.
MIN_WAIT = 60.0


def account_of(profile: ProfileConfig) -> str:
    """The account a profile's agent pays with, as a key: its program and its credentials, hashed (the
    key is kept in state.db, the credentials never are)."""
    program = os.path.basename(profile.command[0]) if profile.command else ""
    given = sorted((k, v) for k, v in profile.env.items() if k in CREDENTIALS)
    digest = hashlib.sha256(repr((program, given)).encode()).hexdigest()[:16]
    return f"{program.split('.')[0] or 'agent'}:{digest}"


def accounts(config: Config) -> dict[str, str]:
    """Each profile's account key."""
    return {name: account_of(profile) for name, profile in config.profiles.items()}


def resume_at(reset: datetime, now: datetime) -> datetime:
    """When a request that met the limit at ``now`` starts again: its reset, and never sooner than
    ``MIN_WAIT`` from now."""
    floor = now.timestamp() + MIN_WAIT
    return reset if reset.timestamp() >= floor else datetime.fromtimestamp(floor, now.tzinfo)


def shown(at: datetime) -> str:
    """A resume time as the status line says it: the minute, in the clock's zone, with its name."""
    zone = at.tzname() or at.strftime("%z")
    return f"{at:%Y-%m-%d %H:%M} {zone}".strip()


def waiting_reason(profile: str, until: datetime) -> str:
    """The status of a request waiting for ``profile``'s account.  One function, for the run that met
    the limit and for the gate that holds the others, so that a pass never writes it twice."""
    return f"usage limit of {profile}; resumes at {shown(until)}"


def held(profile: str, holds: Mapping[str, float], now: datetime) -> tuple[str, datetime] | None:
    """``profile`` and when its account's limit resets, while that is later than ``now``; None when a
    request of it may start.  ``holds``: each profile's reset (an epoch), as state.db keeps it for its
    account."""
    until = holds.get(profile)
    if until is None or until <= now.timestamp():
        return None
    return profile, datetime.fromtimestamp(until, now.tzinfo)
