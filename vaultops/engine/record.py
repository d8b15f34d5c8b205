"""The record stage: a finished job's result into its note, the daily note and state.db, and what the
person must hear of it.

A result lands only if its request's lock is still its claim (with a remote, as the remote has it now:
another machine may have taken the request over); a fenced-out result is kept as a late result, and one
whose request is missing is tried again later (``Context.unplaced``).  With a remote, results reach it
before the note on disk, as claims do (``push_first``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from vaultops.base import faults
from vaultops.base.visible import described
from vaultops.decide.gate import AgendaItem
from vaultops.decide.schedules import pausing
from vaultops.decide.startable import retry_asked
from vaultops.engine.context import Context
from vaultops.engine.gate_incident import tell_gate_incident
from vaultops.engine.journal import DailyWriter
from vaultops.engine.publish import with_inserts
from vaultops.model import APPROVAL_WORDS, Request, Ruling, State, index_by_id
from vaultops.render import results
from vaultops.render.results import RunResult
from vaultops.run.jobs import Job
from vaultops.scan.note import ParsedNote
from vaultops.store.inserts import Applied, Insert

CLAIM_ATTEMPTS = 5  # passes in a row that find the remote moved before this one gives up for now
INPUT_ERROR = "input-error"
NOT_COMMITTED = (
    "not committed yet: vaultops acts on it once it is (obsidian-git commits it; or commit it with git)"
)


@dataclass(frozen=True, slots=True)
class Claimed:
    """A job this pass claimed: its agenda item, the job, and the lock and running lines written."""

    item: AgendaItem
    job: Job
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Done:
    claimed: Claimed
    result: RunResult


# What is done once an insertion has landed in its note, as records: the pass applies them in one place.
@dataclass(frozen=True, slots=True)
class StatusSaid:
    """A status line only (an error, an escalation, a wait, a denial, a cancellation)."""

    item: AgendaItem
    state: State
    at: datetime


@dataclass(frozen=True, slots=True)
class TakenOver:
    """Another machine's claim, taken over: the request is interrupted, and the person told."""

    item: AgendaItem
    at: datetime


@dataclass(frozen=True, slots=True)
class Decided:
    """The person's answer a claim acts on (an approval, a retry): the daily note keeps it, as it keeps
    accepts and denials, so that the day's record says who decided what, not only what ran."""

    item: AgendaItem
    summary: str
    at: datetime


Effect = StatusSaid | TakenOver | Done | Decided

# answers a status line acknowledges and nothing else: the daily note says the person decided
_DECIDING = frozenset({"accept", "deny", "cancel"})


def apply(ctx: Context, effect: Effect, daily: DailyWriter) -> None:
    if isinstance(effect, Done):
        finished(ctx, effect, daily)
    elif isinstance(effect, TakenOver):
        _taken_over(ctx, effect)
    elif isinstance(effect, Decided):
        daily.add(effect.item.request, effect.at, effect.summary)
    else:
        _status_said(ctx, effect, daily)


def decided(item: AgendaItem, at: datetime) -> Decided | None:
    """What the daily note keeps of the answer a claim acts on: an approval, or ``- retry: yes``."""
    handling, profile = item.handling, item.handling.profile
    if handling.approved:
        return Decided(
            item, f"approved {APPROVAL_WORDS[handling.scope]} by the person · runs on {profile}", at
        )
    if retry_asked(item.request):
        return Decided(item, f"retry asked by the person · runs on {profile}", at)
    return None


def _status_said(ctx: Context, said: StatusSaid, daily: DailyWriter) -> None:
    request, handling, state, now = said.item.request, said.item.handling, said.state, said.at
    ctx.report.said(request.id, state.value, handling.reason)
    if state is State.ERROR:
        ctx.state.event(INPUT_ERROR, request.file, request.id, reason=handling.reason)
        ctx.teller.waiting(request, state, now, handling.reason, handling.ruling)  # a failure is told too
    if state is State.ESCALATED:
        daily.add(request, now, f"escalated · {handling.ruling.safety_class}")
        ctx.teller.waiting(request, state, now, handling.reason, handling.ruling)
    elif handling.kind in _DECIDING:  # "accepted by the person", "rejected by the person", …: not the comment
        daily.add(request, now, handling.reason.split(" — ", 1)[0])


def _taken_over(ctx: Context, taken: TakenOver) -> None:
    request, handling = taken.item.request, taken.item.handling
    old = request.lock.claim if request.lock else ""
    ctx.report.again = True
    ctx.report.said(request.id, State.INTERRUPTED.value, handling.reason)
    ctx.teller.waiting(request, State.INTERRUPTED, taken.at, handling.reason, handling.ruling)
    ctx.state.event("takeover", request.file, request.id, claim=old)


