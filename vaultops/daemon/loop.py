"""``vaultops run``: the daemon.  Watches the vault, runs a pass when something changed, records heavy jobs
as they finish, and stops cleanly.

One thread owns the notes and git: the main loop.  Watch events and finished jobs reach it through a
queue; signals only set flags, which the loop reads at least every ``TICK`` seconds.  It holds the vault
lock for its whole life, so a ``tick`` on the same machine waits for it and then says who holds it.
"""

from __future__ import annotations

import os
import queue
import signal
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from types import FrameType

from vaultops.base import faults
from vaultops.base.confine import confine_state
from vaultops.base.errors import UnsafePath, VaultopsError
from vaultops.classifier.rules import warm
from vaultops.config import Config, SharedConfigError, load_config
from vaultops.daemon.events import watch
from vaultops.daemon.listen import ChatListener
from vaultops.daemon.log import DaemonLog
from vaultops.daemon.quiet import to_say
from vaultops.daemon.reload import FIX, WAITING, ConfigKeeper, fingerprint, keep_problem
from vaultops.decide.halt import Halted
from vaultops.engine.carried import Carried
from vaultops.engine.driver import Pass, PassReport, job_failed, local_now
from vaultops.engine.ports import Runner
from vaultops.engine.problems import tell_problems
from vaultops.engine.publish import Publisher
from vaultops.engine.record import Claimed, Done
from vaultops.hook import halt as gate
from vaultops.notify.heartbeat import Heartbeat
from vaultops.notify.telegram import Telegram
from vaultops.render.results import RunResult
from vaultops.run.stop import Stop, halted_reason
from vaultops.service.systemd import Notifier
from vaultops.service.units import STOP_MARGIN
from vaultops.store.lock import vault_lock
from vaultops.store.notes import NoteWriter, remove_stale_temps
from vaultops.store.state import StateDB
from vaultops.sync.git import waiting_with
from vaultops.vault import Vault

TICK = 0.5  # longest sleep of the loop: signals and timers are looked at this often
FETCH_AGE = 1.0  # seconds a fetch stays fresh enough for a pass that a save started
BACKOFF_FIRST = 1.0  # seconds before the first try again after a failed step; doubled per failure
BACKOFF_MAX = 60.0  # the longest wait between tries of a step that keeps failing


