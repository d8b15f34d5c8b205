"""The claim stage: a note's plan becomes its first write (errors, escalations, takeovers, light results
and claims), and, with a remote, the push that makes the claims real.

The push is the compare-and-swap: claims are built on HEAD and pushed before the note on disk has them; a
remote that moved meanwhile refuses the push, nothing is written, and the pass follows the remote and
plans again.  Only claims that landed become jobs, so nothing runs twice.
"""

from __future__ import annotations

import os
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from vaultops import lines as fmt
from vaultops.base import faults
from vaultops.decide.answers import own_words, standing_answer
from vaultops.decide.gate import AgendaItem, files_of
from vaultops.decide.leases import job_budget, light_lease, worker_budget
from vaultops.decide.startable import retry_asked
from vaultops.engine.context import Context
from vaultops.engine.record import (
    NOT_COMMITTED,
    Claimed,
    Done,
    Effect,
    StatusSaid,
    TakenOver,
    decided,
    on_head,
    result_lines,
)
from vaultops.engine.review import checks_time, session_key
from vaultops.engine.run import run_check
from vaultops.model import PassOutcome, Request, State, Target
from vaultops.render import results
from vaultops.render.results import RunResult
from vaultops.run.jobs import Job
from vaultops.run.worktrees import (
    Worktree,
    WorktreeError,
    base_for,
    branch_for,
    default_root,
    place_for,
    remove,
)
from vaultops.scan.note import ParsedNote
from vaultops.scan.plan import workdir_path
from vaultops.store.inserts import Applied, Insert
from vaultops.vault import inside_any

# Handlings that only write a status line.
STATUS_ONLY = {
    "error": State.ERROR,
    "escalate": State.ESCALATED,
    "wait": State.WAITING,
    "deny": State.DENIED,
    "cancel": State.CANCELLED,
    "accept": State.DONE,  # a code job's review, accepted
}


def new_claim() -> str:
    return secrets.token_hex(3)


@dataclass
class Batch:
    """A note's first write, with what to do once each insertion has landed."""

    inserts: list[Insert] = field(default_factory=list)
    claims: dict[Target, Claimed] = field(default_factory=dict)
    effects: list[tuple[Target, Effect]] = field(default_factory=list)
    takeovers: set[Target] = field(default_factory=set)  # claims too, on another machine's requests
    said: dict[Target, PassOutcome] = field(default_factory=dict)  # for the commit message

    def without_claims(self) -> Batch:
        """What may be written when this clone cannot claim (the remote is unreachable): a claim, or a
        takeover judged from a view of the remote that may be stale, could run something twice."""
        drop = {*self.claims, *self.takeovers}
        keep = [ins for ins in self.inserts if ins.target not in drop]
        said = {t: s for t, s in self.said.items() if t not in drop}
        return Batch(keep, {}, [(t, e) for t, e in self.effects if t not in drop], set(), said)


@dataclass(frozen=True, slots=True)
class Place:
    """Where a code job runs: a worktree of its repository, on its own branch."""

    repo: Path
    worktree: Path
    branch: str
    base: str

    def line(self) -> str:
        return fmt.worktree_line(str(self.worktree), self.branch, self.base[:12])

    def tree(self) -> Worktree:
        return Worktree(self.worktree, self.branch, self.base)


def place_of(ctx: Context, request: Request) -> Place | str | None:
    """A code job's worktree (None: the request names no repo), or why it cannot have one now.  The folder
    and branch follow from the request's id alone: nothing typed in the note can point them elsewhere."""
    raw = request.fields.get("repo", "").strip()
    if not raw:
        return None
    repo = Path(os.path.realpath(workdir_path(raw, ctx.vault.root)))
    setting = ctx.config.limits.worktrees
    root = workdir_path(setting, ctx.vault.root) if setting else default_root(repo, ctx.vault.allowed_roots)
    if setting and not inside_any(root, ctx.vault.allowed_roots):  # a job's workdir must be inside them
        return (
            f"[limits] worktrees ({setting}) is outside [limits] allowed_roots, so no job may work there; "
            "add its folder to allowed_roots or leave worktrees unset"
        )
    branch = branch_for(request.id, request.file)
    try:
        base = base_for(repo, branch)
    except WorktreeError as exc:
        return f"{exc}; the job was not started"
    return Place(repo, place_for(repo, root, request.id, request.file), branch, base)


