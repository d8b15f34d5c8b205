"""Which answers under a request are answers.  Pure: the I/O side (vaultops.engine.provenance) finds out
who wrote the lines, and this decides what that means.

A ``- decision:``, ``- retry:`` or ``- cancel:`` line counts only when the status line it follows is one
vaultops wrote, under this request (its records say so, not the line's looks), and, with ``[answers]
authors``, only when a commit by a listed author brought it in, right under that same status line of
that same request.  Once vaultops has acted on the answer to a status line, that line is used up: no
answer after it counts again (lines deleted after it cannot replay the answer).  An approval holds for the
text its escalation was written for: a request changed since asks for a new approval.  Lines that fail
are not answers: the request goes on as if they were not there, and is told once why.

A status or lock line vaultops did not write is not one either (``vaultops.engine.provenance`` finds them,
``ParsedNote.disowned`` holds them): the request is decided as if it were not there, and the line is
named once, in the first line vaultops writes under the request after it (``unwritten``, ``named``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from vaultops.model import Answer, Request, State
from vaultops.scan.note import Disowned, ParsedNote


class Origin(StrEnum):
    """Who wrote the status line an answer follows."""

    OURS = "ours"  # this clone's records say vaultops wrote it, under this request
    VAULTOPS = "vaultops"  # not in this clone's records, brought in by a commit authored as vaultops
    OTHER = "other"  # neither: typed into the note, or a copy of a line vaultops wrote elsewhere


class By(StrEnum):
    """Who brought an answer line in (only looked at with ``[answers] authors``)."""

    LISTED = "listed"  # a commit by one of [answers] authors
    VAULTOPS = "vaultops"  # vaultops wrote it itself (a Telegram reply from a listed chat)
    UNLISTED = "unlisted"  # a commit by anyone else
    MOVED = "moved"  # a listed author's commit, but not under this status line of this request
    UNCOMMITTED = "uncommitted"  # no commit has it yet: it waits until one does


@dataclass(frozen=True, slots=True)
class Committer:
    by: By
    who: str = ""  # "Name <email>" of the commit's author


@dataclass(frozen=True, slots=True)
class Provenance:
    """What the I/O side found out about the lines a request's standing answers stand on."""

    status: Origin | None  # of the request's last status line; None when it has none
    committers: Mapping[int, Committer] | None = None  # answer line -> who; None: [answers] authors unset
    consumed: bool = False  # vaultops has acted on an answer to that status line (one of its own) already
    seen: str | None = None  # the request's text_hash when vaultops wrote it; None when not recorded


@dataclass(frozen=True, slots=True)
class Vetted:
    request: Request  # with the answers that do not count taken out, and ``forged`` set when some were forged
    waiting: str = ""  # why its answers wait (for the pass's report, not the note); "" when they do not


def standing(request: Request) -> tuple[Answer, ...]:
    """The answers after the request's last status line (after its heading when it has none): the ones
    that could ask vaultops for something now."""
    last = request.statuses[-1].line if request.statuses else request.start
    return tuple(a for a in request.answers if a.line > last)


def vet(request: Request, lines: Sequence[str], provenance: Provenance) -> Vetted:
    """``request`` with only the answers that count.  ``lines`` are the note's, to quote a forged line."""
    if request.unread and (provenance.status is not Origin.OURS or provenance.consumed):
        # an answer that does not read is named only under a status line this clone wrote and has not
        # acted on: under any other, vaultops would write the request's state again on a line's word
        request = replace(request, unread=())
    answers = standing(request)
    if not answers:
        return Vetted(request)
    if provenance.status is Origin.VAULTOPS:
        # Not this clone's line: another machine's vaultops wrote it (and acts on the answer), or someone
        # made a commit that claims to be vaultops's.  Either way this clone neither acts nor cries forgery.
        why = (
            f"{request.id}: the answer follows a status line this machine did not write, brought in by a "
            "commit authored as vaultops; the machine that wrote it acts on it (if no other machine runs "
            "vaultops here, or the line is older than vaultops's records of its lines, delete it and the "
            "answer, and the request is looked at afresh)"
        )
        return Vetted(_without(request, answers), why)
    if provenance.status is Origin.OTHER:
        return Vetted(
            _forged(request, answers, lines, answers[-1], "follows a status line vaultops did not write")
        )
    if provenance.status is None:
        # No status line at all: nothing of vaultops's to answer, so these were typed with the request.
        return Vetted(_forged(request, answers, lines, answers[-1], "follows no status line vaultops wrote"))
    if provenance.consumed:
        why = "follows a status line whose answer vaultops acted on already"
        return Vetted(_forged(request, answers, lines, answers[-1], why))
    vetted = Vetted(request)
    if provenance.committers is not None:
        vetted = _by_authors(request, answers, lines, provenance.committers)
    return _same_text(vetted, lines, provenance.seen)


# An escalation whose request was edited since, before anyone answered it: asked again as it reads now
EDITED = "the request changed after it was escalated; it asks again as it reads now"


