"""Waiting for the quota, with the real Claude Code CLI offline: the fake API answers a subscription's
call with its usage limit (a 429 whose ``anthropic-ratelimit-unified-*`` headers say when it resets), the
request waits for that time on a clock the test moves, and then goes on in the same session; a second
request on the same account waits without a call.  ``tick`` runs in this process with the test's clock;
the CLI is a real subprocess."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_cli import profile, requires_claude
from tests.support.fake_anthropic import FakeAnthropic, Text, ToolUse, UsageLimit
from tests.support.helpers import inbox_path, inbox_text, routed, vault_with
from vaultops.engine.tick import tick
from vaultops.scan.note import parse_note
from vaultops.vault import Vault

pytestmark = requires_claude

INBOX = (
    "# Inbox\n\n## REQ-first Fix the build\n- type: code\n- ready: yes\n"
    "Fix the failing build step by step, and log each step in the steps file.\n"
)
SECOND = "\n## REQ-second Tidy the build\n- type: code\n- ready: yes\nTidy the build script.\n"
WAITING = re.compile(r"usage limit of worker-code; resumes at (\d{4}-\d\d-\d\d \d\d:\d\d) UTC")


class Clock:
    """The pass's clock: where the test puts it."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def statuses(vault: Path) -> dict[str, tuple[str, str]]:
    note = parse_note("i", inbox_path(vault).read_bytes())
    out = {}
    for r in note.requests:
        if r.statuses:
            out[r.id] = (r.statuses[-1].state.value, r.statuses[-1].reason)
    return out


def said(body: dict[str, Any]) -> str:
    """All a call to the API carried, as text: its messages, with their tool uses and results."""
    return json.dumps(body.get("messages", []))


def vault_for(tmp_path: Path, api: FakeAnthropic, limits: str = "max_concurrent = 1", gate: str = "") -> Path:
    table = profile(
        "worker-code", api.start(), tmp_path / "cc", workdir="work", timeout=120, subscription=True
    )
    table += f'gate = "{gate}"\n' if gate else ""  # "none": its JSON result alone, not the stream
    local = routed(table, 'code = ["worker-code"]', "[0.1]") + f"\n[limits]\n{limits}\n"
    vault = vault_with(tmp_path / "v", INBOX, local)
    (vault / "work").mkdir()
    return vault


