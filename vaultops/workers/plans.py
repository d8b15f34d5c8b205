"""A plan note run by a worker (``worker:`` in its frontmatter): what the worker's reports mean for the note.
Pure: the worker's recorded state and its reports in, the news for the note out.

The worker's ``[DONE:…]`` completes the note; its ``[ESCALATE:…]``, or a request the policy escalated,
escalates it (the worker waits for the person's answer, which goes to its stdin); a worker that ends
without ``[DONE:…]``, or runs past its time, leaves the note in error, and ``- retry: yes`` starts a new
one.  Reports are taken in order, once each: the caller remembers the last one it wrote down.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vaultops.model import State

NEWS_FILE = "news"  # in .vaultops/state/workers/: rewritten when a plan's worker said something for its note
ENDED = frozenset({"exited", "failed", "lost"})
UNGATED = "UNGATED"  # the supervisor's own report: the gate did not see a call, the worker is stopped
_ASKED = re.compile(r"\[(?:ESCALATE|REQUEST):([^\]]+)\]")


@dataclass(frozen=True, slots=True)
class Heard:
    """One report of a worker, as its supervisor recorded it (a ``worker_report`` event)."""

    id: int
    tag: str  # REQUEST, STATUS, DONE, ESCALATE or PROBLEM
    label: str
    verdict: str  # approve, escalate or deny
    line: str

    @classmethod
    def from_event(cls, event: dict[str, Any]) -> Heard:
        d = event["detail"]
        return cls(event["id"], d.get("tag", ""), d.get("label", ""), d.get("verdict", ""), d.get("line", ""))


@dataclass(frozen=True, slots=True)
class News:
    """What to write under the plan note."""

    state: State  # DONE, ESCALATED or ERROR
    reason: str
    output: str  # for a result block (DONE and ERROR)
    heard: int  # the reports up to this event id are taken
    stop: bool  # the worker is to be stopped (done, or out of time)


def news(
    name: str,
    state: str,
    exit_code: int | None,
    reports: Sequence[Heard],
    *,
    overdue: float | None = None,
    log_tail: Sequence[str] = (),
) -> News | None:
    """The first thing the note must say about worker ``name``, or None while it works on.  ``state``: its
    observed state (``lost`` when its process is gone); ``overdue``: its time, when it has run past it."""
    said = [r.line for r in reports if r.tag == "STATUS"]
    for r in reports:
        if r.tag == UNGATED:  # whatever else it said: it ran (or could have run) a call unjudged
            why = f"worker {name} was stopped: {r.line.strip()}; `- retry: yes` starts a new worker"
            return News(State.ERROR, why, "\n".join([*said, *log_tail]), r.id, stop=True)
        if r.tag == "DONE":
            output = "\n".join([*said, r.line])
            return News(State.DONE, "", output, r.id, stop=True)
        if is_news(r.tag, r.verdict):
            why = (
                f"worker {name} asks the person: {r.line.strip()}; `- decision: approve` or `deny` is "
                "written to its input, and it goes on"
            )
            return News(State.ESCALATED, why, "", r.id, stop=False)
    last = reports[-1].id if reports else 0
    if state in ENDED:
        code = f" (exit code {exit_code})" if exit_code is not None else ""
        why = (
            f"worker {name} ended{code} without a [DONE:…] line; `vaultops worker logs {name}` shows its "
            "output, `- retry: yes` starts it again"
        )
        return News(State.ERROR, why, "\n".join([*said, *log_tail]), last, stop=False)
    if overdue is not None:
        why = (
            f"worker {name} gave no [DONE:…] within its time ({overdue:.0f} s) and was stopped; "
            "`- retry: yes` starts it again"
        )
        return News(State.ERROR, why, "\n".join([*said, *log_tail]), last, stop=True)
    return None


def is_news(tag: str, verdict: str) -> bool:
    """A report the plan note must show at once (the daemon is woken for it)."""
    return tag in ("DONE", "ESCALATE", UNGATED) or (tag == "REQUEST" and verdict == "escalate")


def asked_label(reason: str) -> str:
    """The action a worker's escalation asked about, read back from the note's status line."""
    m = _ASKED.search(reason)
    return m.group(1) if m else "escalation"


def answer_for(label: str, verdict: str, comment: str) -> str:
    """The person's answer, as the worker reads answers: ``[ANSWER:<action>] <verdict> — <reason>``."""
    said = f": {' '.join(comment.split())}" if comment.strip() else ""
    return f"[ANSWER:{label}] {verdict} — the person answered{said}"