def job_for(ctx: Context, p: AgendaItem, place: Place | None = None) -> Job:
    """The work an agenda item becomes once claimed."""
    request, handling = p.request, p.handling
    where = (
        {"repo": str(place.repo), "worktree": str(place.worktree), "branch": place.branch, "base": place.base}
        if place is not None
        else {}
    )
    return Job(
        file=request.file, request_id=request.id, title=request.title, text=request.text or "",
        type=handling.ruling.type, claim=new_claim(), profile=handling.profile, timeout=handling.timeout,
        route=handling.ruling.route, tools=handling.tools, earlier=_earlier(request),
        budget=budget_of(ctx, p), approved=bool(handling.approved), lasting=handling.scope == "request",
        workdir=request.fields.get("workdir", ""),
        tasks=tuple(t for t in request.fields.get("tasks", "").split("\n") if t),
        done_tasks=_done_tasks(request), worker=request.fields.get("worker", ""), files=files_of(request),
        limits=handling.limits, review=handling.review, checks=handling.checks, **where,
        retried=retry_asked(request), **reviewed_before(ctx, request),
    )  # fmt: skip


def reviewed_before(ctx: Context, request: Request) -> dict[str, str]:
    """A code job the person reviewed and sent back (``- retry: yes — what to change``): the feedback,
    and the session to go on with when this machine ran the last one.  Any other retry with a comment
    carries the comment, for the next prompt (vaultops.run.carry)."""
    if not retry_asked(request):
        return {}
    answer = standing_answer(request)
    feedback = own_words(answer.comment) if answer is not None else ""
    if request.state is not State.REVIEW:
        return {"feedback": feedback} if feedback.strip() else {}
    session = ctx.state.get(session_key(request.file, request.id)) or ""
    return {"feedback": feedback or "(no comment: look again at your work)", "resume": session}


def budget_of(ctx: Context, p: AgendaItem) -> float | None:
    """Seconds a claimed job may take (its lease adds a margin); None for a built-in check."""
    handling = p.handling
    if handling.kind == "builtin":
        return None
    if p.request.fields.get("worker"):
        return worker_budget(ctx.config, handling.timeout)
    return job_budget(ctx.config, handling.ruling.route or (handling.profile,), handling.timeout)


