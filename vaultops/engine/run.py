"""The run stage: one claimed job to its end, by its kind of work (safe to call from a worker thread).

A built-in check runs here, in process; an agent run and a fan-out go through the dispatcher (retries,
fallbacks, the gate's settings); a plan note with a ``worker:`` starts a long-lived worker and returns at
once (``engine.follow`` writes its news on later passes).
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from pathlib import Path

from vaultops.base import faults
from vaultops.engine import quota
from vaultops.engine.context import Context
from vaultops.engine.follow import start_worker
from vaultops.engine.halt import after_halt, keep_session
from vaultops.engine.ports import Runner
from vaultops.engine.record import Claimed, with_budget_warning
from vaultops.engine.review import reviewed
from vaultops.model import State
from vaultops.render.results import RunResult
from vaultops.run.dispatch import Dispatcher
from vaultops.run.fanout import run_tasks
from vaultops.run.jobs import Job, run_builtin
from vaultops.store.asked import asked_since, describe, end_of_job, grant, waiting
from vaultops.vault import Vault


def dispatcher_for(ctx: Context, claimed: list[Claimed], cancel: threading.Event | None = None) -> Runner:
    """What runs the claimed jobs' agents: the dispatcher, or the runner the pass was given."""
    if ctx.sides.runner is not None:
        return ctx.sides.runner
    notes = vault_notes(ctx.vault) if any("[[" in c.job.text for c in claimed) else []
    return Dispatcher(ctx.vault, ctx.state, notes, cancel=cancel)


def run_check(ctx: Context, job: Job) -> RunResult:
    """A built-in check, recorded in state.db as a run like any other."""
    run_id = ctx.state.run_started(
        job.file, job.request_id, job.claim, 1, "direct", ctx.vault.host, os.getpid()
    )
    check = ctx.sides.checks or run_builtin
    result = check(job, ctx.vault, ctx.clock())
    ctx.state.run_ended(run_id, result.state.value, result.exit_code, result.duration)
    return result


def run_job(ctx: Context, job: Job, dispatcher: Runner) -> RunResult:
    """One claimed job to its end."""
    faults.reach("job.run")
    if job.kind == "builtin":
        return run_check(ctx, job)
    started = ctx.clock()
    with dispatcher.lock:
        budget = ctx.budget()
    if budget.exhausted:  # spent by the jobs before it in this batch
        return RunResult(State.WAITING, job.profile, started, 0.0, "", budget.waiting_reason())
    if job.kind == "worker":
        return start_worker(ctx, job, job.files)
    if (held := quota.held_now(ctx, job, dispatcher.lock)) is not None:  # its account met its limit meanwhile
        return held
    job = after_halt(ctx, quota.after_quota(ctx, resumed(ctx.vault, job), dispatcher.lock), dispatcher.lock)
    try:
        if job.kind == "fanout":

            def run(part: Job) -> RunResult:
                return quota.run(ctx, part, dispatcher, started)

            result = run_tasks(job, run, ctx.config.limits.max_concurrent, started, ctx.clock)
        else:
            result = asked_of_the_person(ctx.vault, job, quota.run(ctx, job, dispatcher, started))
            keep_session(ctx, job, result, dispatcher.lock)
            result = reviewed(ctx, job, result, dispatcher.lock, dispatcher.cancel)
    finally:
        if job.lasting:
            end_of_job(ctx.vault.root, job.request_id)
    with dispatcher.lock:
        return with_budget_warning(ctx, result)


def resumed(vault: Vault, job: Job) -> Job:
    """An approved request whose agent was stopped by the hook goes on in the same Claude Code session,
    with exactly the calls it asked for let through once."""
    if not job.approved:
        return job
    asked = waiting(vault.root, job.request_id)
    if not asked:
        return job
    grant(vault.root, asked, lasting=job.lasting)
    return replace(job, resume=str(asked[-1].get("session_id") or ""), resumed_for=describe(asked))


def asked_of_the_person(vault: Vault, job: Job, result: RunResult) -> RunResult:
    """A run whose agent the hook stopped to ask the person is not done: it is escalated, saying what was
    asked and that an approval lets exactly that run once, in the same session."""
    if result.state is not State.DONE or not result.session:
        return result
    asked = asked_since(vault.root, job.request_id, result.session, result.started)
    if not asked:
        return result
    why = (
        f"the agent asked for {describe(asked)}, which needs the person; `- decision: approve` lets exactly "
        f"that run once, going on with session {result.session}"
    )
    return replace(result, state=State.ESCALATED, reason=why)


def vault_notes(vault: Vault) -> list[str]:
    """Every note and attachment of the vault, for resolving [[wikilinks]]."""
    out = []
    for folder, dirs, files in os.walk(vault.root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        rel = Path(folder).relative_to(vault.root)
        out += [(rel / f).as_posix() for f in files if not f.startswith(".")]
    return out
