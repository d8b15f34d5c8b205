"""The engine's driver: one pass over the vault, a request's whole life in named steps, read top to bottom.

    pull → hear → for each note: read → decide → claim → run → record → remind → publish → tell

``vaultops tick`` is ``Pass.run()``.  The daemon (``daemon.loop``) calls the same steps and keeps only
*when*: file events, timers, signals, and the pool its jobs run in (it records each job as it ends).
Between passes a process carries the lines it wrote and the results still looking for their request
(``engine.carried``), mended at the start of each daemon pass (``Pass.mend``).

Each step is a short method over a stage module of this package; the steps decide nothing themselves:
what to do with each request is the gate's decision (``decide.gate``, pure).  Git is touched at the steps
that say so, and nowhere else:

    pull     fetch, and follow the remote (engine.publish)
    hear     the person's answers from chat, committed (and pushed) before anything is claimed
    claim    the compare-and-swap push that makes each claim real, before any job starts
    record   results pushed before they are written to the note (or committed, then pushed)
    remind   a reminder's or digest's daily-note line pushed, as a claim is, before it is sent
    publish  the commit (and push) of everything the pass wrote
    tell     incidents' lines committed after the notices went out

One fault stays where it happened: one note's stops that note (``note_failed``), one job's that job
(``job_failed``), one request's that request (``decide.gate``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial

from vaultops.base import faults
from vaultops.base.errors import ConfigError, LockBusy, UnsafePath, VaultopsError, disk_error
from vaultops.base.visible import described
from vaultops.decide.gate import Agenda
from vaultops.decide.halt import Halted
from vaultops.engine import decide as deciding
from vaultops.engine.carried import UNPLACED_FOR, Carried
from vaultops.engine.claim import claim
from vaultops.engine.context import Clock, Context, local_now
from vaultops.engine.copies import tell_copies
from vaultops.engine.dashboard import show
from vaultops.engine.follow import follow_workers
from vaultops.engine.halt import look
from vaultops.engine.hear import take_replies
from vaultops.engine.incidents import tell_incidents
from vaultops.engine.journal import DailyWriter
from vaultops.engine.kept_results import forget, keep, place_kept
from vaultops.engine.peers import watch_peers
from vaultops.engine.ports import Runner, Sides
from vaultops.engine.problems import tell_problems
from vaultops.engine.publish import Publisher
from vaultops.engine.record import CLAIM_ATTEMPTS, Claimed, Done, apply, record
from vaultops.engine.recover import recover, release_unstarted
from vaultops.engine.relay import is_teller, relay
from vaultops.engine.remind import on_time
from vaultops.engine.report import PassReport
from vaultops.engine.run import dispatcher_for, run_job
from vaultops.engine.tell import TelegramSource
from vaultops.model import State
from vaultops.render.results import RunResult
from vaultops.scan.note import ParsedNote
from vaultops.store.inserts import MISSING, Insert
from vaultops.store.notes import NoteWriter
from vaultops.store.state import StateDB
from vaultops.vault import Vault

__all__ = ["STEPS", "Clock", "Pass", "PassReport", "job_failed", "local_now", "note_failed"]

# The steps of a request's life, in order: each is a method of ``Pass`` (docs/architecture.md lists them,
# and a test keeps the two equal).  ``run_job`` is the run step: ``run`` is the whole pass.
STEPS = ("pull", "hear", "read", "decide", "claim", "run_job", "record", "remind", "publish", "tell")


def job_failed(claimed: Claimed, started: datetime, exc: Exception) -> RunResult:
    """The result of a job vaultops failed to run to its end (a fault of its own, not the agent's)."""
    why = (
        f"vaultops failed while running it ({described(exc)}); write `- retry: yes` to run it again, and "
        "report this"
    )
    return RunResult(State.ERROR, claimed.job.profile, started, 0.0, "", why)


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
        carried: Carried | None = None,
        sides: Sides | None = None,
    ) -> None:
        """``writer``, ``publisher`` and ``sides``: the note writer, the publisher and the other side
        effects to use instead of the vault's own (``engine.memory.MemoryVault`` gives the twins')."""
        self.ctx = Context(
            vault, state, clock, writer or NoteWriter(vault), publisher or Publisher.open(vault),
            sides=sides or Sides(),
        )  # fmt: skip
        self.report = self.ctx.report
        self.ctx.teller.choose = partial(is_teller, self.ctx)  # one machine of a fleet tells of requests
        self.daily = DailyWriter(vault, self.ctx.writer, self.report.warnings)
        self.carried = carried or Carried()
        self.halt: Halted | None = None  # the fleet's halt, as ``take`` last saw it (``engine.halt``)

    # --- a whole pass: ``vaultops tick`` --------------------------------------------------------

    def run(self, wait_settle: bool = True, batch: int | None = None) -> PassReport:
        """Every step once.  ``batch``: claim at most this many agents' jobs; the report says ``more`` when
        it claimed that many, and the caller runs another pass."""
        self.pull()
        self.hear()
        claimed = self.take(wait_settle=wait_settle, slots=batch)  # each note: read → decide → claim
        self.report.more = batch is not None and len(claimed) >= batch
        if claimed:
            faults.reach("pass.start_jobs")
            dispatcher = self.dispatcher(claimed)
            with ThreadPoolExecutor(max_workers=self.ctx.config.limits.max_concurrent) as pool:
                results = list(pool.map(lambda c: self.run_job(c, dispatcher), claimed))
            self.record([Done(c, r) for c, r in zip(claimed, results, strict=True)])
            for _, left in self.carried.unplaced:  # a tick has no later pass to try again: say so
                self.ctx.warn(
                    f"{left.insert.target.request_id}: not recorded, {MISSING}; its log is in "
                    ".vaultops/state/logs/"
                )
        return self.finish()

    def finish(self) -> PassReport:
        """The end of every pass, whatever it did before: remind → publish → tell."""
        self.remind()
        self.publish()
        return self.tell()

    # --- the steps, in order --------------------------------------------------------------------

    def pull(self, *, max_age: float = 0.0) -> None:
        """Git: fetch and follow the remote (at most every ``max_age`` seconds), pushing what this clone
        has that the remote has not."""
        self.ctx.publisher.pull(self.report.warnings, max_age=max_age)

    def hear(self, read_telegram: TelegramSource | None = None, *, ask: bool = True) -> None:
        """The person's answers in chat become ``- decision:`` lines under their requests; git: committed
        (and pushed) before anything is claimed.  ``read_telegram``: Telegram's updates as the daemon's
        listener read them; ``ask``: ask the chat services here."""
        take_replies(self.ctx, read_telegram, ask=ask)

    def take(
        self,
        *,
        wait_settle: bool = False,
        slots: int | None = None,
        running_files: Sequence[tuple[str, ...]] = (),
    ) -> list[Claimed]:
        """read → decide → claim, note by note; returns the jobs claimed.  ``slots``: how many jobs may start
        now; ``running_files``: the files: of plan jobs still running (the daemon's)."""
        self.halt = look(self.ctx)  # the fleet's kill switch: while it stands, nothing is claimed
        if self.halt is not None:
            return []
        claimed: list[Claimed] = []
        tell_copies(self.ctx)  # sync tools' conflict copies are never run: said once each
        for rel in self.ctx.notes():
            left = None if slots is None else max(0, slots - len(claimed))
            try:
                claimed += self._take_note(rel, wait_settle, left, claimed, running_files)
            except (UnsafePath, LockBusy, ConfigError):
                raise  # the vault's own trouble, not this note's: the caller says it
            except Exception as exc:  # one note's fault stops that note, never the pass
                self.ctx.warn(note_failed(rel, exc))
        return claimed

    def read(self, rel: str) -> ParsedNote | None:
        """A note as its answers stand (forged ones set aside), with its workers' news written in first;
        None when it cannot be worked on now (the report says why)."""
        note = self.ctx.read(rel)
        if note is not None and follow_workers(self.ctx, note, self.daily):
            note = self.ctx.read(rel)
        return note

    def decide(
        self,
        note: ParsedNote,
        busy: list[tuple[str, ...]],
        starting: list[str],
        slots: int | None,
    ) -> Agenda:
        """The facts the gate reads (state.db, the clock, what runs), then the gate's decision for each
        request of the note (``decide.gate.agenda_for``, pure)."""
        facts = deciding.gather(self.ctx, note, busy_files=busy, starting=starting, slots=slots)
        return deciding.agenda(self.ctx, note, facts)

    def claim(self, note: ParsedNote, agenda: Agenda) -> list[Claimed] | None:
        """The note's first write (claims, errors, escalations, light results); git: with a remote, the
        compare-and-swap push that makes the claims real.  None: the remote moved first (nothing written)."""
        written = claim(self.ctx, note, list(agenda.items))
        if written is None:
            return None
        for effect in written.effects:
            try:  # the claims are made: a failure to tell of one never loses the jobs
                apply(self.ctx, effect, self.daily)
            except Exception as exc:
                self.ctx.warn(note_failed(note.rel, exc))
        for c in written.claimed:  # put back if an editor's save wipes them (``mend``)
            self.carried.lines.claimed(c.job.file, c.item.target, c.job.claim, c.lines)
        return written.claimed

    def run_job(self, claimed: Claimed, dispatcher: Runner) -> RunResult:
        """One claimed job to its end (safe to call from a worker thread); its result is kept on disk
        until it is recorded (``forget``)."""
        started = self.ctx.clock()
        try:
            result = run_job(self.ctx, claimed.job, dispatcher)
        except Exception as exc:  # one job's fault is its own: the others of the pass are run and recorded
            result = job_failed(claimed, started, exc)
        keep(self.ctx, Done(claimed, result))
        return result

    def record(self, done: list[Done]) -> None:
        """Results into their notes, each only where its claim still holds, and into the daily note; git:
        with a remote, pushed before they are written.  A result whose request is missing (caught
        mid-save) is carried to the next pass."""
        for ins in record(self.ctx, done, self.daily):
            self.carried.lines.recorded(ins)  # an editor saving over it gets it back
        for d in done:  # in the note now (or kept as a late result): nothing left to recover
            forget(self.ctx, d.claimed.job.claim)
        now = time.monotonic()
        self.carried.unplaced += [(now, left) for left in self.ctx.unplaced]
        self.ctx.unplaced.clear()

    def remind(self) -> None:
        """Reminders and the digest that are due, peers gone quiet or back, remote and disk problems; git:
        each reminder's daily-note line pushed, as a claim is, before it is sent."""
        on_time(self.ctx, self.daily)
        watch_peers(self.ctx, self.daily)
        relay(self.ctx)
        tell_problems(self.ctx)

    def publish(self) -> None:
        """The daily note, this machine's note and the dashboard; git: the commit (and push) of every path
        the pass wrote, and of what earlier ones could not commit."""
        drawn = self.daily.flush(self.ctx.clock())
        self.report.written += drawn
        show(self.ctx)
        self.ctx.commit(drawn)

    def tell(self) -> PassReport:
        """The notices, after the commit, so that they link to lines now in the vault; a channel failing or
        back is written as an incident (git: committed)."""
        tell_incidents(self.ctx, self.daily, self.ctx.teller.deliver(self.ctx.clock().timestamp()))
        return self.report

    # --- before the steps: after a crash, and between a process's passes -------------------------

    def recover(self) -> None:
        """At start: results kept from jobs that finished are written; this machine's other unfinished
        claims become ``interrupted``."""
        place_kept(self.ctx, self.daily)
        recover(self.ctx)

    def mend(self, running: frozenset[str]) -> None:
        """Each pass of a process that lives on (the daemon), before deciding anything: its lines an
        editor's save wiped are put back, results still looking for their request are placed, and its
        claims that no job runs (``running``: those that do) are closed as never started."""
        held = self._restore(running)
        self._place_unplaced(held)
        release_unstarted(self.ctx, running | self.carried.waiting() | held)

    def dispatcher(self, claimed: list[Claimed], cancel: threading.Event | None = None) -> Runner:
        return dispatcher_for(self.ctx, claimed, cancel)

    # --- inside the steps -----------------------------------------------------------------------

    def _take_note(
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
            note = self.read(rel)
            if note is None:
                return []
            agenda = self.decide(note, busy, starting, slots)
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
            claimed = self.claim(note, agenda)
            if claimed is not None:
                return claimed
            ctx.pull()
            if not ctx.publisher.through_remote:
                return []
        ctx.warn(f"the remote kept moving while claiming ({CLAIM_ATTEMPTS} tries); trying on the next pass")
        return []

    def _restore(self, running: frozenset[str]) -> frozenset[str]:
        """An editor saved over this process's lines (in the inbox or a plan note): put them back.
        Returns the claims whose lines could not be put back now (the note kept changing): the memory
        still has them and the next pass tries again; meanwhile nothing else may act on those claims (a
        result written alone over a wiped claim would be a late result, a claim without its result
        would be closed as never started)."""
        memory = self.carried.lines
        held: set[str] = set()
        for rel in memory.notes():
            note = self.ctx.read(rel)
            back = memory.restorations(note, set(running)) if note is not None else []
            if not back:
                continue
            self.report.restored += sorted({ins.target.request_id for ins in back})
            unplaced = len(self.ctx.unplaced)
            _, applied = self.ctx.write(rel, back)
            del self.ctx.unplaced[unplaced:]  # the memory holds these lines: never a second copy
            landed = {id(ins) for ins in applied.landed}
            missed = {ins.target for ins in back if id(ins) not in landed}
            held |= memory.claims_of(rel, missed)
        return frozenset(held)

    def _place_unplaced(self, held: frozenset[str] = frozenset()) -> None:
        """Results whose request was missing from the note as read: tried again, and given up (said) once
        one stays unplaced for ``UNPLACED_FOR`` (its output is still in the run's log).  ``held``: claims
        whose lines wait to be put back whole: their results wait with them."""
        waiting = [(t, left) for t, left in self.carried.unplaced if left.insert.claim not in held]
        self.carried.unplaced = [(t, left) for t, left in self.carried.unplaced if left.insert.claim in held]
        if not waiting:
            return
        by_note: dict[str, list[Insert]] = {}
        for _, left in waiting:
            by_note.setdefault(left.rel, []).append(left.insert)
        for rel, inserts in by_note.items():
            self.ctx.write(rel, inserts)
        first_seen = {id(left.insert): t for t, left in waiting}
        now = time.monotonic()
        for left in self.ctx.unplaced:
            started = first_seen.get(id(left.insert), now)
            if now - started > UNPLACED_FOR:
                rid = left.insert.target.request_id
                self.ctx.warn(f"{rid}: result not recorded, its request is gone from {left.rel}")
            else:
                self.carried.unplaced.append((started, left))
        self.ctx.unplaced.clear()
