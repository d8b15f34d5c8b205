"""Plan notes run by workers (``worker:`` in the frontmatter): starting the worker for a claimed note, and
following its reports into the note on every pass.  The I/O around ``vaultops.workers.plans``.

Starting is the run stage of such a note: the claim is made and pushed as for any job, then a worker is
spawned in its place, and the note says ``running — worker NAME …``.  From then on each pass of the clone
that claimed it reads the worker's new reports (state.db events, written by its supervisor) and writes
the news: ``[DONE:…]`` completes the note, an escalation waits for the person, whose answer is written to
the worker's input.  Nothing here waits for the worker, so a daemon restart loses nothing: the registry
and the reports are on disk, and the next pass goes on from the last report it wrote down.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from vaultops.base import steady
from vaultops.decide.answers import ruling_of, standing_answer
from vaultops.engine.context import Context
from vaultops.engine.journal import DailyWriter
from vaultops.engine.record import result_lines
from vaultops.model import Request, State, Target, targets_of
from vaultops.render import results
from vaultops.render.results import RunResult
from vaultops.run.jobs import Job
from vaultops.run.prompt import WORKER_REPORT, PromptInput, build_prompt
from vaultops.run.worktrees import WorktreeError, open_worktree
from vaultops.scan.note import ParsedNote
from vaultops.scan.plan import workdir_path
from vaultops.store.asked import describe, grant, waiting
from vaultops.store.inserts import Insert
from vaultops.store.state import StateDB
from vaultops.workers.control import WorkerError, inject, spawn, terminate, worker_folder
from vaultops.workers.logs import tail
from vaultops.workers.plans import Heard, News, answer_for, asked_label, news
from vaultops.workers.registry import Registry, Worker, is_live, observed_state

_FOLLOWED = frozenset({State.RUNNING, State.ESCALATED})
_LOG_LINES = 20


# What is done once a worker's lines have landed in its note, as records (``_apply``).
@dataclass(frozen=True, slots=True)
class Cancelled:
    """The person cancelled the plan: its worker is stopped, and the pass says why."""

    worker: Worker
    said: tuple[str, str]  # (request id, why)


@dataclass(frozen=True, slots=True)
class Answered:
    """The person's answer, to be written to the worker's input."""

    worker: Worker
    request_id: str
    line: str
    stopped: list[dict[str, object]]  # tool calls the gate stopped for the person
    approve: bool
    why: str


@dataclass(frozen=True, slots=True)
class Reported:
    """The worker's news, now in the note."""

    worker: Worker
    request: Request
    said: News
    state: str  # as observed now: a WorkerState, or "stale"
    at: datetime


WorkerEffect = Cancelled | Answered | Reported


def start_worker(ctx: Context, job: Job, files: tuple[str, ...]) -> RunResult:
    """Spawn the worker for a claimed plan note.  The result is ``running`` (or why it could not start)."""
    vault = ctx.vault
    started = ctx.clock()
    profile = job.route[0] if job.route else job.profile
    chosen = vault.config.profiles[profile]
    dir = workdir_path(job.workdir, vault.root) if job.workdir else None
    if job.worktree:  # a code job's own worktree, as for a one-shot run (vaultops.run.worktrees)
        try:
            dir = open_worktree(Path(job.repo), Path(job.worktree), job.branch, job.base).path
        except WorktreeError as exc:
            return RunResult(State.ERROR, profile, started, 0.0, "", f"{exc}; `- retry: yes` tries again")
    given = PromptInput(
        job.request_id, job.file, job.title, job.type, job.text, str(dir or vault.root), job.tools,
        files, job.timeout, job.earlier, branch=job.branch if job.worktree else "",
    )  # fmt: skip
    prompt = build_prompt(given, (), chosen.prompt_template, WORKER_REPORT)
    run_id = ctx.state.run_started(job.file, job.request_id, job.claim, 1, profile, vault.host, None)
    try:
        worker = spawn(
            vault, job.worker, (), dir=dir, files=files, parent=vault.agent, profile=profile, prompt=prompt,
            plan=job.file, claim=job.claim, request=job.request_id, branch=job.branch,
        )  # fmt: skip
    except WorkerError as exc:
        duration = (ctx.clock() - started).total_seconds()
        ctx.state.run_ended(run_id, "error", None, duration)
        reason = f"worker {job.worker} could not start: {exc.message}; `- retry: yes` tries again"
        return RunResult(State.ERROR, profile, started, duration, "", reason)
    duration = (ctx.clock() - started).total_seconds()
    ctx.state.run_ended(run_id, "done", None, duration)  # the attempt, starting the worker, went through
    reason = (
        f"worker {worker.name} (pid {worker.pid}) works on it; its [DONE:…] line completes this note "
        f"(`vaultops worker logs {worker.name}`)"
    )
    return RunResult(State.RUNNING, f"worker {worker.name}", started, duration, "", reason)