def result_lines(ctx: Context, request: Request, d: Ruling, result: RunResult) -> list[str]:
    """The result block under ``request`` (a ``### Run`` block for a scheduled plan note, whose failure
    says when it pauses the schedule)."""
    if result.state is State.ERROR and (pause := pausing(request, ctx.config)):
        result = replace(result, reason=f"{result.reason}; {pause}" if result.reason else pause)
    return results.result_block(
        result, agent=ctx.vault.agent, type_=d.type, complexity=d.complexity, safety=d.safety_class,
        max_lines=ctx.config.record.max_lines, heading="Run" if "schedule" in request.fields else "Result",
    )  # fmt: skip


def finished(ctx: Context, done: Done, daily: DailyWriter) -> None:
    job, result, item = done.claimed.job, done.result, done.claimed.item
    detail = f"{job.type}, {result.profile}, {results.seconds(result.duration)}"
    if result.reason:
        detail += f", {result.reason}"
    ctx.report.said(job.request_id, result.state.value, detail)
    daily.add(
        item.request,
        result.started,
        f"{result.state.value} · {job.type} · {results.seconds(result.duration)}",
    )
    ctx.state.event("result", job.file, job.request_id, state=result.state.value, claim=job.claim)
    if result.incident:  # its own notice says what the gate did not see: not a second one for the error
        tell_gate_incident(ctx, item.request, result)
    elif result.state in (State.ESCALATED, State.INTERRUPTED, State.REVIEW, State.ERROR):
        review = "Accept it, or send it back with what to change" if result.state is State.REVIEW else None
        ctx.teller.waiting(
            item.request, result.state, result.started, result.reason, item.handling.ruling,
            proposed=review, status_at=results.ended(result),
        )  # fmt: skip


def insert_of(ctx: Context, d: Done) -> Insert:
    """What a finished job writes under its request: its result block (or, for a job that waits or a
    worker that took it on, a status line), only while the request's lock is still its claim."""
    job, result, item = d.claimed.job, d.result, d.claimed.item
    faults.reach("record.result")
    if result.state in (State.WAITING, State.RUNNING):
        lines = results.status_only(result.state, result.started, result.reason)
    else:
        lines = result_lines(ctx, item.request, item.handling.ruling, result)
    running = frozenset({State.RUNNING})
    return Insert(item.target, tuple(lines), running, claim=job.claim, seen=item.request.text_hash)


def _recorded(ctx: Context, d: Done, daily: DailyWriter) -> Insert:
    """``d``'s insert, with what the pass says and the daily note keeps of it."""
    job, result = d.claimed.job, d.result
    if result.state in (State.WAITING, State.RUNNING):  # RUNNING: a worker took it on
        ctx.report.said(job.request_id, result.state.value, result.reason)
    else:
        finished(ctx, d, daily)
    return insert_of(ctx, d)


def record(ctx: Context, done: list[Done], daily: DailyWriter) -> list[Insert]:
    """Results, in request order, one write per note; returns the inserts a daemon must put back if an
    editor saves over them."""
    faults.reach("record.start")
    ctx.pull()
    inserts = []
    files: dict[str, list[Insert]] = {}
    for d in sorted(done, key=lambda d: d.claimed.item.request.start):
        try:
            insert = _recorded(ctx, d, daily)
        except Exception as exc:  # one result's fault is its own: it becomes an error line, the rest go on
            log = f"; its log is in {d.result.log}" if d.result.log else ""
            why = f"vaultops failed while recording its result ({described(exc)}){log}"
            d = Done(d.claimed, replace(d.result, state=State.ERROR, output="", reason=why))
            insert = _recorded(ctx, d, daily)
        files.setdefault(d.claimed.job.file, []).append(insert)
        if d.result.state is not State.RUNNING:  # a worker's note is not finished: nothing to put back
            inserts.append(insert)
    for rel, group in files.items():
        group = despite_unwritten(ctx, rel, group)
        if not push_first(ctx, rel, group):
            ctx.write(rel, group)
    faults.reach("record.after_write")
    return inserts


def despite_unwritten(ctx: Context, rel: str, inserts: list[Insert]) -> list[Insert]:
    """Results whose request's last status line, typed while the job ran, is not vaultops's: each lands all
    the same, under its claim (the note writer checks the state the lines give, which that line decides).
    Nothing else changes: a result still lands only where the lock is its claim."""
    note = ctx.read(rel) if any(ins.claim for ins in inserts) else None
    if note is None or not note.disowned:
        return inserts
    index = index_by_id(note.requests)
    out = []
    for ins in inserts:
        request = ins.target.find(index)
        found = note.disowned.get(request.start) if request is not None else None
        if request is not None and found is not None and request.state in ins.expect:
            ins = replace(ins, expect=ins.expect | {found.written.state})
        out.append(ins)
    return out


