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

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from vaultops.decide.answers import decision_of, standing_answer
from vaultops.model import Request, State
from vaultops.record import render
from vaultops.record.render import RunResult
from vaultops.run.jobs import Job
from vaultops.run.prompt import WORKER_REPORT, PromptInput, build_prompt
from vaultops.scan.note import ParsedNote
from vaultops.scan.plan import workdir_path
from vaultops.store.asked import describe, grant, waiting
from vaultops.store.inserts import Insert, Target, targets_of
from vaultops.store.state import StateDB
from vaultops.workers.control import WorkerError, inject, spawn, terminate, worker_folder
from vaultops.workers.logs import tail
from vaultops.workers.plans import Heard, News, answer_for, asked_label, news
from vaultops.workers.registry import Registry, Worker, is_live, observed_state

if TYPE_CHECKING:
    from vaultops.pipeline.passes import Pass
    from vaultops.record.journal import DailyWriter

_FOLLOWED = frozenset({State.RUNNING, State.ESCALATED})
_LOG_LINES = 20


def start_worker(p: Pass, job: Job, files: tuple[str, ...]) -> RunResult:
    """Spawn the worker for a claimed plan note.  The result is ``running`` (or why it could not start)."""
    vault = p.vault
    started = p.clock()
    profile = job.route[0] if job.route else job.handler
    chosen = vault.config.profiles[profile]
    dir = workdir_path(job.workdir, vault.root) if job.workdir else None
    given = PromptInput(
        job.request_id, job.file, job.title, job.type, job.text, str(dir or vault.root), job.tools,
        files, job.timeout, job.earlier,
    )  # fmt: skip
    prompt = build_prompt(given, (), chosen.prompt_template, WORKER_REPORT)
    run_id = p.state.run_started(job.file, job.request_id, job.claim, 1, profile, vault.host, None)
    try:
        worker = spawn(
            vault, job.worker, (), dir=dir, files=files, parent=vault.agent, profile=profile, prompt=prompt,
            plan=job.file, claim=job.claim, request=job.request_id,
        )  # fmt: skip
    except WorkerError as exc:
        duration = (p.clock() - started).total_seconds()
        p.state.run_ended(run_id, "error", None, duration)
        reason = f"worker {job.worker} could not start: {exc.message}; `- retry: yes` tries again"
        return RunResult(State.ERROR, profile, started, duration, "", reason)
    duration = (p.clock() - started).total_seconds()
    p.state.run_ended(run_id, "done", None, duration)  # the attempt, starting the worker, went through
    reason = (
        f"worker {worker.name} (pid {worker.pid}) works on it; its [DONE:…] line completes this note "
        f"(`vaultops worker logs {worker.name}`)"
    )
    return RunResult(State.RUNNING, f"worker {worker.name}", started, duration, "", reason)


def follow_workers(p: Pass, note: ParsedNote, daily: DailyWriter) -> bool:
    """Write what the workers running this note's plans said since the last pass.  True when the note was
    written (the caller reads it again)."""
    registry = Registry(p.state)
    inserts: list[Insert] = []
    effects: list[tuple[Target, Callable[[], None]]] = []
    followed = targets_of(
        note.requests,
        lambda r: "worker" in r.fields and r.state in _FOLLOWED and r.lock is not None and p.mine(r.lock),
    )
    for target, request in followed:
        assert request.lock is not None
        worker = registry.for_claim(request.lock.claim)
        if worker is None:
            continue
        step = _answered(p, worker, request) or _reported(p, registry, worker, request, daily)
        if step is None:
            continue
        lines, effect = step
        expect = frozenset({request.state})
        claim = request.lock.claim
        inserts.append(Insert(target, tuple(lines), expect, claim=claim, seen=request.text_hash))
        effects.append((target, effect))
    _stop_superseded(p, registry, note)
    if not inserts:
        return False
    _, applied = p.write(inserts)
    landed = {ins.target for ins in applied.landed}
    for target, request in followed:  # an answer acted on is not acted on again
        if target in landed and request.statuses:
            p.vetter.acted(note.rel, request.id, note.lines[request.statuses[-1].line])
    for target, effect in effects:
        if target in landed:
            effect()
    return bool(applied.landed)


def _stop_superseded(p: Pass, registry: Registry, note: ParsedNote) -> None:
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
            _stop(p, worker)
            p.warn(
                f"{note.rel}: worker {worker.name} was stopped: its claim {worker.claim} was taken over "
                f"(now claim {others[-1].claim}, {others[-1].agent} on {others[-1].host})"
            )


