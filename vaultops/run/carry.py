"""What one request's attempts carry to its next one, across retries, runs and claims: the reason the
last one failed (for the next prompt), the streak of the same failure (which stops the retries), and what
is left of the request's own limits (which cuts the next attempt).  The I/O around ``run.streak``: it
reads and writes state.db's ``attempts`` table; the dispatcher and the review call it."""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from vaultops.base.redact import redact, secret_values
from vaultops.base.words import counted
from vaultops.model import Limits, State
from vaultops.render.results import RunResult
from vaultops.run import streak
from vaultops.run.jobs import Job
from vaultops.run.outcome import Attempt, Failure
from vaultops.store.attempts_table import AttemptsTable
from vaultops.store.state import StateDB

# failures of the account or of vaultops itself, not of the request: they neither count in a streak nor
# break one (by value: a quota reached waits for its reset, vaultops.engine.quota)
_ASIDE = frozenset({Failure.RATE_LIMIT.value, Failure.UNAVAILABLE.value, Failure.CANCELLED.value, "quota"})
DETAIL_CHARS = 500


@dataclass(frozen=True, slots=True)
class FailedCheck:
    """A review's check that failed, as the next attempt is told of it."""

    shown: str  # its command, as the note shows it
    verdict: str  # "exit 1", "timed out after 600 s", "not run: …"
    tail: str  # the end of its output, redacted


_TASK = re.compile(r"-t(\d+)\Z")  # a fanned-out request's task runs under its claim and this (run.fanout)
INTERRUPTED = "interrupted: vaultops stopped before this attempt finished; what it did so far is kept"


def keyed(request_id: str, claim: str) -> str:
    """Whose attempts a job's are: its request's, or one task's of a fanned-out request (each task is
    retried on its own, and one task's failure is nothing to tell another, nor one streak with it)."""
    task = _TASK.search(claim)
    return f"{request_id}#task{task.group(1)}" if task else request_id


def interrupted(state: StateDB, file: str, request_id: str, claim: str, profile: str) -> None:
    """An attempt a crash cut short (``engine.recover``), said to the next one."""
    AttemptsTable(state).add(file, keyed(request_id, claim), claim, profile, streak.ASIDE, detail=INTERRUPTED)


def _clean(text: str) -> str:
    return redact(text, secret_values(os.environ))


def asked_by_the_person(job: Job) -> bool:
    """A run the person asked for (``- retry: yes``, an approval, a review's feedback): it runs once even
    after a streak of the same failure; any other run (a schedule's, a resumed one) does not."""
    return job.retried or job.approved or bool(job.feedback)