def push_first(ctx: Context, rel: str, inserts: list[Insert]) -> bool:
    """With a remote, results reach it before the note on disk, as claims do: a commit built on HEAD
    and pushed, then the same lines written and the commit adopted.  Another tool that resets this
    clone's working tree meanwhile (obsidian-git's `rebase --abort`) cannot lose them: the remote has
    them, and the next pull brings them back.  False when they were not pushed (no remote, or it cannot
    take them now, or none of them can be placed): the caller writes them, to be committed later."""
    publisher = ctx.publisher
    ids = {ins.target.request_id for ins in inserts}
    outcomes = [o for o in ctx.report.outcomes if o.request_id in ids]
    for _ in range(CLAIM_ATTEMPTS):
        if not publisher.through_remote:
            return False
        ctx.wait_for_other_git()
        note = ctx.read(rel)
        if note is None:
            return False
        built = on_head(ctx, note, inserts)
        raw, applied, head = built.raw, built.applied, built.head
        if not applied.landed:
            return False  # fenced out or missing: the note writer says so, and keeps late results
        pushed = publisher.swap(rel, raw, results.commit_message(outcomes), head, stage="result")
        if pushed.kind == "failed":
            return False
        if pushed.kind == "pushed":
            _, local = ctx.write(rel, inserts)
            publisher.adopt(pushed, head, [rel])
            if not local.dropped:  # committed already; a late result written besides waits for commit
                ctx.report.committed(rel)
            return True
        ctx.pull()  # someone pushed first: place them on what they pushed
    return False


@dataclass(frozen=True, slots=True)
class OnHead:
    """What a commit pushed through the remote holds: HEAD's version of the note with vaultops's lines."""

    raw: bytes
    applied: Applied  # the inserts that land in HEAD's version (each lands on disk too)
    head: str | None  # the commit to build on
    waiting: list[Insert] = field(default_factory=list)  # land on disk only: the person has not committed


def on_head(ctx: Context, note: ParsedNote, inserts: list[Insert], *, exact: bool = False) -> OnHead:
    """The note's bytes to commit with ``inserts``, built from the note as HEAD has it, never from the bytes
    on disk: what the person saved and did not commit yet stays theirs, for obsidian-git (or them) to
    commit.  A vaultops commit that carried it would meet the person's own commit of the same lines, and
    the two would make the request twice.  Inserts whose request is not at HEAD as the pass saw it on disk
    (a request saved and not committed, an answer typed and not committed) wait (``waiting``); with
    ``exact`` (claims: a job runs the text every machine sees) so do those whose text differs there."""
    head, committed = ctx.publisher.head_version(note.rel)
    # placed as the note writer will place them, on the lines as they stand: with a line vaultops did not
    # write set aside (``ParsedNote.disowned``), the pass's note is not what the writer reads
    _, on_disk = with_inserts(ctx.writer.parse(note.rel, note.raw) if note.disowned else note, inserts)
    if committed is None:  # a note never committed (a new plan note): nothing of it is vaultops's to push
        return OnHead(b"", Applied(), head, list(on_disk.landed))
    base = ctx.writer.parse(note.rel, committed)
    ready = on_disk.landed
    if exact:  # the text as the pass read it: HEAD's version vetted the same way (``ctx.read``)
        whole = ctx.writer.parse(note.rel, committed, full=True)  # an escalation asked again has its text
        at_head = index_by_id((ctx.vetter.note(whole)[0] if note.disowned else whole).requests)
        ready = [i for i in ready if not i.seen or _text_hash(i.target.find(at_head)) == i.seen]
    raw, applied = with_inserts(base, ready)
    ctx.vetter.remember(note.rel, applied.written())  # before they can reach the remote
    return OnHead(raw, applied, head, [ins for ins in on_disk.landed if ins not in applied.landed])


def _text_hash(request: Request | None) -> str:
    return request.text_hash if request is not None else ""


def with_budget_warning(ctx: Context, result: RunResult) -> RunResult:
    """The first result of the day past 80 % of the budget says so on its status line."""
    budget = ctx.budget()
    day = ctx.clock().strftime("%Y-%m-%d")
    if not budget.past_warning or ctx.state.get(f"budget-warned:{day}") is not None:
        return result
    ctx.state.set(f"budget-warned:{day}", "1")
    ctx.state.event("budget-warning", spent=budget.spent, limit=budget.limit)
    ctx.teller.budget(ctx.clock(), budget.spent, budget.limit)
    return replace(
        result, reason=f"{result.reason}; {budget.warning()}" if result.reason else budget.warning()
    )