def limited(tmp_path: Path, api: FakeAnthropic, gate: str = "") -> tuple[Path, Clock, str, datetime]:
    """A vault whose first request took a step and met its account's usage limit, two hours from the
    clock: (the vault, the clock, its waiting status, the minute that status says it resumes at)."""
    # the CLI words the reset on the real clock ("resets 1:05am (UTC)"): the test's clock starts there
    start = datetime.now(UTC).replace(microsecond=0)
    reset = int(start.timestamp()) + 2 * 3600 + 30
    api.script(ToolUse("Bash", {"command": "echo part one >> steps.txt"}), UsageLimit(reset))
    vault = vault_for(tmp_path, api, gate=gate)
    clock = Clock(start)
    tick(Vault.open(vault), clock=clock, wait_settle=False)
    state, reason = statuses(vault)["REQ-first"]
    assert state == "waiting", (state, reason, inbox_text(vault))
    found = WAITING.fullmatch(reason)
    assert found is not None, reason
    resumes = datetime.strptime(found.group(1), "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
    # the reset the API gave, to the minute (the CLI's words cut the seconds; its stream says them exactly)
    assert reset - 60 <= resumes.timestamp() <= reset + 60, (resumes, reset)
    assert len(api.requests) == 2, "the limit ends the run: no retry in seconds, no fallback"
    assert (vault / "work" / "steps.txt").read_text() == "part one\n"  # its work so far is kept
    if gate == "none":  # the reset was read from the result's words: the CLI printed no stream
        logs = "".join(p.read_text() for p in (vault / ".vaultops" / "state" / "logs" / "runs").glob("*.log"))
        assert "rate_limit_event" not in logs and "You've hit your session limit" in logs
    return vault, clock, reason, resumes


@pytest.mark.parametrize("gate", ["claude", "none"], ids=["gated-stream", "ungated-json"])
def test_a_request_at_its_accounts_usage_limit_waits_for_the_reset_and_goes_on_in_its_session(
    tmp_path: Path, api: FakeAnthropic, gate: str
) -> None:
    vault, clock, reason, resumes = limited(tmp_path, api, gate)
    start = clock.now

    # an hour on, a second request for the same account waits too, and asks the API nothing
    with inbox_path(vault).open("a") as fh:
        fh.write(SECOND)
    clock.now = start + timedelta(hours=1)
    tick(Vault.open(vault), clock=clock, wait_settle=False)
    now = statuses(vault)
    assert now["REQ-second"] == ("waiting", reason), now
    assert now["REQ-first"] == ("waiting", reason), "said once: the first's line is not written again"
    assert inbox_text(vault).count(reason) == 2
    assert len(api.requests) == 2, "no call for the second request while its account is at its limit"
    dashboard = (vault / "_System" / "vaultops.md").read_text()
    assert dashboard.count(f"waiting · {reason}") == 2, dashboard

    # a minute before the reset nothing starts; at it, both go on
    clock.now = resumes - timedelta(minutes=1)
    tick(Vault.open(vault), clock=clock, wait_settle=False)
    assert len(api.requests) == 2
    api.script(Text("DONE: the build is fixed."), Text("DONE: the build is tidy."))
    clock.now = resumes + timedelta(seconds=61)
    tick(Vault.open(vault), clock=clock, wait_settle=False)
    done = statuses(vault)
    assert done["REQ-first"][0] == "done" and done["REQ-second"][0] == "done", (done, inbox_text(vault))
    assert len(api.requests) == 4
    resumed = [said(body) for body in api.requests[2:] if "part one" in said(body)]
    assert len(resumed) == 1, (
        "the first request went on in its own session: its earlier tool use was sent again"
    )
    assert "usage limit" in resumed[0], "and it was told why it had stopped"
    print(f"\nquota: waited from {start:%H:%M} to {resumes:%H:%M} UTC on the test's clock; 4 calls in all")


def test_a_request_whose_session_is_gone_starts_again_at_the_reset_with_its_work_so_far(
    tmp_path: Path, api: FakeAnthropic
) -> None:
    vault, clock, _, resumes = limited(tmp_path, api)
    for session in (tmp_path / "cc" / "projects").rglob("*.jsonl"):  # Claude Code's sessions, cleared
        session.unlink()
    api.script(Text("DONE: the build is fixed."))
    clock.now = resumes + timedelta(seconds=61)
    tick(Vault.open(vault), clock=clock, wait_settle=False)
    state, reason = statuses(vault)["REQ-first"]
    assert state == "done", (state, reason, inbox_text(vault))
    assert len(api.requests) == 3, "the resume failed before any call; the run that started again made one"
    again = said(api.requests[2])
    assert "Fix the failing build step by step" in again and "part one" not in again
    assert (vault / "work" / "steps.txt").read_text() == "part one\n"


def test_a_request_claimed_with_one_that_meets_the_limit_waits_without_a_call(
    tmp_path: Path, api: FakeAnthropic
) -> None:
    start = datetime.now(UTC).replace(microsecond=0)
    api.script(UsageLimit(int(start.timestamp()) + 3600))
    vault = vault_for(tmp_path, api)
    with inbox_path(vault).open("a") as fh:
        fh.write(SECOND)
    tick(Vault.open(vault), clock=Clock(start), wait_settle=False)  # one batch: both claimed, run in turn
    both = statuses(vault)
    assert both["REQ-first"][0] == both["REQ-second"][0] == "waiting", (both, inbox_text(vault))
    assert both["REQ-first"][1] == both["REQ-second"][1]
    assert len(api.requests) == 1, "the second job of the batch saw the first's limit and made no call"


def test_with_on_quota_fallback_the_limit_fails_over_as_before(tmp_path: Path, api: FakeAnthropic) -> None:
    start = datetime.now(UTC).replace(microsecond=0)
    api.script(UsageLimit(int(start.timestamp()) + 3600))
    vault = vault_for(tmp_path, api, 'on_quota = "fallback"')
    tick(Vault.open(vault), clock=Clock(start), wait_settle=False)
    state, reason = statuses(vault)["REQ-first"]
    assert state == "error" and reason.startswith("usage limit: You've hit your session limit"), reason
    assert len(api.requests) == 1
