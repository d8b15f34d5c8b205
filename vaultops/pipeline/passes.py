"""One pass over the vault: scan → decide → claim → run → record → sync.

Each stage is a function of values; ``Pass`` strings them together and owns the I/O order: one write per
note per batch, claims on disk (and, with a remote, on the remote) before any job starts, and a commit
after each batch.  ``tick`` runs the phases one after the other; the daemon runs them as events and
finished jobs arrive.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from pathlib import Path

from vaultops.base import faults
from vaultops.base.errors import VaultopsError
from vaultops.decide.answers import answered, forgery_action
from vaultops.decide.files import files_overlap
from vaultops.decide.route import Action, decide
from vaultops.decide.schedule import ScheduleError, due, parse_schedule
from vaultops.model import Decision, Lock, Request, State
from vaultops.notify.telegram import Reply
from vaultops.pipeline.budget import Budget, day_start
from vaultops.pipeline.follow import follow_workers, start_worker
from vaultops.pipeline.provenance import Vetter
from vaultops.pipeline.publish import Publisher, with_inserts
from vaultops.pipeline.tell import Teller, reply_inserts
from vaultops.record import render
from vaultops.record.journal import DailyWriter
from vaultops.record.late import late_result
from vaultops.record.render import RunResult
from vaultops.run import triage
from vaultops.run.dispatch import Dispatcher
from vaultops.run.fanout import run_tasks
from vaultops.run.jobs import Job, job_budget, run_builtin, worker_budget
from vaultops.scan.note import ParsedNote
from vaultops.scan.plan import last_run, plan_id, workdir_problem
from vaultops.store.asked import asked_since, describe, grant, waiting
from vaultops.store.inserts import (
    CLAIM_LOST,
    MISSING,
    Applied,
    Insert,
    Target,
    edits_for,
    may_start,
    retry_asked,
    targets_of,
)
from vaultops.store.notes import NoteWriter, WriteResult, conflict_message
from vaultops.store.state import StateDB
from vaultops.vault import Vault
from vaultops.workers.registry import Registry

Clock = Callable[[], datetime]
INPUT_ERROR = "input-error"
CLAIM_ATTEMPTS = 5  # passes in a row that find the remote moved before this one gives up for now
EVERY_STATE = frozenset(State)
HELD = frozenset({State.LOCKED, State.RUNNING})


def local_now() -> datetime:
    return datetime.now().astimezone()


@dataclass
class PassReport:
    outcomes: list[tuple[str, str, str]] = field(default_factory=list)  # (request id, state, detail)
    warnings: list[str] = field(default_factory=list)
    settling: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    commit: str | None = None


@dataclass
class _Planned:
    target: Target
    request: Request
    action: Action
    closes: str = ""  # the request's last status line: what this action answers, once it is written


@dataclass
class _Batch:
    """A pass's first write: errors, escalations, light results and claims, with what to do once each
    insertion has landed (report it, log it in the daily note)."""

    inserts: list[Insert] = field(default_factory=list)
    claims: dict[Target, tuple[_Planned, Job]] = field(default_factory=dict)
    effects: list[tuple[Target, Callable[[], None]]] = field(default_factory=list)
    takeovers: set[Target] = field(default_factory=set)  # claims too, on another machine's requests
    said: dict[Target, tuple[str, str, str]] = field(default_factory=dict)  # for the commit message

    def without_claims(self) -> _Batch:
        """What may be written when this clone cannot claim (the remote is unreachable): a claim, or a
        takeover judged from a view of the remote that may be stale, could run something twice."""
        drop = {*self.claims, *self.takeovers}
        keep = [ins for ins in self.inserts if ins.target not in drop]
        said = {t: s for t, s in self.said.items() if t not in drop}
        return _Batch(keep, {}, [(t, f) for t, f in self.effects if t not in drop], set(), said)


OTHER_GIT_WAIT = 30.0  # seconds a write waits for another tool's rebase or merge to end

# A scheduled plan note runs again from these when its time comes.
SCHEDULABLE = frozenset({State.OPEN, State.WAITING, State.DONE, State.ERROR, State.INTERRUPTED})

# Actions that only write a status line.
_STATUS_ONLY = {
    "error": State.ERROR,
    "escalate": State.ESCALATED,
    "wait": State.WAITING,
    "deny": State.DENIED,
    "cancel": State.CANCELLED,
}


def new_claim() -> str:
    return secrets.token_hex(3)


class Pass:
    def __init__(
        self,
        vault: Vault,
        state: StateDB,
        clock: Clock = local_now,
        writer: NoteWriter | None = None,
        publisher: Publisher | None = None,
    ) -> None:
        self.vault = vault
        self.config = vault.config
        self.state = state
        self.clock = clock
        self.writer = writer or NoteWriter(vault)
        self.publisher = publisher or Publisher.open(vault)
        self.report = PassReport()
        self.inbox = vault.inbox_rel
        self.rel = self.inbox  # the note this part of the pass works on: the inbox, or a plan note
        self.next_settle: float | None = None  # seconds until the soonest settling request is ready
        self.unplaced: list[tuple[str, Insert]] = []  # (note, result) whose request was not in it as read
        self.claim_lines: dict[str, tuple[str, ...]] = {}  # claim -> the lock and running lines written
        self.teller = Teller(vault, state, self.report.warnings)
        self.vetter = Vetter(state, self.publisher.git, self.config.answers.authors, self.writer.parse)
        self.running_files: list[tuple[str, ...]] = []  # files: of plan-note jobs still running (daemon)
        self.again = False  # this pass took a request over: a light check can run again right away

    # --- scan ---------------------------------------------------------------------------------

    def read_note(self) -> ParsedNote | None:
        try:
            note = self.writer.read(self.rel)
        except VaultopsError as exc:
            self.warn(exc.message)
            return None
        if note is None:
            if self.rel == self.inbox:
                self.warn(f"{self.rel}: no inbox here yet; run `vaultops init` or create it")
            return None
        if note.frontmatter_error:
            self.warn(f"{self.rel}: {note.frontmatter_error}")
        if note.conflict_line is not None:
            self.warn(conflict_message(note))
            return None
        note, waiting = self.vetter.note(note)  # only the answers that are answers, from here on
        for line in waiting:
            self.warn(line)
        return note

    def warn(self, line: str) -> None:
        if line not in self.report.warnings:  # a pass may read the same note more than once
            self.report.warnings.append(line)

    def settled(self, note: ParsedNote, request: Request, now: float, mtime: float) -> float:
        """Seconds until this request may be claimed (0 when it may be now)."""
        if request.ready_flag:
            return 0.0
        settle = self.config.inbox.settle
        first = self.state.first_seen(note.rel, request.id, request.person_hash, now)
        if mtime <= now - settle:
            return 0.0
        return max(0.0, first + settle - now)

    def recover(self) -> None:
        """Claims this machine made and never finished (the process that made them is gone: this pass holds
        the vault lock) become ``interrupted``; what they started is stopped."""
        from vaultops.pipeline.recover import stop_leftovers

        for line in stop_leftovers(self.state, self.vault.host):
            self.report.warnings.append(line)
        for rel in self.notes():
            with self.on(rel):
                self.recover_note()

    def recover_note(self) -> None:
        from vaultops.pipeline.follow import runs_on
        from vaultops.pipeline.recover import interrupted_lines, stale_claims

        note = self.read_note()
        if note is None:
            return
        stale = [(t, r) for t, r in stale_claims(note, self.mine) if not runs_on(self.state, r)]
        if not stale:
            return
        now = self.clock()
        inserts = [Insert(t, tuple(interrupted_lines(r, now)), frozenset({r.state})) for t, r in stale]
        self.write(inserts)
        for _, r in stale:
            self.report.outcomes.append(
                (r.id, State.INTERRUPTED.value, "its pass stopped before it finished")
            )
            self.state.event("interrupted", r.file, r.id, claim=r.lock.claim if r.lock else "")

    # --- decide -------------------------------------------------------------------------------

    def due(self, note: ParsedNote, request: Request) -> bool:
        """A scheduled plan note's time has come: from its last ``### Run`` block, or from when this clone
        first saw the schedule.  An escalated or running note waits whatever its schedule says."""
        if request.state not in SCHEDULABLE:
            return False
        now = self.clock()
        text = request.fields["schedule"]
        seen = self.state.first_seen(note.rel, request.id, f"schedule:{text}", now.timestamp())
        try:
            schedule = parse_schedule(text, now)
        except ScheduleError:
            return False  # said as the note's problem
        since = datetime.fromtimestamp(seen, now.tzinfo)
        return due(schedule, last_run(note.lines, now), since, now)

    def mine(self, lock: Lock) -> bool:
        """A claim made by this clone.  With a remote, other clones may share this host and agent name,
        so only a claim this clone's state.db recorded counts."""
        if lock.host != self.vault.host or lock.agent != self.vault.agent:
            return False
        return not self.publisher.shared or self.state.knows_claim(lock.claim)

    def lease(self, lock: Lock) -> float:
        """Seconds another machine's claim holds; locks from before leases get the longest any job here
        could take."""
        if lock.lease is not None:
            return lock.lease
        route = tuple(self.config.profiles)
        return job_budget(self.config, route, None) + self.config.git.lease_margin

    def takeovers(self, note: ParsedNote) -> list[_Planned]:
        """Other machines' claims whose lease ran out, as this machine measures it: from when it first
        saw the claim, never by comparing clocks across machines."""
        now = self.clock().timestamp()
        out = []
        held = targets_of(
            note.requests,
            lambda r: r.state in HELD and r.lock is not None and not self.mine(r.lock),
        )
        for target, request in held:
            lock = request.lock
            assert lock is not None
            seen = self.state.first_seen(note.rel, request.id, f"claim:{lock.claim}", now)
            lease = self.lease(lock)
            if now - seen <= lease:
                continue
            why = (
                f"taken over: claim {lock.claim} ({lock.agent} on {lock.host}) gave no result within its "
                f"lease ({lease:.0f} s); a light check runs again by itself, other work only after "
                "`- retry: yes`"
            )
            out.append(_Planned(target, request, Action("takeover", _no_decision(), why)))
        return out

    def plan(self, note: ParsedNote, wait: bool) -> tuple[list[_Planned], float]:
        now = time.time()
        try:
            mtime = self.vault.resolve(note.rel).stat().st_mtime
        except FileNotFoundError:  # rewritten by git's checkout since it was read: as good as just saved
            mtime = now
        # a takeover needs a fresh view of the remote: judged from a stale one, it could run work twice
        fresh = not self.publisher.shared or self.publisher.through_remote
        planned: list[_Planned] = self.takeovers(note) if fresh else []
        longest_wait = 0.0
        self.next_settle = None
        for target, request in targets_of(note.requests, lambda r: may_start(r) or "schedule" in r.fields):
            if "schedule" in request.fields and not self.due(note, request):
                continue
            remaining = self.settled(note, request, now, mtime)
            if remaining > 0:
                longest_wait = max(longest_wait, remaining)
                self.next_settle = min(self.next_settle or remaining, remaining)
                self.report.settling.append(f"{request.id} (settling, {remaining:.1f} s to go)")
                continue
            # no lock line, yet state.db has a run: an editor saved over vaultops's lines (see below)
            unclaimed = request.lock is None and not retry_asked(request)
            ran = self.state.last_heavy_run(note.rel, request.id) if unclaimed else None
            roots = self.vault.allowed_roots
            workdir = workdir_problem(request.fields.get("workdir"), self.vault.root, roots)
            if request.problems:
                action = Action("error", _no_decision(), request.problems[0])
            elif workdir:
                action = Action("error", _no_decision(), workdir)
            elif request.forged:
                action = forgery_action(request, self.config)
            elif (said := answered(request, self.config)) is not None:
                action = said
            elif ran is not None:
                # Its lines were removed from the note (an editor that saved an old copy, say): the work was
                # done once and is not done again; the note is told, and `- retry: yes` still runs it.
                why = (
                    f"vaultops already ran this request (claim {ran['claim']}); its lines are gone from the "
                    "note, the log is in .vaultops/state/logs/runs/; write `- retry: yes` to run it again"
                )
                action = Action("error", _no_decision(), why)
            else:  # model triage, when configured, is a value decide() combines with the rules'
                spent = bool(self.config.classify.triage) and self.budget().exhausted
                second = triage.for_request(self.vault, self.state, note.rel, request, budget_spent=spent)
                action = decide(request, self.config, second)
            if (
                request.state is State.INTERRUPTED
                and not retry_asked(request)
                and not request.forged
                and action.kind not in ("builtin", "cancel")
            ):
                continue  # heavy work that was cut short runs again only when the person says `- retry: yes`
            if action.kind == "profile" and self.budget().exhausted:
                if action.approved:
                    continue  # a status line now would close the approval: it runs once the budget allows
                action = Action("wait", action.decision, self.budget().waiting_reason())
            if (
                action.kind in ("error", "wait")
                and request.statuses
                and request.statuses[-1].reason == action.reason
            ):
                continue  # already said so; an input error is looked at again once the person changes it
            closes = note.lines[request.statuses[-1].line] if request.statuses else ""
            planned.append(_Planned(target, request, action, closes))
        return planned, (longest_wait if wait else 0.0)

    # --- record -------------------------------------------------------------------------------

    def write(self, inserts: list[Insert]) -> tuple[WriteResult | None, Applied]:
        applied = Applied()
        if not inserts:
            return None, applied
        self.wait_for_other_git()
        try:
            result = self.writer.apply(self.rel, lambda note: edits_for(note, inserts, applied))
            self.vetter.remember(self.rel, applied.written())
        except VaultopsError as exc:  # conflict markers, a note grown too big, one that keeps changing
            self.warn(exc.message)
            applied.landed.clear()
            self.unplaced += [(self.rel, ins) for ins in inserts if ins.claim]  # tried again later
            return None, applied
        if result.changed and self.rel not in self.report.written:
            self.report.written.append(self.rel)
        late = []
        for ins, why in applied.dropped:
            if why == MISSING and ins.claim:
                self.unplaced.append((self.rel, ins))  # a result must not be lost: tried again later
            elif why == CLAIM_LOST and late_result(ins.lines, ins.claim):
                late.append(Insert(ins.target, tuple(late_result(ins.lines, ins.claim)), EVERY_STATE))
                self.report.warnings.append(
                    f"{ins.target.request_id}: claim {ins.claim} was taken over before its result arrived; "
                    "the result is kept as a late result"
                )
            else:
                self.report.warnings.append(f"{ins.target.request_id}: not recorded, {why}")
        if late:
            self.write(late)
        return result, applied

    def wait_for_other_git(self) -> None:
        """A rebase or merge that obsidian-git (or the person) has under way rewrites the notes as it goes:
        lines written into one meanwhile would be lost.  Wait for it to end (it takes seconds); after
        ``OTHER_GIT_WAIT`` write anyway, as the lines would be put back from state.db by a later pass."""
        git = self.publisher.git
        if not self.publisher.shared or not (git.git_dir / "HEAD").exists():
            return
        deadline = time.monotonic() + OTHER_GIT_WAIT
        while git.in_progress() and time.monotonic() < deadline:
            time.sleep(0.1)

    def run(self, wait_settle: bool = True) -> PassReport:
        self.publisher.pull(self.report.warnings)
        daily = DailyWriter(self.vault, self.writer, self.report.warnings)
        claimed = self.take(daily, wait_settle)
        if claimed:
            dispatcher = self.dispatcher(claimed)
            with ThreadPoolExecutor(max_workers=self.config.limits.max_concurrent) as pool:
                results = list(pool.map(lambda pj: self.run_one(pj[1], dispatcher), claimed))
            self.record(list(zip(claimed, results, strict=True)), daily)
            for _, ins in self.unplaced:  # a pass has no later pass to try again: say so
                self.warn(
                    f"{ins.target.request_id}: not recorded, {MISSING}; its log is in .vaultops/state/logs/"
                )
        self.finish(daily)
        return self.report

    def take(
        self,
        daily: DailyWriter,
        wait_settle: bool = False,
        slots: int | None = None,
        *,
        replies: bool = True,
    ) -> list[tuple[_Planned, Job]]:
        """Read, decide and make the first write; returns the jobs claimed.  With a remote, a claim that
        another machine beat to the remote is dropped, and the pass follows the remote and looks again.
        ``replies``: first write the person's answers waiting in chat under their requests.  The inbox
        comes first, then each plan note of the queue folder."""
        if replies:
            self.take_replies()
        claimed: list[tuple[_Planned, Job]] = []
        for rel in self.notes():
            left = None if slots is None else max(0, slots - len(claimed))
            with self.on(rel):
                claimed += self.take_from(daily, wait_settle, left, claimed)
        return claimed

    def notes(self) -> list[str]:
        return [self.inbox, *self.vault.plan_notes()]

    @contextmanager
    def on(self, rel: str) -> Iterator[None]:
        """Work on one note for a while (reads, writes and claims go to it)."""
        before, self.rel = self.rel, rel
        try:
            yield
        finally:
            self.rel = before

    def take_from(
        self,
        daily: DailyWriter,
        wait_settle: bool,
        slots: int | None,
        taken: list[tuple[_Planned, Job]],
    ) -> list[tuple[_Planned, Job]]:
        for _ in range(CLAIM_ATTEMPTS):
            note = self.read_note()
            if note is not None and follow_workers(self, note, daily):
                note = self.read_note()
            if note is None:
                return []
            planned, wait = self.plan(note, wait_settle)
            if wait > 0:
                time.sleep(wait)
                self.report.settling.clear()
                wait_settle = False
                continue
            planned = self.within(self.apart(planned, taken), slots)
            if not planned:
                return []
            claimed = self.start(planned, daily, note)
            if claimed is not None:
                return claimed
            self.publisher.pull(self.report.warnings)
            if not self.publisher.through_remote:
                return []
        self.warn(f"the remote kept moving while claiming ({CLAIM_ATTEMPTS} tries); trying on the next pass")
        return []

    def take_replies(self) -> None:
        """Answers from Telegram become ``- decision:`` lines under their requests (in the inbox, or in the
        plan note a ``PLAN-…`` id names), committed (and pushed) before anything is claimed; the bot is told
        they were read only once they are all in the notes."""
        replies, offset = self.teller.replies()
        plans = {plan_id(rel): rel for rel in self.vault.plan_notes()} if replies else {}
        by_note: dict[str, list[Reply]] = {}
        for reply in replies:
            by_note.setdefault(plans.get(reply.request_id, self.inbox), []).append(reply)
        whole = True
        answered: list[tuple[str, str, str]] = []
        written: list[str] = []
        for rel, group in by_note.items():
            with self.on(rel):
                note = self.read_note()
                if note is None:
                    whole = False
                    continue
                inserts, refused = reply_inserts(note, group)
                self.report.warnings.extend(refused)
                _, applied = self.write(inserts)
            if len(applied.landed) + len(applied.dropped) < len(inserts):
                whole = False  # the note could not be written: the replies are read again next time
                continue
            answered += [(i.target.request_id, "answered", "via Telegram") for i in applied.landed]
            written += [rel] if applied.landed else []
        if answered and self.publisher.git.is_repo():
            self.publisher.commit(written, answered, self.report.warnings)
            self.report.written = [w for w in self.report.written if w not in written]
        if whole and offset is not None:
            self.teller.acknowledge(offset)

    def apart(self, planned: list[_Planned], taken: list[tuple[_Planned, Job]]) -> list[_Planned]:
        """Plan notes whose ``files:`` overlap a job's already taken in this pass, or a live worker's, wait
        for a later pass: two jobs that might change one file never run at once.  A plan run by a worker
        also waits for a free place (``[workers] max``) and for its worker's name."""
        # a worker's empty files: any file; another plan's: none named, so it is not checked
        busy = [*self.running_files, *(job.files for _, job in taken if job.files or job.worker)]
        workers = Registry(self.state).live() if any(p.action.kind == "profile" for p in planned) else []
        busy += [w.files for w in workers]  # a worker without files: any file
        starting = [job.worker for _, job in taken if job.worker]  # claimed in this pass, not spawned yet
        places = (self.config.workers.max or self.config.limits.max_concurrent) - len(workers) - len(starting)
        names = {w.name for w in workers} | set(starting)
        out = []
        for p in planned:
            files = files_of(p.request)
            if p.action.kind == "profile" and (name := p.request.fields.get("worker")):
                if name in names or places <= 0 or any(files_overlap(files, b) for b in busy):
                    continue  # it starts once the worker of that name, a place, or its files are free
                names.add(name)
                places -= 1
                busy.append(files)
            elif files and p.action.kind == "profile":
                if any(files_overlap(files, b) for b in busy):
                    continue
                busy.append(files)
            out.append(p)
        return out

    def within(self, planned: list[_Planned], slots: int | None) -> list[_Planned]:
        """With a remote, claim no more than this machine can start now: a claim waiting in a queue would
        use up its lease while other machines sit idle."""
        if not self.publisher.shared:
            return planned
        free = self.config.limits.max_concurrent if slots is None else slots
        out = []
        for p in planned:
            if p.action.kind in ("profile", "builtin"):
                if free <= 0:
                    continue
                free -= 1
            out.append(p)
        return out

    def start(
        self, planned: list[_Planned], daily: DailyWriter, note: ParsedNote
    ) -> list[tuple[_Planned, Job]] | None:
        """The first write (errors, escalations, light results, claims); returns the jobs claimed, or None
        when the remote moved before this pass's claims reached it (nothing was written)."""
        publisher = self.publisher
        batch = self.first_batch(planned, daily, claim_light=publisher.shared)
        if (batch.claims or batch.takeovers) and not publisher.may_claim():
            batch = batch.without_claims()
        if publisher.through_remote:
            raw, applied, head = self.to_push(note, batch.inserts)
            if not applied.landed:
                return []
            message = render.commit_message(self.claim_outcomes(batch, applied))
            claims = [batch.claims[i.target][1] for i in applied.landed if i.target in batch.claims]
            for job in claims:  # known before the push: a kill -9 after it leaves them in the note
                self.state.claimed(
                    job.file, job.request_id, job.claim, job.handler, self.vault.host, "claiming"
                )
            pushed = publisher.swap(self.rel, raw, message, head)
            if pushed.kind == "behind" and not faults.enabled("claims.merge"):
                self.state.drop_claims([job.claim for job in claims])
                return None
            if pushed.kind == "failed":
                self.state.drop_claims([job.claim for job in claims])
                self.warn(f"claims not made: {pushed.detail}; trying again on the next pass")
                return []
            self.state.confirm_claims([job.claim for job in claims])
            # The claims exist now, on the remote, whatever this write finds: the note on disk may hold
            # them already (obsidian-git's pull brought the pushed commit in first).
            self.write(applied.landed)
            publisher.adopt(pushed, head, [self.rel])
            if pushed.kind == "behind":  # the control run's wrong way: merge the lost claim through
                publisher.merge_through()
            self.report.written = [w for w in self.report.written if w != self.rel]  # committed already
        else:
            _, applied = self.write(batch.inserts)
        landed = {ins.target for ins in applied.landed}
        for p in planned:  # answered: what came after that status line will not be acted on again
            if p.target in landed and p.closes:
                self.vetter.acted(self.rel, p.request.id, p.closes)
        for target, effect in batch.effects:
            if target in landed:
                effect()
        jobs = [batch.claims[t] for t in batch.claims if t in landed]
        if not publisher.through_remote:
            for _, job in jobs:
                self.state.claimed(job.file, job.request_id, job.claim, job.handler, self.vault.host)
        return jobs

    def to_push(self, note: ParsedNote, inserts: list[Insert]) -> tuple[bytes, Applied, str | None]:
        """The note's bytes to commit with ``inserts``, which of them land, and the HEAD to build on.

        HEAD's version of the note with them placed, when they land there as they do on disk: lines the
        person saved and has not committed yet stay theirs, to be committed by them (obsidian-git) and not
        by vaultops too, which would put them in the note twice.  Else (a request saved but never
        committed, being claimed) the note as it is on disk."""
        head, committed = self.publisher.head_version(self.rel)
        raw, applied = with_inserts(note, inserts)
        self.vetter.remember(self.rel, applied.written())  # before they can reach the remote
        if committed is not None and committed != note.raw:
            at_head, placed = with_inserts(self.writer.parse(self.rel, committed), inserts)
            if [i.target for i in placed.landed] == [i.target for i in applied.landed]:
                return at_head, applied, head
        return raw, applied, head

    def claim_outcomes(self, batch: _Batch, applied: Applied) -> list[tuple[str, str, str]]:
        """What a claim commit says: each request claimed, taken over, or answered with an error or an
        escalation."""
        return [batch.said[ins.target] for ins in applied.landed if ins.target in batch.said]

    def finish(self, daily: DailyWriter) -> None:
        for rel in daily.flush(self.clock()):
            self.report.written.append(rel)
        self.commit()
        self.teller.deliver()  # after the commit: a notice links to lines that are in the vault

    def dispatcher(
        self, jobs: list[tuple[_Planned, Job]], cancel: threading.Event | None = None
    ) -> Dispatcher:
        notes = _vault_notes(self.vault) if any("[[" in job.text for _, job in jobs) else []
        return Dispatcher(self.vault, self.state, notes, cancel=cancel)

    def first_batch(self, planned: list[_Planned], daily: DailyWriter, *, claim_light: bool) -> _Batch:
        """Errors, escalations, takeovers, light results and claims: the pass's first write.  With
        ``claim_light`` light checks are claimed like heavy work and run after the claim has landed."""
        batch = _Batch()
        light: list[tuple[_Planned, Job, datetime]] = []
        for p in planned:
            expect = frozenset({p.request.state})
            now = self.clock()
            kind = p.action.kind
            if kind == "takeover":
                self.take_over(batch, p, now)
                continue
            if kind in _STATUS_ONLY:
                state = _STATUS_ONLY[kind]
                lines = render.status_only(state, now, p.action.reason)
                batch.inserts.append(Insert(p.target, tuple(lines), expect, seen=p.request.text_hash))
                batch.effects.append((p.target, self._said(p, state, now, daily)))
                batch.said[p.target] = (p.request.id, state.value, p.action.reason)
                continue
            job = Job(
                p.request.file, p.request.id, p.request.title, p.request.text or "", p.action.decision.type,
                new_claim(), p.action.profile, p.action.timeout, p.action.decision.route, p.action.tools,
                _earlier(p.request),
                self.budget_of(p),
                approved=bool(p.action.approved), workdir=p.request.fields.get("workdir", ""),
                tasks=tuple(t for t in p.request.fields.get("tasks", "").split("\n") if t),
                done_tasks=_done_tasks(p.request), worker=p.request.fields.get("worker", ""),
                files=files_of(p.request),
            )  # fmt: skip
            lease = (job.budget or job_budget(self.config, (), None)) + self.config.git.lease_margin
            if kind == "builtin" and not claim_light:
                light.append((p, job, now))
                continue
            claim = render.lock_and_start(self.vault.agent, self.vault.host, job.claim, now, lease)
            if p.action.approved:  # acknowledged in the same write that claims it: it runs once
                claim = [*render.status_only(State.APPROVED, now, p.action.approved), *claim]
            self.claim_lines[job.claim] = tuple(claim)
            batch.inserts.append(Insert(p.target, tuple(claim), expect, seen=p.request.text_hash))
            batch.claims[p.target] = (p, job)
            batch.said[p.target] = (p.request.id, "claimed", job.handler)
        for (p, job, _), result in zip(light, self.run_light(light), strict=True):
            lease = job_budget(self.config, (), None) + self.config.git.lease_margin
            lines = render.lock_and_start(self.vault.agent, self.vault.host, job.claim, result.started, lease)
            lines += self.result_lines(p, result)
            expect = frozenset({p.request.state})
            batch.inserts.append(Insert(p.target, tuple(lines), expect, seen=p.request.text_hash))
            batch.effects.append((p.target, partial(self.finished, p, job, result, daily)))
        return batch

    def budget_of(self, p: _Planned) -> float | None:
        """Seconds a claimed job may take (its lease adds a margin); None for a built-in check."""
        if p.action.kind == "builtin":
            return None
        if p.request.fields.get("worker"):
            return worker_budget(self.config, p.action.timeout)
        return job_budget(self.config, p.action.decision.route or (p.action.profile,), p.action.timeout)

    def _said(self, p: _Planned, state: State, now: datetime, daily: DailyWriter) -> Callable[[], None]:
        def effect() -> None:
            self.report.outcomes.append((p.request.id, state.value, p.action.reason))
            if state is State.ERROR:
                self.state.event(INPUT_ERROR, p.request.file, p.request.id, reason=p.action.reason)
            if state is State.ESCALATED:
                daily.add(p.request, now, f"escalated · {p.action.decision.safety_class}")
                self.teller.waiting(p.request, state, now, p.action.reason, p.action.decision)
            elif state in (State.DENIED, State.CANCELLED):
                daily.add(p.request, now, f"{state.value} by the person")

        return effect

    def take_over(self, batch: _Batch, p: _Planned, now: datetime) -> None:
        """A new lock, so that the old claim's late result is fenced out, and ``interrupted``: heavy work
        is not run twice by itself, and a light check runs again on the next pass."""
        old = p.request.lock
        lines = render.takeover(self.vault.agent, self.vault.host, new_claim(), now, p.action.reason)
        batch.inserts.append(Insert(p.target, tuple(lines), frozenset({p.request.state})))
        batch.takeovers.add(p.target)
        batch.said[p.target] = (p.request.id, "taken over", f"claim {old.claim if old else '?'}")

        def effect() -> None:
            self.again = True
            self.report.outcomes.append((p.request.id, State.INTERRUPTED.value, p.action.reason))
            self.teller.waiting(p.request, State.INTERRUPTED, now, p.action.reason, p.action.decision)
            self.state.event("takeover", p.request.file, p.request.id, claim=old.claim if old else "")

        batch.effects.append((p.target, effect))

    def run_light(self, light: list[tuple[_Planned, Job, datetime]]) -> list[RunResult]:
        workers = max(1, min(8, self.config.limits.max_concurrent * 2))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda item: self.run_builtin(item[1]), light))

    def run_builtin(self, job: Job) -> RunResult:
        run_id = self.state.run_started(
            job.file, job.request_id, job.claim, 1, "direct", self.vault.host, os.getpid()
        )
        result = run_builtin(job, self.vault, self.clock())
        self.state.run_ended(run_id, result.state.value, result.exit_code, result.duration)
        return result

    def budget(self) -> Budget:
        spent = self.state.cost_since(day_start(self.clock()))
        return Budget(self.config.limits.daily_budget_usd, spent)

    def run_one(self, job: Job, dispatcher: Dispatcher) -> RunResult:
        """One claimed job to its end (safe to call from a worker thread)."""
        if job.handler == "direct":
            return self.run_builtin(job)
        started = self.clock()
        with dispatcher.lock:
            budget = self.budget()
        if budget.exhausted:  # spent by the jobs before it in this batch
            return RunResult(State.WAITING, job.handler, started, 0.0, "", budget.waiting_reason())
        if job.worker:
            return start_worker(self, job, job.files)
        job = self.resumed(job)
        if job.tasks:
            workers = self.config.limits.max_concurrent

            def run(part: Job) -> RunResult:
                return dispatcher.run(part, started).result

            result = run_tasks(job, run, workers, started, self.clock)
        else:
            result = asked_of_the_person(self.vault, job, dispatcher.run(job, started).result)
        with dispatcher.lock:
            return self.with_budget_warning(result)

    def resumed(self, job: Job) -> Job:
        """An approved request whose agent was stopped by the hook goes on in the same Claude Code session,
        with exactly the calls it asked for let through once."""
        if not job.approved:
            return job
        asked = waiting(self.vault.root, job.request_id)
        if not asked:
            return job
        grant(self.vault.root, asked)
        return replace(job, resume=str(asked[-1].get("session_id") or ""), resumed_for=describe(asked))

    def record(self, done: list[tuple[tuple[_Planned, Job], RunResult]], daily: DailyWriter) -> list[Insert]:
        """Results, in request order, in one write; each only if its lock is still its claim (with a
        remote, as the remote has it now: another machine may have taken the request over)."""
        self.publisher.pull(self.report.warnings)
        inserts = []
        files: dict[str, list[Insert]] = {}
        for (p, job), result in sorted(done, key=lambda d: d[0][0].request.start):
            if result.state in (State.WAITING, State.RUNNING):  # RUNNING: a worker took it on
                lines = render.status_only(result.state, result.started, result.reason)
                self.report.outcomes.append((job.request_id, result.state.value, result.reason))
            else:
                lines = self.result_lines(p, result)
                self.finished(p, job, result, daily)
            running = frozenset({State.RUNNING})
            insert = Insert(p.target, tuple(lines), running, claim=job.claim, seen=p.request.text_hash)
            files.setdefault(job.file, []).append(insert)
            if result.state is not State.RUNNING:  # a worker's note is not finished: nothing to put back
                inserts.append(insert)
        for rel, group in files.items():
            with self.on(rel):
                if not self.push_first(group):
                    self.write(group)
        faults.reach("record.after_write")
        return inserts

    def push_first(self, inserts: list[Insert]) -> bool:
        """With a remote, results reach it before the note on disk, as claims do: a commit built on HEAD
        and pushed, then the same lines written and the commit adopted.  Another tool that resets this
        clone's working tree meanwhile (obsidian-git's `rebase --abort`) cannot lose them: the remote has
        them, and the next pull brings them back.  False when they were not pushed (no remote, or it cannot
        take them now, or none of them can be placed): the caller writes them, to be committed later."""
        publisher = self.publisher
        ids = {ins.target.request_id for ins in inserts}
        outcomes = [o for o in self.report.outcomes if o[0] in ids]
        for _ in range(CLAIM_ATTEMPTS):
            if not publisher.through_remote:
                return False
            self.wait_for_other_git()
            note = self.read_note()
            if note is None:
                return False
            raw, applied, head = self.to_push(note, inserts)
            if not applied.landed:
                return False  # fenced out or missing: the note writer says so, and keeps late results
            pushed = publisher.swap(self.rel, raw, render.commit_message(outcomes), head, stage="result")
            if pushed.kind == "failed":
                return False
            if pushed.kind == "pushed":
                _, local = self.write(inserts)
                publisher.adopt(pushed, head, [self.rel])
                if not local.dropped:  # committed already; a late result written besides waits for commit
                    self.report.written = [w for w in self.report.written if w != self.rel]
                return True
            publisher.pull(self.report.warnings)  # someone pushed first: place them on what they pushed
        return False

    def with_budget_warning(self, result: RunResult) -> RunResult:
        """The first result of the day past 80 % of the budget says so on its status line."""
        budget = self.budget()
        day = self.clock().strftime("%Y-%m-%d")
        if not budget.past_warning or self.state.get(f"budget-warned:{day}") is not None:
            return result
        self.state.set(f"budget-warned:{day}", "1")
        self.state.event("budget-warning", spent=budget.spent, limit=budget.limit)
        self.teller.budget(self.clock(), budget.spent, budget.limit)
        return replace(
            result, reason=f"{result.reason}; {budget.warning()}" if result.reason else budget.warning()
        )

    def result_lines(self, p: _Planned, result: RunResult) -> list[str]:
        d = p.action.decision
        return render.result_block(
            result, agent=self.vault.agent, type_=d.type, complexity=d.complexity, safety=d.safety_class,
            max_lines=self.config.record.max_lines,
            heading="Run" if "schedule" in p.request.fields else "Result",
        )  # fmt: skip

    def finished(self, p: _Planned, job: Job, result: RunResult, daily: DailyWriter) -> None:
        detail = f"{job.type}, {result.route}, {render.seconds(result.duration)}"
        if result.reason:
            detail += f", {result.reason}"
        self.report.outcomes.append((job.request_id, result.state.value, detail))
        daily.add(
            p.request,
            result.started,
            f"{result.state.value} · {job.type} · {render.seconds(result.duration)}",
        )
        self.state.event("result", job.file, job.request_id, state=result.state.value, claim=job.claim)
        if result.state in (State.ESCALATED, State.INTERRUPTED):
            self.teller.waiting(p.request, result.state, result.started, result.reason, p.action.decision)

    # --- sync ---------------------------------------------------------------------------------

    def commit(self) -> None:
        """Commit (and, with a remote, push) what this pass wrote and what earlier ones could not."""
        if not self.publisher.git.is_repo():
            if self.report.written and self.state.get("warned-no-git") is None:
                self.report.warnings.append(
                    f"{self.vault.root} is not a git repository; results are not committed"
                )
                self.state.set("warned-no-git", "1")
            return
        self.report.commit = self.publisher.commit(
            self.report.written, self.report.outcomes, self.report.warnings
        )


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


def _done_tasks(request: Request) -> frozenset[int]:
    """A fanned-out plan note's tasks that need no run: those done before, when the person asked to retry
    (a new scheduled run does them all)."""
    done = request.fields.get("tasks-done", "")
    return frozenset(int(n) for n in done.split(",") if n) if retry_asked(request) else frozenset()


def files_of(request: Request) -> tuple[str, ...]:
    """A plan note's ``files:`` (the inbox's requests do not say)."""
    return tuple(f for f in request.fields.get("files", "").split("\n") if f)


def _earlier(request: Request) -> tuple[str, ...]:
    """What earlier passes said of this request, for the agent's context."""
    return tuple(
        f"{s.state.value}: {s.reason}"
        for s in request.statuses
        if s.state in (State.ERROR, State.INTERRUPTED) and s.reason
    )


def _vault_notes(vault: Vault) -> list[str]:
    """Every note and attachment of the vault, for resolving [[wikilinks]]."""
    out = []
    for folder, dirs, files in os.walk(vault.root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        rel = Path(folder).relative_to(vault.root)
        out += [(rel / f).as_posix() for f in files if not f.startswith(".")]
    return out


def _no_decision() -> Decision:
    return Decision("unknown", "heavy", "unknown")