class Daemon:
    def __init__(
        self,
        vault: Vault,
        log: DaemonLog,
        notifier: Notifier | None = None,
        keeper: ConfigKeeper | None = None,
    ) -> None:
        self.vault = vault
        self.config = vault.config
        self.keeper = keeper or ConfigKeeper(vault.root, self.config)
        self.log = log
        self.notifier = notifier or Notifier()
        self.inbox: queue.Queue[str | Done] = queue.Queue()  # a watch event's reason, or a finished job
        self.cancel = Stop()  # set when running jobs must stop now: at shutdown, or by the fleet's halt
        self.stop_requests = 0
        self.stopping_at: float | None = None  # when shut_down began (monotonic)
        self.inflight: dict[str, Future[RunResult]] = {}
        self.inflight_files: dict[str, tuple[str, ...]] = {}  # claim -> a plan note's files: while it runs
        self.settle_at: float | None = None
        self.reconcile_at = 0.0
        self.pending: list[Done] = []  # finished jobs whose result is not recorded yet: tried until it is
        self.failing: dict[str, tuple[str, int]] = {}  # step -> the failure said of it, and tries in a row
        self.retry_at = 0.0  # no step before this (monotonic), after a failed one: the daemon never spins
        self.deferred = False  # something asked for a pass while the daemon waited to try again
        self.said: dict[str, float] = {}  # incident -> when it was last reported (monotonic): daemon.quiet
        self.carried = Carried()  # what the engine keeps from one pass to the next
        self.publisher: Publisher | None = None  # made once the vault lock is held
        self.fetch_at = float("inf")
        self.unsafe = ""  # what the last pass found leading out of the vault, said once
        self.listener: ChatListener | None = None
        self.heartbeat = self.heartbeat_for()
        self.retired: list[ThreadPoolExecutor] = []  # pools of an earlier config: their jobs run to the end

    def heartbeat_for(self) -> Heartbeat | None:
        url = self.config.daemon.heartbeat_url.get_secret_value()
        return Heartbeat(url, self.log.warn) if url else None

    # --- signals ------------------------------------------------------------------------------

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.stop_requests += 1
        if self.stop_requests > 1:
            self.cancel.set()  # a second signal: stop at once

    def while_git_waits(self) -> bool:
        """Called while a git process runs: the watchdog hears that the daemon is alive.  True gives up a
        fetch or push: when asked to stop during a pass, or, while stopping, at a second signal or when
        the unit's stop timeout nears."""
        self.notifier.watchdog()
        if self.stopping_at is None:
            return self.stop_requests > 0
        budget = self.config.daemon.grace + STOP_MARGIN / 2
        return self.stop_requests > 1 or time.monotonic() > self.stopping_at + budget

    def install_signals(self) -> None:
        # SIGHUP too: a closed terminal would otherwise end the daemon without stopping its jobs.
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    # --- the loop -----------------------------------------------------------------------------

    def run(self) -> int:
        state_dir = self.vault.state_dir
        with vault_lock(state_dir, wait=self.config.limits.lock_wait, command="vaultops run"):
            self.state = StateDB(state_dir / "state.db")
            keep_problem(self.state, self.keeper.problem)
            self.writer = NoteWriter(self.vault)
            self.publisher = Publisher.open(self.vault)
            self.publisher.batch = self.config.git.batch  # a tick commits all it draws: no later pass
            self.jobs = ThreadPoolExecutor(max_workers=self.config.limits.max_concurrent)
            self.watching = watch(self.vault, self.wake, self.config.daemon.debounce)
            self.listener = self.listen(state_dir / "state.db")
            waiting_with(self.while_git_waits)
            try:
                self.start_up()
                self.loop()
            finally:
                observer, handler = self.watching
                observer.stop()
                handler.close()
                if self.listener is not None:
                    self.listener.close()
                self.shut_down()
                if self.heartbeat is not None:
                    self.heartbeat.close()
                observer.join(timeout=5)
                self.state.close()
                waiting_with(None)
        return 0

    def wake(self, why: str) -> None:
        self.inbox.put(why)

    def listen(self, db: Path) -> ChatListener | None:
        """Telegram's answers are heard as they come (a long poll), when the bot can hear any."""
        telegram = self.config.notify.telegram
        if not telegram.listening or not telegram.poll_timeout:
            return None
        # its own connection to state.db: the thread only reads the offset, the main loop writes it
        listener = ChatListener(Telegram(telegram, StateDB(db), self.log), self.wake, self.log.warn)
        listener.start()
        return listener

    def start_up(self) -> None:
        for folder in {self.vault.resolve(self.vault.inbox_rel).parent, self.vault.root}:
            remove_stale_temps(folder)
        if not self.keeper.waiting:  # else once a config loads (``configured``)
            self.guarded(self.recover_pass)
        warm()
        self.log.info("ready", vault=str(self.vault.root), agent=self.vault.agent, host=self.vault.host)
        self.notifier.ready(f"watching {self.vault.root}")
        self.guarded(lambda: self.run_pass("start"))

    def recover_pass(self) -> None:
        first = self.new_pass()
        first.pull()
        first.recover()
        self.report(first.finish())

    def guarded(self, step: Callable[[], None], *, check: bool = True, name: str = "pass") -> None:
        """A pass, unless a folder vaultops writes to leads out of the vault: then the pass writes nothing
        and says why once (until it changes); the daemon keeps watching, and the next pass looks again."""
        try:
            if check:  # results of finished jobs are written whenever they can be
                confine_state(self.vault.root)
            step()
        except UnsafePath as exc:
            if exc.message != self.unsafe:
                self.log.warn(exc.message)
            self.unsafe = exc.message
            self.beat(False)
        except Exception as exc:  # a bug in one pass must not end the daemon: the monitor hears of it
            self.failed(name, exc)
        else:
            if check:  # only a step that looked can say the way out is gone
                self.unsafe = ""
            self.recovered(name)
            self.beat(True)

    def failed(self, step: str, exc: Exception) -> None:
        """A step (a pass, a record) failed: try again after a wait that doubles up to ``BACKOFF_MAX``, and
        say it once for as long as that step keeps failing the same way (another step working meanwhile
        does not end the incident)."""
        incident = type(exc).__name__
        said, tries = self.failing.get(step, ("", 0))
        self.failing[step] = (incident, tries + 1)
        wait = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** min(tries, 10))
        self.retry_at = time.monotonic() + wait
        if incident != said:
            # a VaultopsError (a full disk, a corrupt state.db) says what is wrong and what to do itself
            what = exc.message if isinstance(exc, VaultopsError) else repr(exc)
            self.log.warn(
                f"a {step} failed: {what}; the daemon goes on and tries again, waiting up to "
                f"{BACKOFF_MAX:.0f} s between tries (said once until it works again)"
            )
        else:
            self.log.info("failed again", step=step, tries=tries + 1, next_try_in=round(wait, 1))
        self.beat(False)

    def recovered(self, step: str) -> None:
        said = self.failing.pop(step, None)
        if said is not None:
            self.log.info("working again", step=step, failed_in_a_row=said[1])
        if not self.failing:
            self.retry_at = 0.0

    def beat(self, ok: bool) -> None:
        if self.heartbeat is not None:
            self.heartbeat.passed() if ok else self.heartbeat.failed()

    def loop(self) -> None:
        ping = self.notifier.watchdog_interval
        while not self.stop_requests:
            events, done = self.gather(self.sleep_for(ping))
            self.pending += done
            now = time.monotonic()
            if now < self.retry_at:  # a step failed: what came meanwhile waits for the next try
                self.deferred = self.deferred or bool(events)
                self.notifier.watchdog()
                continue
            if self.pending:
                self.guarded(self.record_pending, check=False, name="record")
            due = (self.settle_at is not None and now >= self.settle_at) or now >= self.reconcile_at
            if now >= self.fetch_at:  # requests pushed from other machines arrive by fetching
                due = True
                events.append("fetch")
            if (events or due or self.deferred) and time.monotonic() >= self.retry_at:
                self.deferred = False
                why = ", ".join(sorted(set(events)))[:200] if events else "timer"
                self.guarded(partial(self.run_pass, why))
            faults.reach("daemon.loop")
            self.notifier.watchdog()  # the loop came round: it is alive and making progress

    def sleep_for(self, ping: float | None) -> float:
        now = time.monotonic()
        wake = [self.reconcile_at, self.fetch_at, now + TICK]
        if self.retry_at > now:  # nothing is tried before then: waking earlier would only spin
            return min(self.retry_at - now, ping or TICK, TICK)
        if self.settle_at is not None:
            wake.append(self.settle_at)
        if ping:
            wake.append(now + ping)
        return max(0.0, min(wake) - now)

    def gather(self, timeout: float) -> tuple[list[str], list[Done]]:
        """Wait for something to happen, then take everything that has (a burst becomes one pass)."""
        try:
            items = [self.inbox.get(timeout=timeout)]
        except queue.Empty:
            return [], []
        debounce = self.config.daemon.debounce
        if debounce and isinstance(items[0], str):
            time.sleep(debounce)
        while True:
            try:
                items.append(self.inbox.get_nowait())
            except queue.Empty:
                break
        events = [item for item in items if isinstance(item, str)]
        return events, [item for item in items if isinstance(item, Done)]

    # --- passes -------------------------------------------------------------------------------

    def new_pass(self) -> Pass:
        # one publisher for the daemon's life: whatever a pass could not commit or push, a later one does
        return Pass(self.vault, self.state, local_now, self.writer, self.publisher, self.carried)

    def run_pass(self, why: str) -> None:
        """The driver's steps up to the claims; the jobs go to the pool, and each is recorded as it ends."""
        faults.reach("pass.start")
        if not self.configured():
            return
        p = self.new_pass()
        notify = self.config.notify
        chat = notify.telegram.listening or notify.zulip.listening  # answers read every [daemon] fetch
        publisher = p.ctx.publisher
        # a save here needs no fetch every time: a claim on a stale base is refused by the remote
        p.pull(max_age=0.0 if why == "fetch" else FETCH_AGE)
        if publisher.shared or chat:  # replies in chat, like commits on the remote, are fetched
            self.fetch_at = time.monotonic() + self.config.daemon.fetch
        if self.keeper.seen != fingerprint(self.vault.root):  # the pull brought a config: a pass on it next
            self.deferred = True
        p.mend(frozenset(self.inflight))
        self.hear(p, chat and ("fetch" in why or why == "timer" or "chat" in why))
        # without a remote, claims wait in the pool's queue: nothing else could take them meanwhile
        slots = self.config.limits.max_concurrent - len(self.inflight) if publisher.shared else None
        running = [f for f in self.inflight_files.values() if f]
        claimed = p.take(slots=slots, running_files=running)
        self.halting(p.halt)
        next_settle = p.report.next_settle
        self.settle_at = time.monotonic() + next_settle if next_settle else None
        if p.report.again:  # a request taken over: a light check runs again right away
            self.settle_at = time.monotonic()
        self.reconcile_at = time.monotonic() + self.config.daemon.reconcile
        if claimed:
            faults.reach("daemon.submit")
            dispatcher = p.dispatcher(claimed, self.cancel)
            for c in claimed:
                self.submit(p, c, dispatcher)
        self.report(p.finish(), why)

    def halting(self, halt: Halted | None) -> None:
        """The fleet's halt (``engine.halt``), as a pass saw it: every gate of this process denies from now,
        then each running job is stopped, its work kept (its worktree, its session), and recorded as
        interrupted saying why.  Lifted: new jobs may start again; none restarts by itself."""
        if halt is not None:
            gate.halt(halt.sentence())  # first: a call the agent makes while it is being stopped is denied
            if not self.cancel.is_set():
                self.log.info("halted", by=halt.by, reason=halt.reason, stopping=sorted(self.inflight))
                self.cancel.stop(halted_reason(halt.sentence()))
        elif gate.halted():
            gate.resume()
            if self.stopping_at is None and not self.stop_requests:
                self.cancel = Stop()  # the stopped jobs keep theirs; new ones get a fresh one
            self.log.info("resumed")

    # --- the config, read again when its files change -----------------------------------------

    def configured(self) -> bool:
        """The config read again if its files changed.  False while the daemon waits for a shared config
        that loads: it pulls (the fix comes from the remote) and tells the person, and runs nothing."""
        was_waiting = self.keeper.waiting
        self.reload()
        if self.keeper.waiting:
            p = self.new_pass()
            p.pull(max_age=self.config.daemon.fetch)
            self.reload()
            if self.keeper.waiting:
                tell_problems(p.ctx)
                self.report(p.tell(), "waiting for a config that loads")
                self.reconcile_at = time.monotonic() + self.config.daemon.reconcile
                self.fetch_at = time.monotonic() + self.config.daemon.fetch
                return False
        if was_waiting:
            self.recover_pass()  # skipped at start: it runs on the config that now loads
        return True

    def reload(self) -> None:
        checked = self.keeper.check()
        if checked.changed:
            keep_problem(self.state, checked.problem)
            if checked.problem:
                self.log.warn(checked.problem)
            else:
                self.log.info("config loads again")
        if checked.config is not None:
            self.apply_config(checked.config)

    def apply_config(self, config: Config) -> None:
        """Run on ``config`` from the next step on; what was built from the old one at start is built
        again where it changed (a running job keeps the settings it started with)."""
        old, self.config = self.config, config
        self.vault.reconfigure(config)
        self.writer = NoteWriter(self.vault)
        if config.git != old.git or self.publisher is None:
            self.publisher = Publisher.open(self.vault)
            self.publisher.batch = config.git.batch
        if (config.inbox.path, config.queue.folder, config.daemon.debounce) != (
            old.inbox.path,
            old.queue.folder,
            old.daemon.debounce,
        ):  # a moved inbox (or queue) is watched where it is now
            observer, handler = self.watching
            observer.stop()
            handler.close()
            observer.join(timeout=5)
            self.watching = watch(self.vault, self.wake, config.daemon.debounce)
        if config.limits.max_concurrent != old.limits.max_concurrent:
            self.retired.append(self.jobs)
            self.jobs = ThreadPoolExecutor(max_workers=config.limits.max_concurrent)
        if config.notify.telegram != old.notify.telegram:
            if self.listener is not None:
                self.listener.close()
            self.listener = self.listen(self.vault.state_dir / "state.db")
        if config.daemon.heartbeat_url != old.daemon.heartbeat_url:
            if self.heartbeat is not None:
                self.heartbeat.close()
            self.heartbeat = self.heartbeat_for()
        self.reconcile_at = 0.0  # a pass on it now
        self.log.info("config reloaded")

    def hear(self, p: Pass, ask: bool) -> None:
        """Telegram's answers come from the listener as soon as they arrive; ``ask``: the chat services are
        asked here too (on a fetch, a timer, or a wake from chat)."""
        listener = self.listener
        if listener is None:
            if ask:
                p.hear(ask=True)
            return
        try:
            p.hear(listener.take, ask=ask)
        finally:
            listener.done()

    def submit(self, p: Pass, claimed: Claimed, dispatcher: Runner) -> None:
        job = claimed.job
        future = self.jobs.submit(p.run_job, claimed, dispatcher)
        self.inflight[job.claim] = future
        self.inflight_files[job.claim] = job.busy
        self.log.info("started", request=job.request_id, claim=job.claim, profile=job.profile)

        def finished(f: Future[RunResult]) -> None:
            try:
                result = f.result()
            except Exception as exc:  # a bug in a job must not take the daemon down; the note says so
                result = job_failed(claimed, local_now(), exc)
            self.inbox.put(Done(claimed, result))

        future.add_done_callback(finished)

    def record_pending(self) -> None:
        """The results of finished jobs into their notes; a result that fails to record stays pending and
        is tried again (after the failure's wait), never dropped."""
        done, self.pending = self.pending, []
        try:
            self.record(done)
        except BaseException:
            self.pending = done + self.pending
            raise

    def record(self, done: list[Done]) -> None:
        p = self.new_pass()
        p.record(done)
        report = p.finish()
        for d in done:
            self.inflight.pop(d.claimed.job.claim, None)
            self.inflight_files.pop(d.claimed.job.claim, None)
        self.report(report, "finished")

    def report(self, report: PassReport, why: str = "") -> None:
        for rid in report.restored:
            self.log.info("restoring", request=rid)
        for rid, state, detail in report.outcomes:
            self.log.info("outcome", request=rid, state=state, detail=detail, why=why)
        for warning in to_say(report.warnings, self.said, time.monotonic()):  # once per incident
            self.log.warn(warning)
        if report.commit:
            self.log.info("committed", sha=report.commit)

    # --- stopping -----------------------------------------------------------------------------

    def shut_down(self) -> None:
        """Stop claiming; let running jobs finish within the grace period; then stop them (they record
        themselves as interrupted), write what they produced, commit."""
        self.stopping_at = time.monotonic()
        self.notifier.stopping("finishing running jobs" if self.inflight else "stopping")
        self.log.info("stopping", running=len(self.inflight))
        deadline = time.monotonic() + self.config.daemon.grace
        while self.inflight and not self.cancel.is_set():
            _, done = self.gather(min(TICK, max(0.0, deadline - time.monotonic())))
            self.pending += done
            if self.pending and time.monotonic() >= self.retry_at:
                self.guarded(self.record_pending, check=False, name="record")
            if time.monotonic() >= deadline:
                self.cancel.set()
        self.cancel.set()
        for pool in (*self.retired, self.jobs):
            pool.shutdown(wait=True, cancel_futures=True)
        while True:  # what the stopped jobs produced
            _, done = self.gather(0.0)
            self.pending += done
            if not self.pending:
                break
            self.guarded(self.record_pending, check=False, name="record")
            if self.pending:  # it cannot be recorded now: it is kept on disk, and the next start records it
                self.log.warn(
                    f"{len(self.pending)} result(s) could not be recorded before stopping; each one kept in "
                    ".vaultops/state/kept/ is recorded when vaultops starts again"
                )
                break
        self.guarded(self.commit_held, check=False, name="commit")
        self.log.info("stopped")

    def commit_held(self) -> None:
        """What the daemon held for a batch (the daily note, the dashboard) is committed before it stops."""
        if self.publisher is None or not self.publisher.uncommitted:
            return
        self.publisher.batch = 0.0
        p = self.new_pass()
        p.ctx.commit()
        self.report(p.report, "stopping")


def run_daemon(vault: Vault) -> int:
    log = DaemonLog(vault.state_dir / "logs" / "daemon.jsonl")
    try:
        keeper = ConfigKeeper(vault.root, vault.config)
    except SharedConfigError as exc:  # a typo pushed from elsewhere: wait for the fix, pulling
        problem = f"{exc.message}; {WAITING}; {FIX}"
        log.warn(problem)
        vault = Vault(vault.root, load_config(vault.root, shared=False))  # local.toml broken too: exit 2
        keeper = ConfigKeeper(vault.root, vault.config, problem)
    daemon = Daemon(vault, log, keeper=keeper)
    daemon.install_signals()
    log.info("starting", pid=os.getpid())
    try:
        return daemon.run()
    except VaultopsError as exc:  # a corrupt state.db at start, say: the log says it too, not only stderr
        log.warn(exc.message)
        raise