def edited(request: Request, provenance: Provenance) -> bool:
    """An escalation this clone wrote, not answered yet, whose request no longer reads as it did then: it
    is escalated again at once (a fresh message, bound to the new text), so the person's next approval
    counts.  Left as it was, the edit said nothing, and the first approval typed after it was ignored (and
    used up) for being of another text: the person had to approve twice.  ``request`` read whole."""
    return (
        request.state is State.ESCALATED
        and request.text is not None
        and not standing(request)
        and provenance.status is Origin.OURS
        and not provenance.consumed
        and provenance.seen is not None
        and provenance.seen != request.text_hash
    )


def _same_text(vetted: Vetted, lines: Sequence[str], seen: str | None) -> Vetted:
    """An approval that would count, of a request whose text is no longer the one it was escalated with,
    does not: the person approved what they saw."""
    request = vetted.request
    answers = standing(request)
    if request.forged or not answers or seen is None or seen == request.text_hash:
        return vetted
    last = answers[-1]
    if (last.key, last.value) != ("decision", "approve"):
        return vetted
    quoted = _quoted(lines, last)
    said = f'ignored the approval "{quoted}": the request changed after it was escalated; approve it again'
    return replace(vetted, request=replace(_without(request, answers), forged=said))


def _by_authors(
    request: Request, answers: tuple[Answer, ...], lines: Sequence[str], committers: Mapping[int, Committer]
) -> Vetted:
    who = [committers.get(a.line, Committer(By.UNCOMMITTED)) for a in answers]
    if any(c.by is By.UNCOMMITTED for c in who):
        return Vetted(_without(request, answers))  # counted once it is committed, and told by whom
    unlisted = [(a, c) for a, c in zip(answers, who, strict=True) if c.by in (By.UNLISTED, By.MOVED)]
    if not unlisted:
        return Vetted(request)
    if len(unlisted) < len(answers):
        return Vetted(_without(request, tuple(a for a, _ in unlisted)))  # a listed author's answer stands
    answer, committer = unlisted[-1]
    why = f"was committed by {committer.who}, who is not one of [answers] authors"
    if committer.by is By.MOVED:
        why = f"was committed by {committer.who} under another status line or request, not this one"
    return Vetted(_forged(request, answers, lines, answer, why))


def _without(request: Request, dropped: tuple[Answer, ...]) -> Request:
    return replace(request, answers=tuple(a for a in request.answers if a not in dropped))


def _forged(
    request: Request, answers: tuple[Answer, ...], lines: Sequence[str], answer: Answer, why: str
) -> Request:
    name = _NAMES.get((answer.key, answer.value), answer.key)
    said = f'ignored a forged {name}: "{_quoted(lines, answer)}" {why}'
    return replace(_without(request, answers), forged=said)


def _quoted(lines: Sequence[str], answer: Answer) -> str:
    quoted = (
        lines[answer.line].strip() if 0 <= answer.line < len(lines) else f"- {answer.key}: {answer.value}"
    )
    return quoted if len(quoted) <= 80 else quoted[:79] + "…"


_NAMES = {
    ("decision", "approve"): "approval",
    ("decision", "deny"): "denial",
    ("decision", "accept"): "acceptance",
    ("retry", "yes"): "retry",
    ("cancel", "yes"): "cancellation",
    ("cleanup", "yes"): "cleanup",
    ("cleanup", "force"): "forced cleanup",
}


# --- status and lock lines vaultops did not write ---------------------------------------------------------


def unwritten(note: ParsedNote, request: Request) -> tuple[str, ...]:
    """The lines under ``request`` that imitate vaultops's and that no line of vaultops's follows yet (so
    the person has not been told of them): quoted, in order.  ``request`` as vetted: its lines are
    vaultops's."""
    found = note.disowned.get(request.start)
    if found is None:
        return ()
    ours = [s.line for s in request.statuses[-1:]] + [lk.line for lk in request.locks[-1:]]
    after = max(ours, default=request.start)
    return tuple(note.lines[n].strip() for n in found.lines if n > after and 0 <= n < len(note.lines))


def named(quoted: Sequence[str]) -> str:
    """What the person is told of lines that imitate vaultops's."""
    shown = ", ".join(f"`{_cut(q)}`" for q in quoted)
    if len(quoted) == 1:
        return f"{shown} was not written by vaultops; it changes nothing"
    return f"{shown} were not written by vaultops; they change nothing"


def as_written(request: Request, found: Disowned | None) -> Request:
    """``request`` (as vetted) with the state the note's own lines give it: the note writer checks that a
    request is still in the state the pass saw before it writes under it, and it reads the lines as they
    stand.  Only its last status (or lock) is the note's; everything else is the vetted request's."""
    if found is None:
        return request
    written = found.written
    if written.statuses:
        last = written.statuses[-1]
        if request.statuses and request.statuses[-1].line == last.line:
            return request
        return replace(request, statuses=(*request.statuses, last))
    if written.lock is not None and written.lock != request.lock:
        return replace(request, locks=(*request.locks, written.lock))
    return request


def _cut(text: str) -> str:
    text = text.replace("`", "'")
    return text if len(text) <= 80 else text[:79] + "…"
