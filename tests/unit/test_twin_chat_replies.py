"""Answers in chat, as the person sees them (issue 29), on the twins: a typed answer gets a reply saying
what was written where, or why nothing was; an escalated request edited in the note is escalated again at
once (a fresh message, bound to the new text), so the first approval after the edit runs it: one round,
not two.  The Bot API's side (the reply under the message, the old message's buttons taken off) is in
tests/e2e/test_chat_replies.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import INBOX, ROTATE
from tests.support.twin import Machine, TwinFleet, no_processes  # noqa: F401
from vaultops.model import State
from vaultops.notify.replies import ChatAnswer, Press, Verdict

pytestmark = pytest.mark.usefixtures("no_processes")

EDITED = "the request changed after it was escalated; it asks again as it reads now"


def escalated(tmp_path: Path) -> tuple[TwinFleet, Machine]:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}")
    fleet.tick()
    assert fleet[0].requests()["REQ-rotate"].state is State.ESCALATED
    return fleet, fleet[0]


def typed(machine: Machine, verdict: Verdict, rid: str = "REQ-rotate", message_id: int = 41) -> None:
    """The person types ``<verdict> <rid>`` in the chat (message ``message_id``), a second after the clock."""
    when = int(machine.clock().timestamp() + 1)
    machine.replies.say(
        ChatAnswer(rid, verdict, "", "Ann", "Telegram", when, chat_id=1, message_id=message_id)
    )


def test_a_typed_approval_is_replied_to_with_the_line_written_and_where(tmp_path: Path) -> None:
    fleet, machine = escalated(tmp_path)
    typed(machine, "approve")
    machine.tick()
    assert machine.replies.replied == [
        (1, 41, f"Wrote `- decision: approve — via Telegram (Ann)` under REQ-rotate in {INBOX}.")
    ]
    assert fleet.runs() == {"REQ-rotate": 1}
    machine.tick()
    assert len(machine.replies.replied) == 1, "replied once"


def test_a_typed_answer_that_is_not_taken_is_told_why(tmp_path: Path) -> None:
    fleet, machine = escalated(tmp_path)
    typed(machine, "approve", "REQ-nope", message_id=7)
    typed(machine, "deny", message_id=8)
    machine.tick()
    typed(machine, "approve", message_id=9)  # denied already
    machine.tick()
    assert machine.replies.replied == [
        (1, 7, f"Nothing was written: REQ-nope is not in {INBOX}."),
        (1, 8, f"Wrote `- decision: deny — via Telegram (Ann)` under REQ-rotate in {INBOX}."),
        (1, 9, "Nothing was written: REQ-rotate is denied, not waiting for a decision."),
    ]
    assert fleet.runs() == {}


def test_an_edited_escalation_asks_again_at_once_and_one_approval_runs_it(tmp_path: Path) -> None:
    fleet, machine = escalated(tmp_path)
    [first] = machine.chat.sent
    fleet.person_push(lambda t: t.replace("production env file", "staging env file"))  # from the phone
    fleet.clock.move(seconds=30)
    machine.tick()
    request = machine.requests()["REQ-rotate"]
    assert request.state is State.ESCALATED and EDITED in request.statuses[-1].reason
    [_, fresh] = machine.chat.sent
    assert "staging env file" in fresh.body and fresh.ask is not None and first.ask is not None
    assert fresh.ask.binding != first.ask.binding  # bound to the new text: the old message's buttons refuse
    machine.tick()
    assert len(machine.chat.sent) == 2, "asked again once"

    fleet.person_push(lambda t: t.rstrip("\n") + "\n- decision: approve\n")  # the first approval after it
    fleet.clock.move(seconds=30)
    machine.tick()
    assert machine.requests()["REQ-rotate"].state is State.DONE
    assert fleet.runs() == {"REQ-rotate": 1}
    assert "ignored the approval" not in machine.text()


def test_a_typed_approval_of_the_text_before_an_edit_is_refused_and_the_new_message_approves(
    tmp_path: Path,
) -> None:
    fleet, machine = escalated(tmp_path)
    fleet.person_push(lambda t: t.replace("production env file", "staging env file"))
    fleet.clock.move(seconds=30)
    typed(machine, "approve")  # read in the same pass as the edit, before it is asked again
    machine.tick()
    assert machine.replies.replied == [
        (1, 41, "Nothing was written: REQ-rotate changed after it was escalated; a fresh message asks "
         "again: answer that one."),
    ]  # fmt: skip
    assert fleet.runs() == {}
    fresh = machine.chat.sent[-1]
    assert fresh.ask is not None and EDITED in fresh.body
    sent = int(machine.clock().timestamp())
    press = Press(fresh.ask.binding, sent, "cb1", 1, 99, f"{fresh.title}\n\n{fresh.body}")
    machine.replies.say(ChatAnswer("REQ-rotate", "approve", "", "Ann", "Telegram button", 0, press=press))
    fleet.clock.move(seconds=5)
    machine.tick()
    assert [toast for _, toast in machine.replies.toasts] == [
        "Approved once: written under REQ-rotate in the note; it runs once."
    ]
    assert fleet.runs() == {"REQ-rotate": 1}