def follow_workers(ctx: Context, note: ParsedNote, daily: DailyWriter) -> bool:
    """Write what the workers running this note's plans said since the last pass.  True when the note was
    written (the caller reads it again)."""
    registry = Registry(ctx.state)
    inserts: list[Insert] = []
    effects: list[tuple[Target, WorkerEffect]] = []
    followed = targets_of(
        note.requests,
        lambda r: "worker" in r.fields and r.state in _FOLLOWED and r.lock is not None and ctx.mine(r.lock),
    )
    for target, request in followed:
        assert request.lock is not None
        worker = registry.for_claim(request.lock.claim)
        if worker is None:
            continue
        step = _answered(ctx, worker, request) or _reported(ctx, worker, request)
        if step is None:
            continue
        lines, effect = step
        expect = frozenset({request.state})
        claim = request.lock.claim
        inserts.append(Insert(target, tuple(lines), expect, claim=claim, seen=request.text_hash))
        effects.append((target, effect))
    _stop_superseded(ctx, registry, note)
    if not inserts:
        return False
    _, applied = ctx.write(note.rel, inserts)
    landed = {ins.target for ins in applied.landed}
    for target, request in followed:  # an answer acted on is not acted on again
        if target in landed and request.statuses:
            ctx.vetter.acted(note.rel, request.id, note.lines[request.statuses[-1].line])
    for target, effect in effects:
        if target in landed:
            _apply(ctx, effect, registry, daily)
    return bool(applied.landed)


def _apply(ctx: Context, effect: WorkerEffect, registry: Registry, daily: DailyWriter) -> None:
    if isinstance(effect, Cancelled):
        _stop(ctx, effect.worker)
        request_id, why = effect.said
        ctx.report.said(request_id, State.CANCELLED.value, why)
    elif isinstance(effect, Answered):
        worker = effect.worker
        if effect.stopped:  # approved: each lets exactly that call through once; denied: none is asked again
            grant(ctx.vault.root, effect.stopped, allow=effect.approve)
        try:
            inject(ctx.vault, worker.name, effect.line)
        except WorkerError as exc:  # it ended meanwhile: the next pass says so in the note
            ctx.warn(f"{effect.request_id}: the answer did not reach worker {worker.name}: {exc.message}")
        ctx.report.said(effect.request_id, State.RUNNING.value, effect.why)
    else:
        _reported_landed(ctx, effect, registry, daily)


def _stop_superseded(ctx: Context, registry: Registry, note: ParsedNote) -> None:
    """A worker whose plan note now holds another claim (another machine took it over after the lease):
    its work is no longer this clone's, and it is stopped."""
    locks = {r.id: r.lock for r in note.requests if "worker" in r.fields and r.lock is not None}
    if not locks:
        return  # no claim here that could have replaced a worker's (and no workers to look up)
    for worker in registry.live():
        if worker.plan != note.rel or worker.claim is None:
            continue
        lock = next((lk for lk in locks.values() if lk.claim == worker.claim), None)
        others = [lk for lk in locks.values() if lk.claim != worker.claim]
        if lock is None and others:
            _stop(ctx, worker)
            ctx.warn(
                f"{note.rel}: worker {worker.name} was stopped: its claim {worker.claim} was taken over "
                f"(now claim {others[-1].claim}, {others[-1].agent} on {others[-1].host})"
            )


def _answered(ctx: Context, worker: Worker, request: Request) -> tuple[list[str], WorkerEffect] | None:
    """The person's answer under a worker's plan: cancel stops the worker; a decision on its escalation is
    written to its input, and the note is running again."""
    answer = standing_answer(request)
    if answer is None or not is_live(worker):
        return None
    now = ctx.clock()
    if answer.key == "cancel":
        why = f"cancelled by the person; worker {worker.name} was stopped"
        return results.status_only(State.CANCELLED, now, why), Cancelled(worker, (request.id, why))
    if answer.key != "decision" or request.state is not State.ESCALATED:
        return None
    verdict = "deny" if answer.value == "deny" else "approve"
    label = asked_label(request.statuses[-1].reason if request.statuses else "")
    line = answer_for(label, verdict, answer.comment)
    stopped = waiting(ctx.vault.root, request.id)  # tool calls the gate stopped for the person
    if stopped and verdict == "approve":
        line += f"; the call may run once now, exactly as you asked it: {describe(stopped)}"
    why = f"the person answered {verdict} to {label}; worker {worker.name} goes on"
    told = Answered(worker, request.id, line, stopped, verdict == "approve", why)
    return results.status_only(State.RUNNING, now, why), told


