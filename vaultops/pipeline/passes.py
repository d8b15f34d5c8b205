"""One pass over the vault: scan → decide → claim → run → record → sync.

Each stage is a function of values; ``Pass`` strings them together and owns the I/O order: one write per
note per batch, claims on disk before any heavy job starts, and a commit after each batch.  ``tick`` runs the
phases one after the other; the daemon runs them as events and finished jobs arrive.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from vaultops.decide.route import Action, decide
from vaultops.errors import VaultopsError
from vaultops.model import Decision, Request, State
from vaultops.pipeline.budget import Budget, day_start
from vaultops.pipeline.plan import (
    MISSING,
    Applied,
    Insert,
    Target,
    edits_for,
    may_start,
    retry_asked,
    targets_of,
)
from vaultops.record import render
from vaultops.record.journal import DailyWriter
from vaultops.record.render import RunResult
from vaultops.run.dispatch import Dispatcher
from vaultops.run.jobs import Job, run_builtin
from vaultops.scan.note import ParsedNote
from vaultops.store.notes import NoteWriter, WriteResult
from vaultops.store.state import StateDB
from vaultops.sync.git import Git, GitError
from vaultops.vault import Vault

Clock = Callable[[], datetime]
INPUT_ERROR = "input-error"


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


def new_claim() -> str:
    return secrets.token_hex(3)


class Pass:
    def __init__(
        self, vault: Vault, state: StateDB, clock: Clock = local_now, writer: NoteWriter | None = None
    ) -> None:
        self.vault = vault
        self.config = vault.config
        self.state = state
        self.clock = clock
        self.writer = writer or NoteWriter(vault)
        self.report = PassReport()
        self.inbox = vault.inbox_rel
        self.next_settle: float | None = None  # seconds until the soonest settling request is ready
        self.uncommitted: set[str] = set()  # paths an earlier pass wrote and could not commit
        self.unplaced: list[Insert] = []  # results whose request was not in the note as read
        self.claim_lines: dict[str, tuple[str, ...]] = {}  # claim -> the lock and running lines written

    # --- scan ---------------------------------------------------------------------------------

    def read_inbox(self) -> ParsedNote | None:
        try:
            note = self.writer.read(self.inbox)
        except VaultopsError as exc:
            self.warn(exc.message)
            return None
        if note is None:
            self.warn(f"{self.inbox}: no inbox here yet; run `vaultops init` or create it")
            return None
        if note.frontmatter_error:
            self.warn(f"{self.inbox}: {note.frontmatter_error}")
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
        from vaultops.pipeline.recover import interrupted_lines, stale_claims, stop_leftovers

        for line in stop_leftovers(self.state, self.vault.host):
            self.report.warnings.append(line)
        note = self.read_inbox()
        if note is None:
            return
        stale = stale_claims(note, self.vault.agent, self.vault.host)
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

    def plan(self, note: ParsedNote, wait: bool) -> tuple[list[_Planned], float]:
        now = time.time()
        mtime = self.vault.resolve(note.rel).stat().st_mtime
        planned: list[_Planned] = []
        longest_wait = 0.0
        self.next_settle = None
        for target, request in targets_of(note.requests, may_start):
            remaining = self.settled(note, request, now, mtime)
            if remaining > 0:
                longest_wait = max(longest_wait, remaining)
                self.next_settle = min(self.next_settle or remaining, remaining)
                self.report.settling.append(f"{request.id} (settling, {remaining:.1f} s to go)")
                continue
            # no lock line, yet state.db has a run: an editor saved over vaultops's lines (see below)
            unclaimed = request.lock is None and not retry_asked(request)
            ran = self.state.last_heavy_run(note.rel, request.id) if unclaimed else None
            if request.problems:
                action = Action("error", _no_decision(), request.problems[0])
            elif ran is not None:
                # Its lines were removed from the note (an editor that saved an old copy, say): the work was
                # done once and is not done again; the note is told, and `- retry: yes` still runs it.
                why = (
                    f"vaultops already ran this request (claim {ran['claim']}); its lines are gone from the "
                    "note, the log is in .vaultops/state/logs/runs/; write `- retry: yes` to run it again"
                )
                action = Action("error", _no_decision(), why)
            else:
                action = decide(request, self.config)
            if request.state is State.INTERRUPTED and not retry_asked(request) and action.kind != "builtin":
                continue  # heavy work that was cut short runs again only when the person says `- retry: yes`
            if action.kind == "profile" and self.budget().exhausted:
                action = Action("wait", action.decision, self.budget().waiting_reason())
            if (
                action.kind in ("error", "wait")
                and request.statuses
                and request.statuses[-1].reason == action.reason
            ):
                continue  # already said so; an input error is looked at again once the person changes it
            planned.append(_Planned(target, request, action))
        return planned, (longest_wait if wait else 0.0)

    # --- record -------------------------------------------------------------------------------

    def write(self, inserts: list[Insert]) -> tuple[WriteResult | None, Applied]:
        applied = Applied()
        if not inserts:
            return None, applied
        result = self.writer.apply(self.inbox, lambda note: edits_for(note, inserts, applied))
        if result.changed and self.inbox not in self.report.written:
            self.report.written.append(self.inbox)
        for ins, why in applied.dropped:
            if why == MISSING and ins.claim:
                self.unplaced.append(ins)  # a result must not be lost: the caller tries it again later
            else:
                self.report.warnings.append(f"{ins.target.request_id}: not recorded, {why}")
        return result, applied

    def run(self, wait_settle: bool = True) -> PassReport:
        note = self.read_inbox()
        if note is None:
            return self.report
        planned, wait = self.plan(note, wait_settle)
        if wait > 0:
            time.sleep(wait)
            self.report.settling.clear()
            note = self.read_inbox()
            if note is None:
                return self.report
            planned, _ = self.plan(note, False)
        if not planned:
            return self.report
        daily = DailyWriter(self.vault, self.writer, self.report.warnings)
        claimed = self.start(planned, daily)
        if claimed:
            dispatcher = self.dispatcher(claimed)
            with ThreadPoolExecutor(max_workers=self.config.limits.max_concurrent) as pool:
                results = list(pool.map(lambda pj: self.run_one(pj[1], dispatcher), claimed))
            self.record(list(zip(claimed, results, strict=True)), daily)
            for ins in self.unplaced:  # a pass has no later pass to try again: say so
                self.warn(
                    f"{ins.target.request_id}: not recorded, {MISSING}; its log is in .vaultops/state/logs/"
                )
        self.finish(daily)
        return self.report

    def start(self, planned: list[_Planned], daily: DailyWriter) -> list[tuple[_Planned, Job]]:
        """The first write (errors, escalations, light results, claims); returns the heavy jobs claimed."""
        first, heavy = self.first_batch(planned, daily)
        _, applied = self.write(first)
        claimed = {ins.target for ins in applied.landed if ins.target in heavy}
        jobs = [heavy[t] for t in heavy if t in claimed]
        for _, job in jobs:
            self.state.claimed(job.file, job.request_id, job.claim, job.handler, self.vault.host)
        return jobs

    def finish(self, daily: DailyWriter) -> None:
        for rel in daily.flush(self.clock()):
            self.report.written.append(rel)
        self.commit()

    def dispatcher(
        self, jobs: list[tuple[_Planned, Job]], cancel: threading.Event | None = None
    ) -> Dispatcher:
        notes = _vault_notes(self.vault) if any("[[" in job.text for _, job in jobs) else []
        return Dispatcher(self.vault, self.state, notes, cancel=cancel)

    def first_batch(
        self, planned: list[_Planned], daily: DailyWriter
    ) -> tuple[list[Insert], dict[Target, tuple[_Planned, Job]]]:
        """Errors, escalations, light results and the claims of heavy jobs: the pass's first write."""
        inserts: list[Insert] = []
        heavy: dict[Target, tuple[_Planned, Job]] = {}
        light: list[tuple[_Planned, Job, datetime]] = []
        for p in planned:
            expect = frozenset({p.request.state})
            now = self.clock()
            kind = p.action.kind
            if kind in ("error", "escalate", "wait"):
                state = {"error": State.ERROR, "escalate": State.ESCALATED, "wait": State.WAITING}[kind]
                inserts.append(
                    Insert(p.target, tuple(render.status_only(state, now, p.action.reason)), expect)
                )
                self.report.outcomes.append((p.request.id, state.value, p.action.reason))
                if kind == "error":
                    self.state.event(INPUT_ERROR, p.request.file, p.request.id, reason=p.action.reason)
                if kind == "escalate":
                    daily.add(p.request, now, f"escalated · {p.action.decision.safety_class}")
                continue
            job = Job(
                p.request.file, p.request.id, p.request.title, p.request.text or "", p.action.decision.type,
                new_claim(), p.action.profile, p.action.timeout, p.action.decision.route, p.action.tools,
                _earlier(p.request),
            )  # fmt: skip
            if kind == "builtin":
                light.append((p, job, now))
            else:
                claim = render.lock_and_start(self.vault.agent, self.vault.host, job.claim, now)
                self.claim_lines[job.claim] = tuple(claim)
                inserts.append(Insert(p.target, tuple(claim), expect))
                heavy[p.target] = (p, job)
        for (p, job, _), result in zip(light, self.run_light(light), strict=True):
            lines = render.lock_and_start(self.vault.agent, self.vault.host, job.claim, result.started)
            lines += self.result_lines(p, result)
            inserts.append(Insert(p.target, tuple(lines), frozenset({p.request.state})))
            self.finished(p, job, result, daily)
        return inserts, heavy

    def run_light(self, light: list[tuple[_Planned, Job, datetime]]) -> list[RunResult]:
        def one(item: tuple[_Planned, Job, datetime]) -> RunResult:
            job = item[1]
            run_id = self.state.run_started(
                job.file, job.request_id, job.claim, 1, "direct", self.vault.host, os.getpid()
            )
            result = run_builtin(job, self.vault, self.clock())
            self.state.run_ended(run_id, result.state.value, result.exit_code, result.duration)
            return result

        workers = max(1, min(8, self.config.limits.max_concurrent * 2))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(one, light))

    def budget(self) -> Budget:
        spent = self.state.cost_since(day_start(self.clock()))
        return Budget(self.config.limits.daily_budget_usd, spent)

    def run_one(self, job: Job, dispatcher: Dispatcher) -> RunResult:
        """One claimed heavy job to its end (safe to call from a worker thread)."""
        started = self.clock()
        with dispatcher.lock:
            budget = self.budget()
        if budget.exhausted:  # spent by the jobs before it in this batch
            return RunResult(State.WAITING, job.handler, started, 0.0, "", budget.waiting_reason())
        result = dispatcher.run(job, started).result
        with dispatcher.lock:
            return self.with_budget_warning(result)

    def record(self, done: list[tuple[tuple[_Planned, Job], RunResult]], daily: DailyWriter) -> list[Insert]:
        """Heavy results, in request order, in one write; each only if its lock is still its claim."""
        inserts = []
        for (p, job), result in sorted(done, key=lambda d: d[0][0].request.start):
            if result.state is State.WAITING:
                lines = render.status_only(State.WAITING, result.started, result.reason)
                self.report.outcomes.append((job.request_id, State.WAITING.value, result.reason))
            else:
                lines = self.result_lines(p, result)
                self.finished(p, job, result, daily)
            inserts.append(Insert(p.target, tuple(lines), frozenset({State.RUNNING}), claim=job.claim))
        self.write(inserts)
        return inserts

    def with_budget_warning(self, result: RunResult) -> RunResult:
        """The first result of the day past 80 % of the budget says so on its status line."""
        budget = self.budget()
        day = self.clock().strftime("%Y-%m-%d")
        if not budget.past_warning or self.state.get(f"budget-warned:{day}") is not None:
            return result
        self.state.set(f"budget-warned:{day}", "1")
        self.state.event("budget-warning", spent=budget.spent, limit=budget.limit)
        return replace(
            result, reason=f"{result.reason}; {budget.warning()}" if result.reason else budget.warning()
        )

    def result_lines(self, p: _Planned, result: RunResult) -> list[str]:
        d = p.action.decision
        return render.result_block(
            result, agent=self.vault.agent, type_=d.type, complexity=d.complexity, safety=d.safety_class,
            max_lines=self.config.record.max_lines,
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

    # --- sync ---------------------------------------------------------------------------------

    def commit(self) -> None:
        """Commit what this pass wrote, and what earlier ones could not commit (a git that crashed on a
        note being rewritten, say); what still fails is left in ``uncommitted`` for the next pass."""
        paths = sorted({*self.report.written, *self.uncommitted})
        if not paths:
            return
        git = Git(self.vault.root)
        if not git.is_repo():
            if self.state.get("warned-no-git") is None:
                self.report.warnings.append(
                    f"{self.vault.root} is not a git repository; results are not committed"
                )
                self.state.set("warned-no-git", "1")
            return
        outcomes = self.report.outcomes or [("vaultops", "recorded", "")]
        try:
            result = git.commit_paths(paths, render.commit_message(outcomes), self.vault.agent)
        except GitError as exc:
            self.report.warnings.append(f"could not commit: {exc}; it is tried again on the next pass")
            self.uncommitted.update(paths)
            return
        self.uncommitted.clear()
        self.report.commit = result.sha


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