class Carry:
    """One job's view of its request's attempts.  ``lock`` guards state.db, shared by a pass's jobs."""

    def __init__(self, state: StateDB, lock: threading.Lock, job: Job, limit: int) -> None:
        self.table = AttemptsTable(state)
        self.lock = lock
        self.job = job
        self.limit = limit
        self.key = keyed(job.request_id, job.claim)
        self.own = Limits()  # the last attempt's limits before its earlier attempts' spend was taken off
        self.stop = ""  # why no attempt may follow the last one: "loop" or "spent"
        self.detail = ""  # the last attempt's error

    def history(self) -> list[streak.Tried]:
        with self.lock:
            return [streak.tried(row) for row in self.table.of(self.job.file, self.key)]

    def note(self) -> tuple[tuple[str, str], ...]:
        """What the next attempt's prompt carries: the last attempt's failure, and the person's words."""
        return tuple(streak.carried(streak.last_failure(self.history()), self.job.feedback).items())

    def told(self) -> str:
        """The same note as a paragraph for a prompt that is not built from the template (a resumed
        session's): JSON, so that what a note or a check printed stays data."""
        last = dict(streak.carried(streak.last_failure(self.history())))
        return (
            f"\n\nYour last attempt, as JSON:\n{json.dumps(last, ensure_ascii=False, indent=2)}"
            if last
            else ""
        )

    def limits(self, own: Limits) -> Limits:
        """An attempt's limits: ``own`` (the request's within its profile's) less what its earlier attempts
        spent since the request last finished."""
        self.own = own
        return streak.left(own, self.history()) if own else own

    def refused(self, started: datetime, profile: str, own: Limits) -> RunResult | None:
        """Why no attempt may start at all: the request failed the same way ``limit`` times in a row and
        the person did not ask again, or its own limits (``own``: the first profile's) are spent."""
        history = self.history()
        if streak.looping(history, self.limit) and not asked_by_the_person(self.job):
            return self.looped(RunResult(State.ESCALATED, profile, started, 0.0, ""), history)
        spent = streak.spent_out(own, history)
        if spent:
            return RunResult(State.ERROR, profile, started, 0.0, "", spent)
        return None

    def looped(self, result: RunResult, history: Sequence[streak.Tried] | None = None) -> RunResult:
        """``result`` sent to the person instead: each attempt of the streak with its failure, then what
        the last one said."""
        rows = streak.streak(self.history() if history is None else history)
        lines = [f"Failed the same way {len(rows)} times in a row:", *streak.history_lines(rows)]
        if result.output.strip():
            lines += ["", "The last attempt said:", result.output.rstrip()]
        return replace(
            result, state=State.ESCALATED, reason=streak.loop_reason(rows), output="\n".join(lines)
        )

    def ran(self, attempt: Attempt) -> bool:
        """Record an attempt; True when no other may follow it: it makes the request's streak of one
        failure reach the limit, or it spent what was left of the request's own limits."""
        job = self.job
        if attempt.ok:
            # a code job under review is done only when its checks pass (``checked``); its spend counts now
            kind = streak.ASIDE if job.review else streak.DONE
            self._add(attempt.profile, kind, cost_usd=attempt.cost_usd, turns=attempt.turns)
            return False
        failure = attempt.failure or Failure.OTHER
        self.detail = attempt.detail
        aside = failure.value in _ASIDE
        self._add(
            attempt.profile,
            streak.ASIDE if aside else streak.FAILED,
            signature="" if aside else streak.signature(failure.value, attempt.detail),
            detail=_clean(attempt.detail)[:DETAIL_CHARS],
            tail="" if aside else _clean(streak.tail(attempt.text)),
            cost_usd=attempt.cost_usd,
            turns=attempt.turns,
        )
        history = self.history()
        if not aside and streak.looping(history, self.limit):
            self.stop = "loop"
        elif failure is not Failure.LIMIT and streak.spent_out(self.own, history):  # a limit says it itself
            self.stop = "spent"
        return bool(self.stop)

    def ended(self, result: RunResult) -> RunResult:
        """The job's result, as the reason its attempts stopped early says it (the retry table did not
        have its say on the last attempt: what it would have done is not what happens)."""
        if self.stop == "loop":
            return self.looped(result)
        if self.stop == "spent":
            spent = streak.spent_out(self.own, self.history())
            return replace(result, state=State.ERROR, reason=f"{self.detail}; {spent}")
        return result

    def checked(self, failed: Sequence[FailedCheck], total: int) -> None:
        """Record a review's checks: all passed (the request finished), or which failed and how they ended."""
        if not failed:
            self._add("check", streak.DONE)
            return
        said = "; ".join(f"{c.shown} ({c.verdict})" for c in failed)
        tails = "\n".join(f"$ {c.shown}\n{c.tail}" if c.tail else f"$ {c.shown}" for c in failed)
        self._add(
            "check",
            streak.FAILED,
            signature=streak.signature(
                streak.REVIEW, "; ".join(c.verdict for c in failed), [c.shown for c in failed]
            ),
            detail=_clean(f"{len(failed)} of {counted(total, 'check')} failed: {said}")[:DETAIL_CHARS],
            tail=_clean(streak.tail(tails, lines=3 * streak.TAIL_LINES)),
        )

    def _add(
        self,
        profile: str,
        kind: str,
        *,
        signature: str = "",
        detail: str = "",
        tail: str = "",
        cost_usd: float | None = None,
        turns: int | None = None,
    ) -> None:
        job = self.job
        with self.lock:
            self.table.add(
                job.file, self.key, job.claim, profile, kind, signature=signature, detail=detail,
                tail=tail, cost_usd=streak.reported_cost(cost_usd), turns=turns,
            )  # fmt: skip