def _reported(ctx: Context, worker: Worker, request: Request) -> tuple[list[str], WorkerEffect] | None:
    heard = [
        Heard.from_event(e)
        for e in ctx.state.events("worker_report", after=worker.reports_after)
        if e["detail"].get("worker") == worker.name
    ]
    now = ctx.clock()
    state = observed_state(worker, now.timestamp(), float("inf"))
    budget = _budget(ctx, request)
    late = running_for(worker, now.timestamp()) > budget and state not in ("exited", "failed")
    overdue = budget if late else None
    log_tail = tail(worker_folder(ctx.vault, worker.name), _LOG_LINES)
    said = news(worker.name, state, worker.exit_code, heard, overdue=overdue, log_tail=log_tail)
    if said is None:
        return None
    started = datetime.fromtimestamp(worker.started, now.tzinfo)
    if said.state is State.ESCALATED:
        lines = results.status_only(State.ESCALATED, now, said.reason)
    else:
        lines = _result_lines(ctx, request, worker, said, started, now)
    return lines, Reported(worker, request, said, state, now)


def _reported_landed(ctx: Context, news: Reported, registry: Registry, daily: DailyWriter) -> None:
    worker, request, said, now = news.worker, news.request, news.said, news.at
    registry.reports_handled(worker.name, said.heard)
    if said.stop:
        _stop(ctx, worker)
    if news.state == "lost":
        registry.ended(worker.name, "lost", None)
    ctx.report.said(request.id, said.state.value, said.reason or f"worker {worker.name}")
    daily.add(request, now, f"{said.state.value} · worker {worker.name}")
    ctx.state.event("result", request.file, request.id, state=said.state.value, claim=worker.claim or "")
    if said.state in (State.ESCALATED, State.ERROR):
        answer = (
            f"Reply `approve {request.id}` or `deny {request.id}`: the answer goes to the worker"
            if said.state is State.ESCALATED
            else "Write `- retry: yes` under it to start a new worker"
        )
        ctx.teller.waiting(request, said.state, now, said.reason, ruling_of(request, ctx.config), answer)


def _result_lines(
    ctx: Context, request: Request, worker: Worker, said: News, started: datetime, now: datetime
) -> list[str]:
    duration = (now - started).total_seconds()
    route = f"worker {worker.name}"
    result = RunResult(said.state, route, started, duration, said.output, said.reason, worker.exit_code)
    return result_lines(ctx, request, ruling_of(request, ctx.config), result)


def _budget(ctx: Context, request: Request) -> float:
    """The seconds the worker may take: its claim's lease without the margin other machines add."""
    lock = request.lock
    lease = lock.lease if lock is not None and lock.lease is not None else None
    if lease is None:
        return float("inf")
    return max(1.0, lease - ctx.config.git.lease_margin)


def running_for(worker: Worker, wall: float) -> float:
    """Seconds ``worker`` has run: on the clock since boot, from its supervisor's start as the kernel
    tells it, so a jump of the wall clock neither stops it early nor lets it outlive its time; by the wall
    clock only where the kernel does not say (not Linux)."""
    start = worker.sup_start if worker.sup_start is not None else worker.pid_start
    since_boot = steady.since_boot()
    if start is None or since_boot is None:
        return wall - worker.started
    return max(0.0, since_boot - start / os.sysconf("SC_CLK_TCK"))


def runs_on(state: StateDB, request: Request) -> bool:
    """Whether a worker was started for this claimed request: its claim outlives the pass that made it,
    and the worker's news (or its end) closes it, not crash recovery."""
    if request.lock is None or "worker" not in request.fields:
        return False
    return Registry(state).for_claim(request.lock.claim) is not None


def _stop(ctx: Context, worker: Worker) -> None:
    try:
        terminate(ctx.vault, worker.name)
    except WorkerError as exc:
        ctx.warn(f"worker {worker.name} could not be stopped: {exc.message}")
