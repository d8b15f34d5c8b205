"""One pass over the vault, in named steps: recover → claim → run each job → record → close.

``Pass.run`` is the whole of ``vaultops tick``: those steps one after the other.  The daemon makes the same
calls, but runs the jobs in the background and records each batch as it finishes (``daemon.loop``).
The steps are thin: what to do with each request is the gate's decision (``decide.gate``, pure), and
each stage lives in its own module: ``facts`` (what the gate reads), ``claims``, ``running``,
``results``, ``follow`` (workers), ``chat`` (answers from Telegram), ``recover`` (after a crash).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from vaultops.base import faults
from vaultops.base.errors import ConfigError, LockBusy, UnsafePath, VaultopsError, disk_error
from vaultops.base.visible import described
from vaultops.engine import decide as gathering
from vaultops.engine.claim import claim
from vaultops.engine.context import Clock, Context, local_now
from vaultops.engine.copies import tell_copies
from vaultops.engine.dashboard import show
from vaultops.engine.follow import follow_workers
from vaultops.engine.hear import take_replies
from vaultops.engine.incidents import tell_incidents
from vaultops.engine.kept_results import forget, keep, place_kept
from vaultops.engine.peers import watch_peers
from vaultops.engine.problems import tell_problems
from vaultops.engine.publish import Publisher
from vaultops.engine.record import CLAIM_ATTEMPTS, Claimed, Done, apply, record
from vaultops.engine.recover import recover
from vaultops.engine.remind import on_time
from vaultops.engine.report import PassReport
from vaultops.engine.run import dispatcher_for, run_job
from vaultops.engine.tell import TelegramSource
from vaultops.model import State
from vaultops.render.journal import DailyWriter
from vaultops.render.results import RunResult
from vaultops.run.dispatch import Dispatcher
from vaultops.store.inserts import MISSING, Insert
from vaultops.store.notes import NoteWriter
from vaultops.store.state import StateDB
from vaultops.vault import Vault

__all__ = ["Clock", "Pass", "PassReport", "job_failed", "local_now", "note_failed"]


def job_failed(claimed: Claimed, started: datetime, exc: Exception) -> RunResult:
    """The result of a job vaultops failed to run to its end (a fault of its own, not the agent's)."""
    why = (
        f"vaultops failed while running it ({described(exc)}); write `- retry: yes` to run it again, and "
        "report this"
    )
    return RunResult(State.ERROR, claimed.job.handler, started, 0.0, "", why)


def note_failed(rel: str, exc: Exception) -> str:
    """The one line said when handling a note failed: the rest of the pass goes on without it."""
    if isinstance(exc, OSError) and (disk := disk_error(exc)) is not None:
        exc = disk  # a full or read-only disk is not a fault of vaultops's: say which disk, and what to do
    if isinstance(exc, VaultopsError):  # it says what is wrong and what to do already
        return f"{rel}: {exc.message}"
    return (
        f"{rel}: vaultops failed while handling this note ({described(exc)}); the other notes go on, and "
        "it is tried again on the next pass; report this if it stays"
    )


class Pass:
    def __init__(
        self,
        vault: Vault,
        state: StateDB,
        clock: Clock = local_now,
        writer: NoteWriter | None = None,
        publisher: Publisher | None = None,
    ) -> None:
        self.ctx = Context(
            vault, state, clock, writer or NoteWriter(vault), publisher or Publisher.open(vault)
        )
        self.report = self.ctx.report
        self.daily = DailyWriter(vault, self.ctx.writer, self.report.warnings)

    # --- the steps ----------------------------------------------------------------------------

    def recover(self) -> None:
        """After a crash: results kept from jobs that finished are written; this machine's other
        unfinished claims become ``interrupted``."""
        place_kept(self.ctx, self.daily)
        recover(self.ctx)

    def claim(
        self,
        *,
        wait_settle: bool = False,
        slots: int | None = None,
        replies: bool = True,
        running_files: Sequence[tuple[str, ...]] = (),
        read_telegram: TelegramSource | None = None,
    ) -> list[Claimed]:
        """Read, decide and make the first write of each note; returns the jobs claimed.  ``replies``:
        first write the person's answers waiting in chat; ``read_telegram``: Telegram's, as the daemon's
        listener has read them (taken on every pass).  ``slots``: how many jobs may start now;
        ``running_files``: the files: of plan jobs still running (the daemon's)."""
        if replies or read_telegram is not None:
            take_replies(self.ctx, read_telegram, ask=replies)
        claimed: list[Claimed] = []
        tell_copies(self.ctx)  # sync tools' conflict copies are never run: said once each
        for rel in self.ctx.notes():
            left = None if slots is None else max(0, slots - len(claimed))
            try:
                claimed += self._claim_note(rel, wait_settle, left, claimed, running_files)
            except (UnsafePath, LockBusy, ConfigError):
                raise  # the vault's own trouble, not this note's: the caller says it
            except Exception as exc:  # one note's fault stops that note, never the pass
                self.ctx.warn(note_failed(rel, exc))
        return claimed

    def run_job(self, claimed: Claimed, dispatcher: Dispatcher) -> RunResult:
        """One claimed job to its end (safe to call from a worker thread); its result is kept on disk
        until it is recorded (``forget``)."""
        started = self.ctx.clock()
        try:
            result = run_job(self.ctx, claimed.job, dispatcher)
        except Exception as exc:  # one job's fault is its own: the others of the pass are run and recorded
            result = job_failed(claimed, started, exc)
        keep(self.ctx, Done(claimed, result))
        return result

    def record(self, done: list[Done]) -> list[Insert]:
        """Results into their notes; returns the inserts an editor saving over them would take away."""
        inserts = record(self.ctx, done, self.daily)
        for d in done:  # in the note now (or kept as a late result): nothing left to recover
            forget(self.ctx, d.claimed.job.claim)
        return inserts

    def close(self) -> PassReport:
        """Reminders and the digest that are due, peers gone quiet or back, the daily note, the dashboard,
        the commit (and push), then the notices, which link to lines now in the vault."""
        on_time(self.ctx, self.daily)
        watch_peers(self.ctx, self.daily)
        tell_problems(self.ctx)
        for rel in self.daily.flush(self.ctx.clock()):
            self.report.written.append(rel)
        show(self.ctx)
        self.ctx.commit()
        tell_incidents(self.ctx, self.daily, self.ctx.teller.deliver(self.ctx.clock().timestamp()))
        return self.report

    def dispatcher(self, claimed: list[Claimed], cancel: threading.Event | None = None) -> Dispatcher:
        return dispatcher_for(self.ctx, claimed, cancel)

    def run(self, wait_settle: bool = True, batch: int | None = None) -> PassReport:
        """A whole pass (``vaultops tick``).  ``batch``: claim at most this many agents' jobs; the report
        says ``more`` when it claimed that many, and the caller runs another pass."""
        self.ctx.pull()
        claimed = self.claim(wait_settle=wait_settle, slots=batch)
        self.report.more = batch is not None and len(claimed) >= batch
        if claimed:
            faults.reach("pass.start_jobs")
            dispatcher = self.dispatcher(claimed)
            with ThreadPoolExecutor(max_workers=self.ctx.config.limits.max_concurrent) as pool:
                results = list(pool.map(lambda c: self.run_job(c, dispatcher), claimed))
            self.record([Done(c, r) for c, r in zip(claimed, results, strict=True)])
            for left in self.ctx.unplaced:  # a pass has no later pass to try again: say so
                self.ctx.warn(
                    f"{left.insert.target.request_id}: not recorded, {MISSING}; its log is in "
                    ".vaultops/state/logs/"
                )
        return self.close()

    # --- one note -----------------------------------------------------------------------------

    def _claim_note(
        self,
        rel: str,
        wait_settle: bool,
        slots: int | None,
        taken: list[Claimed],
        running_files: Sequence[tuple[str, ...]],
    ) -> list[Claimed]:
        """With a remote, a claim that another machine beat to the remote is dropped, and the pass follows
        the remote and plans again."""
        ctx = self.ctx
        # a worker's empty files: any file; another plan's: none named, so it is not checked
        busy = [*running_files, *(c.job.busy for c in taken if c.job.busy or c.job.worker)]
        starting = [c.job.worker for c in taken if c.job.worker]  # claimed in this pass, not spawned yet
        soonest_before = self.report.next_settle
        for _ in range(CLAIM_ATTEMPTS):
            faults.reach("claim.note")
            note = ctx.read(rel)
            if note is not None and follow_workers(ctx, note, self.daily):
                note = ctx.read(rel)
            if note is None:
                return []
            facts = gathering.gather(ctx, note, busy_files=busy, starting=starting, slots=slots)
            agenda = gathering.agenda(ctx, note, facts)
            self.report.settling += [
                f"{s.request_id} (settling, {s.seconds:.1f} s to go)" for s in agenda.settling
            ]
            soonest = [s for s in (soonest_before, agenda.next_settle) if s is not None]
            self.report.next_settle = min(soonest, default=None)  # the soonest of every note's
            if wait_settle and agenda.settling:
                time.sleep(max(s.seconds for s in agenda.settling))
                self.report.settling.clear()
                wait_settle = False
                continue
            if not agenda.items:
                return []
            written = claim(ctx, note, list(agenda.items))
            if written is not None:
                for effect in written.effects:
                    try:  # the claims are made: a failure to tell of one never loses the jobs
                        apply(ctx, effect, self.daily)
                    except Exception as exc:
                        ctx.warn(note_failed(rel, exc))
                return written.claimed
            ctx.pull()
            if not ctx.publisher.through_remote:
                return []
        ctx.warn(f"the remote kept moving while claiming ({CLAIM_ATTEMPTS} tries); trying on the next pass")
        return []