def first_batch(ctx: Context, items: list[AgendaItem], *, claim_light: bool) -> Batch:
    """Errors, escalations, takeovers, light results and claims: a note's first write.  With
    ``claim_light`` light checks are claimed like heavy work and run after the claim has landed."""
    batch = Batch()
    light: list[tuple[AgendaItem, Job]] = []
    for p in items:
        expect = frozenset({p.request.state})
        now = ctx.clock()
        kind = p.handling.kind
        if kind == "takeover":
            _take_over(ctx, batch, p, now)
            continue
        if kind == "missed":  # a schedule's skipped times: said, and nothing else changes
            batch.inserts.append(Insert(p.target, p.slots, expect, seen=p.request.text_hash))
            batch.said[p.target] = PassOutcome(p.request.id, "missed", p.handling.reason)
            continue
        if kind in STATUS_ONLY:
            _say(batch, p, STATUS_ONLY[kind], now, p.handling.reason)
            continue
        if kind == "cleanup":  # the state it ended in stays; the line says what became of the worktree
            _say(batch, p, p.request.state, now, clean_up(ctx, p.request, force=p.handling.reason == "force"))
            continue
        if kind == "misanswered":  # an answer its state does not take: said once, the state stays
            _say(batch, p, p.request.state, now, p.handling.reason)
            continue
        place = place_of(ctx, p.request) if kind == "profile" else None
        if isinstance(place, str):  # its repository cannot take a worktree now: said, nothing claimed
            _say(batch, p, State.ERROR, now, place)
            continue
        job = job_for(ctx, p, place)
        if kind == "builtin" and not claim_light:
            light.append((p, job))
            continue
        lease = light_lease(ctx.config)
        if job.budget:  # its runs, then its checks (a review's), then the margin
            lease = job.budget + checks_time(ctx, job) + ctx.config.git.lease_margin
        claim = results.lock_and_start(ctx.vault.agent, ctx.vault.host, job.claim, now, lease)
        if p.handling.approved:  # acknowledged in the same write that claims it: it runs once
            claim = [*results.status_only(State.APPROVED, now, p.handling.approved), *claim]
        claim = [*p.slots, *claim]  # a scheduled run: the time it is for, in the claim's own write
        if place is not None:  # where it runs, for the person: said with the claim
            claim = [place.line(), *claim]
        batch.inserts.append(Insert(p.target, tuple(claim), expect, seen=p.request.text_hash))
        batch.claims[p.target] = Claimed(p, job, tuple(claim))
        batch.said[p.target] = PassOutcome(p.request.id, "claimed", job.profile)
        if (answer := decided(p, now)) is not None:  # the daily note keeps the answer it acts on
            batch.effects.append((p.target, answer))
    for (p, job), result in zip(light, _run_light(ctx, [job for _, job in light]), strict=True):
        lines = [*p.slots]
        lines += results.lock_and_start(
            ctx.vault.agent, ctx.vault.host, job.claim, result.started, light_lease(ctx.config)
        )
        lines += result_lines(ctx, p.request, p.handling.ruling, result)
        expect = frozenset({p.request.state})
        batch.inserts.append(Insert(p.target, tuple(lines), expect, seen=p.request.text_hash))
        batch.effects.append((p.target, Done(Claimed(p, job, ()), result)))
    return batch


def clean_up(ctx: Context, request: Request, *, force: bool) -> str:
    """Remove a finished code job's worktree, as the person asked; what became of it, in one sentence."""
    place = place_of(ctx, request)
    if place is None:
        return "nothing to clean up: this request names no repo:, so it has no worktree"
    if isinstance(place, str):
        return f"worktree kept: {place.removesuffix('; the job was not started')}"
    try:
        return f"worktree {remove(place.repo, place.tree(), force=force)}"
    except WorktreeError as exc:
        return f"worktree kept: {exc}"


def _say(batch: Batch, p: AgendaItem, state: State, now: datetime, reason: str) -> None:
    """A status line and nothing else: an error, an escalation, a wait, a denial, a cancellation."""
    lines = results.status_only(state, now, reason)
    expect = frozenset({p.request.state})
    batch.inserts.append(Insert(p.target, tuple(lines), expect, seen=p.request.text_hash))
    p = replace(p, handling=replace(p.handling, reason=reason))
    batch.effects.append((p.target, StatusSaid(p, state, now)))
    batch.said[p.target] = PassOutcome(p.request.id, state.value, reason)


def _take_over(ctx: Context, batch: Batch, p: AgendaItem, now: datetime) -> None:
    """A new lock, so that the old claim's late result is fenced out, and ``interrupted``: heavy work
    is not run twice by itself, and a light check runs again on the next pass."""
    old = p.request.lock
    lines = results.takeover(ctx.vault.agent, ctx.vault.host, new_claim(), now, p.handling.reason)
    batch.inserts.append(Insert(p.target, tuple(lines), frozenset({p.request.state})))
    batch.takeovers.add(p.target)
    batch.said[p.target] = PassOutcome(p.request.id, "taken over", f"claim {old.claim if old else '?'}")
    batch.effects.append((p.target, TakenOver(p, now)))


def _run_light(ctx: Context, jobs: list[Job]) -> list[RunResult]:
    workers = max(1, min(8, ctx.config.limits.max_concurrent * 2))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda job: run_check(ctx, job), jobs))


@dataclass
class Written:
    """What a note's first write did: the claims that landed, and the effects to apply."""

    claimed: list[Claimed]
    effects: list[Effect]