def _answered(p: Pass, worker: Worker, request: Request) -> tuple[list[str], Callable[[], None]] | None:
    """The person's answer under a worker's plan: cancel stops the worker; a decision on its escalation is
    written to its input, and the note is running again."""
    answer = standing_answer(request)
    if answer is None or not is_live(worker):
        return None
    now = p.clock()
    if answer.key == "cancel":
        why = f"cancelled by the person; worker {worker.name} was stopped"

        def cancel() -> None:
            _stop(p, worker)
            p.report.outcomes.append((request.id, State.CANCELLED.value, why))

        return render.status_only(State.CANCELLED, now, why), cancel
    if answer.key != "decision" or request.state is not State.ESCALATED:
        return None
    verdict = "deny" if answer.value == "deny" else "approve"
    label = asked_label(request.statuses[-1].reason if request.statuses else "")
    line = answer_for(label, verdict, answer.comment)
    stopped = waiting(p.vault.root, request.id)  # tool calls the gate stopped for the person
    if stopped and verdict == "approve":
        line += f"; the call may run once now, exactly as you asked it: {describe(stopped)}"
    why = f"the person answered {verdict} to {label}; worker {worker.name} goes on"

    def tell() -> None:
        if stopped:  # approved: each lets exactly that call through once; denied: none is asked again
            grant(p.vault.root, stopped, allow=verdict == "approve")
        try:
            inject(p.vault, worker.name, line)
        except WorkerError as exc:  # it ended meanwhile: the next pass says so in the note
            p.warn(f"{request.id}: the answer did not reach worker {worker.name}: {exc.message}")
        p.report.outcomes.append((request.id, State.RUNNING.value, why))

    return render.status_only(State.RUNNING, now, why), tell


def _reported(
    p: Pass, registry: Registry, worker: Worker, request: Request, daily: DailyWriter
) -> tuple[list[str], Callable[[], None]] | None:
    heard = [
        Heard.from_event(e)
        for e in p.state.events("worker_report", after=worker.reports_after)
        if e["detail"].get("worker") == worker.name
    ]
    now = p.clock()
    state = observed_state(worker, now.timestamp(), float("inf"))
    budget = _budget(p, request)
    late = now.timestamp() - worker.started > budget and state not in ("exited", "failed")
    overdue = budget if late else None
    log_tail = tail(worker_folder(p.vault, worker.name), _LOG_LINES)
    said = news(worker.name, state, worker.exit_code, heard, overdue=overdue, log_tail=log_tail)
    if said is None:
        return None
    started = datetime.fromtimestamp(worker.started, now.tzinfo)
    if said.state is State.ESCALATED:
        lines = render.status_only(State.ESCALATED, now, said.reason)
    else:
        lines = _result_lines(p, request, worker, said, started, now)

    def effect() -> None:
        registry.reports_handled(worker.name, said.heard)
        if said.stop:
            _stop(p, worker)
        if state == "lost":
            registry.ended(worker.name, "lost", None)
        p.report.outcomes.append((request.id, said.state.value, said.reason or f"worker {worker.name}"))
        daily.add(request, now, f"{said.state.value} · worker {worker.name}")
        p.state.event("result", request.file, request.id, state=said.state.value, claim=worker.claim or "")
        if said.state in (State.ESCALATED, State.ERROR):
            answer = (
                f"Reply `approve {request.id}` or `deny {request.id}`: the answer goes to the worker"
                if said.state is State.ESCALATED
                else "Write `- retry: yes` under it to start a new worker"
            )
            p.teller.waiting(request, said.state, now, said.reason, decision_of(request, p.config), answer)

    return lines, effect


def _result_lines(
    p: Pass, request: Request, worker: Worker, said: News, started: datetime, now: datetime
) -> list[str]:
    decision = decision_of(request, p.config)
    duration = (now - started).total_seconds()
    route = f"worker {worker.name}"
    result = RunResult(said.state, route, started, duration, said.output, said.reason, worker.exit_code)
    return render.result_block(
        result, agent=p.vault.agent, type_=decision.type, complexity=decision.complexity,
        safety=decision.safety_class, max_lines=p.config.record.max_lines,
        heading="Run" if "schedule" in request.fields else "Result",
    )  # fmt: skip


def _budget(p: Pass, request: Request) -> float:
    """The seconds the worker may take: its claim's lease without the margin other machines add."""
    lock = request.lock
    lease = lock.lease if lock is not None and lock.lease is not None else None
    if lease is None:
        return float("inf")
    return max(1.0, lease - p.config.git.lease_margin)


def runs_on(state: StateDB, request: Request) -> bool:
    """Whether a worker was started for this claimed request: its claim outlives the pass that made it,
    and the worker's news (or its end) closes it, not crash recovery."""
    if request.lock is None or "worker" not in request.fields:
        return False
    return Registry(state).for_claim(request.lock.claim) is not None


def _stop(p: Pass, worker: Worker) -> None:
    try:
        terminate(p.vault, worker.name)
    except WorkerError as exc:
        p.warn(f"worker {worker.name} could not be stopped: {exc.message}")
