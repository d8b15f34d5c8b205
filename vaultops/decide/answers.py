"""The person's answers under a request: which one counts, and what it asks vaultops to do.  Pure.

Only an answer written after the request's last status line counts: an answer from before an escalation
was not an answer to it, and each answer is acknowledged with a status line, which closes it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from vaultops import lines as fmt
from vaultops.config import Config
from vaultops.decide.route import Handling, decide, decide_text, to_profile
from vaultops.lines import line_time
from vaultops.model import APPROVAL_WORDS, Answer, Request, Ruling, State

# A job may be running for these: cancelling them is the dispatcher's business, not a status line's.
_NOT_CANCELLABLE = frozenset({State.LOCKED, State.RUNNING, State.DONE, State.DENIED, State.CANCELLED})


def standing_answer(request: Request) -> Answer | None:
    """The person's latest answer after the request's last status, if any."""
    last = request.statuses[-1].line if request.statuses else request.start
    after = [a for a in request.answers if a.line > last]
    return after[-1] if after else None


def escalated_since(request: Request) -> datetime | None:
    """When an escalation that nobody has answered began; None for any other request."""
    if request.state is not State.ESCALATED or not request.statuses or standing_answer(request) is not None:
        return None
    return line_time(request.statuses[-1].at)


def answered(request: Request, config: Config) -> Handling | None:
    """What the person's standing answer asks for: cancel, deny, or run an escalated request once.
    None when there is no such answer (``- retry: yes`` is read where runs are planned)."""
    answer = standing_answer(request)
    if answer is None:
        return unread(request, config)
    said = f" — {answer.comment}" if answer.comment else ""
    if answer.key == "cleanup":  # its worktree, once its job is over; the state it ended in stays
        if request.state in (State.LOCKED, State.RUNNING):
            return None
        return Handling("cleanup", ruling_of(request, config), answer.value)
    if answer.key == "cancel" and request.state not in _NOT_CANCELLABLE:
        return Handling("cancel", ruling_of(request, config), f"cancelled by the person{said}")
    if request.state is State.REVIEW and answer.key == "decision":  # a code job's review, answered
        if answer.value == "accept":
            return Handling("accept", ruling_of(request, config), f"accepted by the person{said}")
        if answer.value == "deny":
            return Handling("deny", ruling_of(request, config), f"rejected by the person{said}")
        # `approve` is not an answer to a review: said once, on a review line of its own, and nothing runs
        # (it ran the agent again once, and made a second commit)
        why = f"`- decision: {answer.value}` is no answer to a review and ran nothing; {fmt.REVIEW_ANSWERS}"
        return Handling("misanswered", ruling_of(request, config), why)
    if answer.key != "decision" or request.state is not State.ESCALATED or answer.value == "accept":
        return None
    if answer.value == "deny":
        return Handling("deny", ruling_of(request, config), f"denied by the person{said}")
    return _approved(request, config, answer)


def unread(request: Request, config: Config) -> Handling | None:
    """An answer line under an escalation or a review whose value vaultops does not read (``- decision:
    approved``, ``- decision: yes``): one line of the request's own state says which answers it takes, and
    nothing runs.  The value is never guessed at: a request runs on an answer the person wrote as such."""
    if not request.unread or request.state not in (State.ESCALATED, State.REVIEW):
        return None
    takes = fmt.REVIEW_ANSWERS if request.state is State.REVIEW else fmt.ESCALATION_ANSWERS
    why = f"`{request.unread[-1][1]}` is no answer vaultops reads and ran nothing; {takes}"
    return Handling("misanswered", ruling_of(request, config), why)


def forgery_action(request: Request, config: Config) -> Handling:
    """A request whose answers were forged (``request.forged`` says how) is escalated, whatever else it
    is: nothing runs on the strength of lines typed into it, and the status line says what was ignored.
    A blocked request escalates as it would have anyway, with the forgery said besides."""
    action = decide(request, config)
    if action.kind == "escalate":
        return replace(action, reason=f"{action.reason}; {request.forged}")
    return Handling(
        "escalate", action.ruling, f"{request.forged}; nothing runs until you answer below this line"
    )


def ruling_of(request: Request, config: Config) -> Ruling:
    """How a request's text is classified (its ``- type:`` wins), for what is said about it."""
    explicit = request.fields.get("type", "").strip().lower() or None
    return decide_text(request.asked, explicit, config)


_SIGNED = re.compile(r"\Avia [A-Za-z ]+ \([^()]*\)(?::\s*|\Z)")


def signature(via: str, who: str) -> str:
    """How an answer from chat is signed in the note: ``via Telegram (Ann)``; ``who`` without brackets."""
    return f"via {via} ({who})"


def own_words(comment: str) -> str:
    """An answer's comment without the signature of a chat answer: what the person wrote themselves."""
    return _SIGNED.sub("", comment, count=1)


def _approved(request: Request, config: Config, answer: Answer) -> Handling:
    """An approved request runs once: on the profile the answer names, else the one its `- profile:` field
    names, else its type's route.  It is not classified again: the person has seen why it stopped."""
    ruling = ruling_of(request, config)
    named = [w for w in re.split(r"[\s,;:()]+", own_words(answer.comment)) if w in config.profiles]
    fields = dict(request.fields)
    if named:
        route: tuple[str, ...] = (named[0],)
        fields.pop("profile", None)
    elif fields.get("profile", "").strip() in config.profiles:
        route = (fields["profile"].strip(),)
    else:
        route = config.route_for(ruling.type)
    if not route:
        names = ", ".join(config.profiles) or "none is configured"
        why = (
            f"approved, but no profile runs type {ruling.type}; name one in the answer "
            f"(`- decision: approve — <profile>`; profiles: {names})"
        )
        return Handling("error", ruling, why)
    action = to_profile(replace(ruling, route=route), fields, config, route)
    if action.kind != "profile":
        return action  # a timeout or tool list the profile does not allow: an error, said in the note
    said = f" — {answer.comment}" if answer.comment else ""
    approval = f"approved {APPROVAL_WORDS[answer.scope]}"
    lets = "" if answer.scope == "once" else "; the calls it asked for may run again until this job ends"
    why = f"{approval} by the person{said}; runs once on {action.profile}{lets}"
    return replace(action, approved=why, scope=answer.scope)