def claim(ctx: Context, note: ParsedNote, items: list[AgendaItem]) -> Written | None:
    """Write a note's plan; returns the claims that landed and the effects due, or None when the remote
    moved before this pass's claims reached it (nothing was written)."""
    rel = note.rel
    publisher = ctx.publisher
    batch = first_batch(ctx, items, claim_light=publisher.shared)
    if (batch.claims or batch.takeovers) and not publisher.may_claim():
        batch = batch.without_claims()
    if publisher.through_remote:
        built = on_head(ctx, note, batch.inserts, exact=True)
        raw, applied, head = built.raw, built.applied, built.head
        _tell_waiting(ctx, rel, built.waiting)
        if not applied.landed:
            return Written([], [])
        message = results.commit_message(
            [batch.said[i.target] for i in applied.landed if i.target in batch.said]
        )
        jobs = [batch.claims[i.target].job for i in applied.landed if i.target in batch.claims]
        for job in jobs:  # known before the push: a kill -9 after it leaves them in the note
            ctx.state.claimed(job.file, job.request_id, job.claim, job.profile, ctx.vault.host, "claiming")
        pushed = publisher.swap(rel, raw, message, head)
        if pushed.kind == "behind" and not faults.enabled("claims.merge"):
            ctx.state.drop_claims([job.claim for job in jobs])
            return None
        if pushed.kind == "failed":
            ctx.state.drop_claims([job.claim for job in jobs])
            if not pushed.problem:  # a remote problem is the publisher's to say, once per incident
                ctx.warn(f"claims not made: {pushed.detail}; trying again on the next pass")
            return Written([], [])
        ctx.state.confirm_claims([job.claim for job in jobs])
        # The claims exist now, on the remote, whatever this write finds: the note on disk may hold
        # them already (obsidian-git's pull brought the pushed commit in first).
        ctx.write(rel, applied.landed)
        publisher.adopt(pushed, head, [rel])
        if pushed.kind == "behind":  # the control run's wrong way: merge the lost claim through
            publisher.merge_through()
        ctx.report.committed(rel)
    else:
        _, applied = ctx.write(rel, batch.inserts)
    return _landed(ctx, rel, items, batch, applied)


def _tell_waiting(ctx: Context, rel: str, waiting: list[Insert]) -> None:
    """Requests whose lines the person saved and did not commit yet: each waits, and the pass says so (the
    log once per version of the request; ``tick`` on every pass, as it does of a request settling)."""
    for rid, seen in dict.fromkeys((ins.target.request_id, ins.seen) for ins in waiting):
        line = f"{rid} ({NOT_COMMITTED})"
        if line not in ctx.report.settling:  # a pass may claim in a note more than once
            ctx.report.settling.append(line)
        key = f"said-not-committed:{rel}:{rid}:{seen}"
        if ctx.state.get(key) is None:
            ctx.state.set(key, "1")
            ctx.warn(f"{rel}: {rid} is {NOT_COMMITTED}")


def _landed(ctx: Context, rel: str, items: list[AgendaItem], batch: Batch, applied: Applied) -> Written:
    landed = {ins.target for ins in applied.landed}
    for p in items:  # answered: what came after that status line will not be acted on again
        if p.target in landed and p.closes:
            ctx.vetter.acted(rel, p.request.id, p.closes)
    claimed = [batch.claims[t] for t in batch.claims if t in landed]
    if not ctx.publisher.through_remote:
        for c in claimed:
            job = c.job
            ctx.state.claimed(job.file, job.request_id, job.claim, job.profile, ctx.vault.host)
    return Written(claimed, [effect for target, effect in batch.effects if target in landed])


def _done_tasks(request: Request) -> frozenset[int]:
    """A fanned-out plan note's tasks that need no run: those done before, when the person asked to retry
    (a new scheduled run does them all)."""
    done = request.fields.get("tasks-done", "")
    return frozenset(int(n) for n in done.split(",") if n) if retry_asked(request) else frozenset()


def _earlier(request: Request) -> tuple[str, ...]:
    """What earlier passes said of this request, for the agent's context."""
    return tuple(
        f"{s.state.value}: {s.reason}"
        for s in request.statuses
        if s.state in (State.ERROR, State.INTERRUPTED) and s.reason
    )
