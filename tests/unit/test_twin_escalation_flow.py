"""Escalations on the twin: a blocked request is told once to each channel, the person's answer from chat
becomes their decision in the note, signed with the chat's name, and an approved request runs once; a
channel that fails is tried again on a later pass, only where it failed; a profile that cannot log in and
a day's spend past 80 % of the budget are told.  Whole passes of the real driver on ``engine.memory``'s
twins (``tests/support/twin.py``) with a clock the test moves; the answers come in as ``ChatAnswer``s, as
``notify.telegram`` hands them over.  tests/e2e/test_escalation_flow.py keeps the daemon acting on a reply
and the hook's environment in a real job; tests/e2e/test_chat_attacks.py keeps a chat that is not the
person's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import ROTATE
from tests.support.twin import START, Machine, TwinFleet, no_processes  # noqa: F401
from vaultops.engine.memory import MemoryChat
from vaultops.model import State
from vaultops.notify.replies import ChatAnswer, Verdict
from vaultops.notify.telegram import TelegramError
from vaultops.render.results import RunResult

pytestmark = pytest.mark.usefixtures("no_processes")

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
SUM = "## REQ-sum\n- type: research\n- ready: yes\nSummarise.\n"


def escalated(tmp_path: Path, inbox: str = ROTATE) -> tuple[TwinFleet, Machine]:
    """One machine that escalated ``inbox``'s request on its first pass."""
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{inbox}")
    fleet.tick()
    return fleet, fleet[0]


def say(machine: Machine, verdict: Verdict, comment: str = "", *, after: float = 1) -> None:
    """The person answers REQ-rotate in the chat, ``after`` seconds after the pass's clock."""
    when = int(machine.clock().timestamp() + after)
    machine.replies.say(ChatAnswer("REQ-rotate", verdict, comment, "Ann", "Telegram", when))


def test_an_escalation_is_told_once_and_a_chat_approval_runs_it_once(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_escalation_flow.py's telegram approval test (a message from another chat is
    tests/e2e/test_chat_attacks.py's: Telegram's parsing of its updates is not the twin's)."""
    fleet, machine = escalated(tmp_path)
    assert machine.requests()["REQ-rotate"].state is State.ESCALATED
    [notice] = machine.chat.sent
    message = f"{notice.title}\n{notice.body}"
    assert "REQ-rotate" in message and "blocked" in message and "key or token rotation" in message
    assert "obsidian://open?vault=machine0&file=_System%2FCOO-Inbox" in message
    machine.tick()
    assert len(machine.chat.sent) == 1, "one message per request and state"

    say(machine, "approve")
    machine.tick()
    assert "- decision: approve — via Telegram (Ann)" in machine.text()
    assert machine.requests()["REQ-rotate"].state is State.DONE
    assert fleet.runs() == {"REQ-rotate": 1}
    machine.tick()
    assert fleet.runs() == {"REQ-rotate": 1}, "the reply is read once"


def test_a_chat_denial_with_a_reason_is_the_persons_decision(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_escalation_flow.py's telegram denial test."""
    fleet, machine = escalated(tmp_path)
    say(machine, "deny", "not before the audit")
    machine.tick()
    assert machine.requests()["REQ-rotate"].state is State.DENIED
    assert "- decision: deny — via Telegram (Ann): not before the audit" in machine.text()
    assert fleet.runs() == {}


def test_a_reply_written_before_the_escalation_does_not_count(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_escalation_flow.py's test of the same name."""
    fleet, machine = escalated(tmp_path)
    say(machine, "approve", after=-3600)
    report = machine.tick()
    assert machine.requests()["REQ-rotate"].state is State.ESCALATED
    assert any("predates its escalation" in w for w in report.warnings), report.warnings
    assert fleet.runs() == {}


def test_a_notifier_that_fails_is_retried_on_a_later_pass_and_never_sends_twice(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_escalation_flow.py's test of the same name: of two channels, the one that
    refused the first post (a 500 naming the bot's token) is tried again, and only it."""
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}")
    machine = fleet[0]
    sink = MemoryChat(chat_id=2)
    sink.fail = [TelegramError(f"500 Internal Server Error from https://api.telegram.org/bot{TOKEN}/x")]
    machine.also = [sink]
    report = machine.tick()
    assert len(machine.chat.sent) == 1 and sink.sent == [] and sink.fail == []
    assert any("500" in w for w in report.warnings), report.warnings
    assert TOKEN not in " ".join(report.warnings)
    machine.tick()
    assert sink.sent == [], "not before its retry time"
    fleet.clock.move(seconds=11)  # the retry's time has come
    machine.tick()
    assert len(sink.sent) == 1 and len(machine.chat.sent) == 1, "retried where it failed, only there"
    fleet.clock.move(hours=1)
    machine.tick()
    assert len(sink.sent) == 1 and len(machine.chat.sent) == 1, "and never again"


def test_a_profile_that_cannot_log_in_is_told_to_the_person(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_escalation_flow.py's test of the same name; how a 401 from the agent CLI
    becomes this escalation is tests/e2e/test_dispatch.py's."""
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{SUM}")
    machine = fleet[0]
    refused = "auth: worker-research was refused (401 Invalid API key)"
    machine.runner.script["REQ-sum"] = RunResult(State.ESCALATED, "worker-research", START, 0.1, "", refused)
    machine.tick()
    assert machine.requests()["REQ-sum"].state is State.ESCALATED
    titles = [n.title for n in machine.chat.sent]
    assert any("worker-research cannot log in" in t for t in titles), titles
    assert any("REQ-sum escalated" in t for t in titles), titles


def test_the_budget_warning_at_80_percent_is_told_once(tmp_path: Path) -> None:
    """Replaces tests/e2e/test_escalation_flow.py's test of the same name."""
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{SUM}", extra="[limits]\ndaily_budget_usd = 1.0\n")
    machine = fleet[0]
    for rid in ("REQ-sum", "REQ-more"):
        machine.runner.script[rid] = RunResult(State.DONE, "worker-research", START, 0.1, "ok", cost_usd=0.9)
    machine.tick()
    more = "\n## REQ-more\n- type: research\n- ready: yes\nSummarise more.\n"
    fleet.person_push(lambda text: text + more)
    machine.tick()
    assert fleet.runs() == {"REQ-sum": 1, "REQ-more": 1}, "$0.90 of $1.00 spent: the next job may start"
    titles = [n.title for n in machine.chat.sent]
    assert sum("80 % of today's budget" in t for t in titles) == 1, titles
