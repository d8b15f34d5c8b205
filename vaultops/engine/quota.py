"""Waiting for an account's usage limit, at the edges: the reset a run met is kept in state.db, read back
for the gate and for the jobs of the same batch, and a request that waited goes on in its session.

The gate's rule is ``decide.quota`` (pure); this module is its I/O.  state.db's ``kv`` holds two keys:
``quota:account:<account>`` (when that account's limit resets, and which profile met it) and
``quota:session:<note>:<request>`` (the session of the run that met it, read once, when the request runs
again).  docs/quota.md says what the person sees.
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from datetime import datetime

from vaultops.decide.quota import account_of, accounts, held, resume_at, waiting_reason
from vaultops.engine.context import Context
from vaultops.engine.ports import Runner
from vaultops.model import State
from vaultops.render.results import RunResult
from vaultops.run.dispatch import Dispatched
from vaultops.run.jobs import Job
from vaultops.run.outcome import Attempt, Failure

HOLD = "quota:account:"
WAITED = "quota:session:"
# what Claude Code says to a --resume of a session it does not have (its folder was cleared, say); in
# stream-json it says only error_during_execution, with no turn taken
SESSION_GONE = "No conversation found"


def waits(ctx: Context) -> bool:
    return ctx.config.limits.on_quota == "wait"


def holds(ctx: Context) -> dict[str, float]:
    """Each profile whose account's limit was met: when it resets (an epoch; past ones too)."""
    if not waits(ctx):
        return {}
    out = {}
    for name, account in accounts(ctx.config).items():
        raw = ctx.state.get(HOLD + account)
        if not raw:
            continue
        try:
            out[name] = float(json.loads(raw)["until"])
        except (ValueError, KeyError, TypeError):
            continue  # a row this version cannot read holds nothing
    return out


def _waited_key(job: Job) -> str:
    return f"{WAITED}{job.file}:{job.request_id}"


def held_now(ctx: Context, job: Job, lock: threading.Lock) -> RunResult | None:
    """A job whose account met its limit after it was claimed (a job before it in the same batch): it
    waits as the gate would have had it wait, without a call (unless the person asked to retry it now)."""
    if not waits(ctx) or job.retried:
        return None
    now = ctx.clock()
    with lock:
        found = held(job.profile, holds(ctx), now)
    if found is None:
        return None
    return RunResult(State.WAITING, job.profile, now, 0.0, "", waiting_reason(*found))


def waited(ctx: Context, job: Job, dispatched: Dispatched, lock: threading.Lock) -> RunResult:
    """The run's result; for one that stopped at its account's usage limit, the wait: the reset kept for
    the account (every request of it waits), the session kept for this request, the status said."""
    result = dispatched.result
    last = dispatched.attempts[-1] if dispatched.attempts else None
    if result.state is not State.WAITING or last is None or last.usage is None:
        return result
    now = ctx.clock()
    until = resume_at(last.usage.resets(now), now)
    profile = ctx.config.profiles.get(last.profile)
    with lock:
        if profile is not None:
            hold = {"until": until.timestamp(), "profile": last.profile, "said": last.usage.said}
            ctx.state.set(HOLD + account_of(profile), json.dumps(hold))
        ctx.state.set(_waited_key(job), last.session_id or "")
        ctx.state.event(
            "quota", job.file, job.request_id, profile=last.profile, until=until.isoformat(),
            said=last.usage.said, session=last.session_id or "",
        )  # fmt: skip
    return replace(result, reason=waiting_reason(last.profile, until))


def after_quota(ctx: Context, job: Job, lock: threading.Lock) -> Job:
    """A request that waited for its account's reset goes on in the session that met the limit, told so;
    without one (another machine ran it, or it met the limit before its session began) it starts again
    with what the note holds of its work so far.  The session is read once."""
    key = _waited_key(job)
    with lock:
        session = ctx.state.get(key)
        if session is None:
            return job
        ctx.state.set(key, "")
    if not session or job.resume or job.tasks:  # an approval or a review has its own session; a fan-out's
        return job  # tasks each run anew (they are not one session)
    return replace(job, resume=session, waited="its account's usage limit, which has reset")


def run(ctx: Context, job: Job, dispatcher: Runner, started: datetime) -> RunResult:
    """The job's run, and its wait if it met its account's usage limit.  A request going on after the
    reset whose session Claude Code no longer has starts again, with the work so far."""
    dispatched = dispatcher.run(job, started)
    first = dispatched.attempts[0] if dispatched.attempts else None
    if job.waited and first is not None and dispatched.result.state is State.ERROR and session_gone(first):
        dispatched = dispatcher.run(replace(job, resume="", waited=""), started)
    return waited(ctx, job, dispatched, dispatcher.lock)


def session_gone(attempt: Attempt) -> bool:
    """A resumed attempt that failed before its first turn: its session was not there to go on in."""
    if attempt.ok or attempt.failure is Failure.QUOTA:
        return False
    return SESSION_GONE in attempt.detail or attempt.turns == 0
