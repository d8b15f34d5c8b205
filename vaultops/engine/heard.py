"""What the person's answers from chat mean for a note.  Pure: the note and the answers in, the lines to
insert and what to tell the person out.

A typed answer (``approve REQ-…``) counts for an escalated request when it was written after the
escalation, as one typed under it does.  A button press counts only while everything it was bound to
still holds: the message is younger than ``[notify] answer_within``, the request is still escalated by
the very escalation the message was about (``notify.message.binding``: same text, same status line),
and nobody has answered it yet, in this batch or before.  Anything else does nothing, and the person is
told why where they pressed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from vaultops.base.durations import say_duration
from vaultops.decide.answers import signature, standing_answer
from vaultops.decide.trust import EDITED
from vaultops.lines import line_time
from vaultops.model import APPROVAL_WORDS, Request, State, StatusLine, Target, index_by_id
from vaultops.notify.message import binding
from vaultops.notify.replies import ChatAnswer, Press, writable
from vaultops.scan.note import ParsedNote
from vaultops.store.inserts import Insert

_DECIDED = frozenset({State.APPROVED, State.DENIED})
_NO_BRACKETS = str.maketrans("()", "[]")


@dataclass(frozen=True, slots=True)
class PressHeard:
    """What to tell the one who pressed, once the note is written: ``insert`` None means it did nothing."""

    press: Press
    toast: str
    insert: Insert | None = None
    outcome: str = ""  # for the message itself, once the decision is in the note


@dataclass(frozen=True, slots=True)
class TypedHeard:
    """A typed answer, and what it did, to be replied where it was typed once the note is written:
    ``insert`` None means nothing was written, and ``why`` says why."""

    answer: ChatAnswer
    rel: str
    why: str = ""
    insert: Insert | None = None

    def reply(self, landed: bool) -> str:
        """What the person reads under their answer: the line written and where, or why there is none."""
        rid = self.answer.request_id
        if self.insert is None:
            return f"Nothing was written: {self.why}."
        if not landed:
            return (
                f"Nothing was written: {rid} changed in {self.rel} as you answered. Look at the note, and "
                "answer again if it still asks."
            )
        return f"Wrote `{self.insert.lines[0]}` under {rid} in {self.rel}."


@dataclass(slots=True)
class Heard:
    inserts: list[Insert] = field(default_factory=list)
    said: list[str] = field(default_factory=list)  # typed answers that were not taken, one sentence each
    presses: list[PressHeard] = field(default_factory=list)
    typed: list[TypedHeard] = field(default_factory=list)  # each typed answer, to reply to where it was typed


def decision_line(answer: ChatAnswer) -> str:
    """The answer as the person's line under the request, signed with their name.  The signature is one
    bracketed part with no bracket of its own (``decide.answers`` reads what follows it as the person's
    comment, and only there looks for a profile to run on: a group's title must not choose one)."""
    widened = answer.verdict == "approve" and answer.scope == "request"
    scope = f" {APPROVAL_WORDS['request']}" if widened else ""
    who = writable(answer.who).translate(_NO_BRACKETS) or "someone"
    comment = writable(answer.comment)
    said = f": {comment}" if comment else ""
    return f"- decision: {answer.verdict}{scope} — {signature(answer.via, who)}{said}"


def hear(note: ParsedNote, answers: Sequence[ChatAnswer], now: datetime, answer_within: float) -> Heard:
    """The lines to insert into ``note`` for ``answers`` (all of them naming requests of this note, or
    none), and what to say about each that was not taken."""
    index = index_by_id(note.requests)
    heard = Heard()
    answered: dict[str, str] = {}  # request id -> who answered it in this batch
    for answer in answers:
        found = index.get(answer.request_id, [])
        request = found[0] if found else None
        if answer.press is not None:
            why = press_refusal(request, answer, now, answer_within, answered)
            if why:
                heard.presses.append(PressHeard(answer.press, why))
                continue
        else:
            why = typed_refusal(request, answer, note.rel)
            if why:
                heard.said.append(
                    f"{answer.via}: {answer.who} answered {answer.request_id}; not taken: {why}"
                )
                heard.typed.append(TypedHeard(answer, note.rel, why))
                continue
        insert = Insert(Target(answer.request_id), (decision_line(answer),), frozenset({State.ESCALATED}))
        heard.inserts.append(insert)
        answered.setdefault(answer.request_id, answer.who)
        if answer.press is not None:
            heard.presses.append(PressHeard(answer.press, _toast(answer), insert, _outcome(answer, now)))
        else:
            heard.typed.append(TypedHeard(answer, note.rel, insert=insert))
    return heard


def typed_refusal(request: Request | None, answer: ChatAnswer, rel: str) -> str:
    """Why a typed answer is not taken ("" when it is), said to the person in the chat too."""
    rid = answer.request_id
    if request is None:
        return f"{rid} is not in {rel}"
    last = request.statuses[-1] if request.statuses else None
    if request.state is not State.ESCALATED or last is None:
        return f"{rid} is {request.state.value}, not waiting for a decision"
    escalated = line_time(last.at)
    if answer.date and escalated is not None and answer.date < escalated.timestamp():
        return f"the answer to {rid} predates its escalation"
    if request.forged == EDITED:  # an approval of what it said before: it asks again, bound to the new text
        return f"{rid} changed after it was escalated; a fresh message asks again: answer that one"
    return ""


def press_refusal(
    request: Request | None, answer: ChatAnswer, now: datetime, within: float, answered: dict[str, str]
) -> str:
    """Why a press does nothing ("" when it counts), said to the one who pressed."""
    press = answer.press
    assert press is not None
    rid = answer.request_id
    if request is None:
        return f"{rid} is not in its note any more. Nothing was done."
    if now.timestamp() - press.sent > within:
        return (
            f"This message is older than {say_duration(within)}, so its buttons do nothing. "
            f"Answer {rid} in the note."
        )
    if rid in answered:
        return f"{rid} was already decided, by {answered[rid]}. Nothing more was done."
    state = request.state
    if state is State.CANCELLED:
        return f"{rid} is not escalated any more (cancelled). Nothing was done."
    if state in _DECIDED:
        return f"{rid} was already decided: {state.value}. Nothing more was done."
    if state is not State.ESCALATED:  # a finished request is read as its last status alone: it went on
        return f"{rid} was already decided: it is {state.value} now. Nothing more was done."
    bound = _bound_escalation(request, press)
    if bound is None or request.statuses[-1].line != bound.line:
        return f"{rid} has changed since this message was sent. Answer the newest message, or the note."
    if standing_answer(request) is not None:
        return f"{rid} was already answered in the note. Nothing more was done."
    return ""


def _bound_escalation(request: Request, press: Press) -> StatusLine | None:
    for status in request.statuses:
        bound = binding(request.file, request.id, request.text_hash, status.at)
        if status.state is State.ESCALATED and bound == press.binding:
            return status
    return None


def _toast(answer: ChatAnswer) -> str:
    if answer.verdict == "deny":
        return f"Denied: written under {answer.request_id} in the note."
    scope = APPROVAL_WORDS[answer.scope]
    return f"Approved {scope}: written under {answer.request_id} in the note; it runs once."


def _outcome(answer: ChatAnswer, now: datetime) -> str:
    verdict = "Denied" if answer.verdict == "deny" else "Approved once"
    return f"{verdict} by {answer.who} at {now.strftime('%H:%M')} — written into the note."
