"""One heavy job to its end: the first healthy profile of its route, then retries and fallbacks by the
retry table, every attempt recorded in state.db.  I/O edge (it runs processes and sleeps)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from vaultops.base.claude_code import stream_session
from vaultops.model import State
from vaultops.render.results import RunResult
from vaultops.run import health as health_check
from vaultops.run.carry import Carry
from vaultops.run.health import HealthReport
from vaultops.run.jobs import Job, own_timeout, run_attempt, workdir_for, workdir_of
from vaultops.run.outcome import Attempt, Failure, budget_ran_out
from vaultops.run.process import process_start_time
from vaultops.run.prompt import PromptInput, build_prompt
from vaultops.run.retry import Step, next_step, summary
from vaultops.run.stop import stopped_why
from vaultops.store.state import StateDB
from vaultops.vault import Vault


@dataclass(frozen=True, slots=True)
class Dispatched:
    result: RunResult
    attempts: tuple[Attempt, ...]


def review_note(feedback: str) -> str:
    """What the person asked to change, after the request's text (a run that cannot resume its session)."""
    return f"\n\nThe person reviewed the last run and asks: {feedback}" if feedback else ""


class Dispatcher:
    """Shared by the jobs of one pass: state.db access is serialised, health answers are reused."""

    def __init__(
        self,
        vault: Vault,
        state: StateDB,
        notes: Sequence[str],
        sleep: Callable[[float], None] = time.sleep,
        cancel: threading.Event | None = None,
    ) -> None:
        self.vault = vault
        self.state = state
        self.notes = notes
        self.sleep = sleep
        self.cancel = cancel  # set when the daemon shuts down: running attempts stop, none starts
        self.lock = threading.Lock()
        self._health: dict[str, HealthReport] = {}

    def health(self, name: str) -> HealthReport:
        with self.lock:
            if name not in self._health:
                profile = self.vault.config.profiles[name]
                cwd = workdir_of(self.vault, profile)
                cwd = cwd if cwd.is_dir() else self.vault.root
                settings = self.vault.config.health
                self._health[name] = health_check.check(name, profile, settings, self.state, cwd)
            return self._health[name]

    def prompt(self, job: Job, name: str, attempts: Sequence[Attempt]) -> str:
        profile = self.vault.config.profiles[name]
        if job.waited and job.resume and profile.output == "claude-json" and not attempts:
            return (  # vaultops.engine.quota: it stopped at its account's usage limit, now reset
                f"Your work on request {job.request_id} stopped at {job.waited}. Go on with it from where "
                "you stopped."
            )
        if job.feedback and job.resume and profile.output == "claude-json" and not attempts:
            return (
                f"The person reviewed your work on request {job.request_id} and asks for changes: "
                f"{job.feedback}\nMake them in the same worktree, commit them, and say what you changed."
            ) + self.carry(job).told()
        if job.resume and profile.output == "claude-json" and not attempts:
            return (
                f"The person approved what you asked for: {job.resumed_for}. It may run once now, exactly "
                f"as you asked it. Go on with request {job.request_id} from where you stopped."
            )
        given = PromptInput(
            request_id=job.request_id,
            file=job.file,
            title=job.title,
            type=job.type,
            text=job.text + review_note(job.feedback),
            workdir=str(workdir_for(self.vault, job, profile)),
            branch=job.branch if job.worktree else "",
            tools=job.tools if job.tools is not None else profile.tools,
            timeout=own_timeout(job, profile),
            earlier=job.earlier,
            errors=tuple(f"{a.profile}: {a.detail}" for a in attempts if not a.ok),
            last_attempt=self.carry(job).note(),
        )
        return build_prompt(given, self.notes, profile.prompt_template)

    def run(self, job: Job, started: datetime) -> Dispatched:
        route = job.route or (job.profile,)
        offline = {name: self.health(name) for name in route}
        offline = {name: report for name, report in offline.items() if not report.usable}
        first = next((name for name in route if name not in offline), "")
        if not first:
            why = "; ".join(f"{name}: {report.detail}" for name, report in offline.items())
            reason = f"no executor available ({why})"
            return Dispatched(RunResult(State.ESCALATED, route[0], started, 0.0, "", reason), ())
        carry = self.carry(job)  # the request's earlier attempts: a streak of one failure, its limits spent
        if refused := carry.refused(
            started, first, job.limits.within(self.vault.config.profiles[first].limits)
        ):
            return Dispatched(refused, ())
        attempts: list[Attempt] = []
        logs: list[str] = []
        name = first
        step = Step("done")
        ran_out = ""  # the job's budget ran out before the retry table was done with it
        cut = False  # the last attempt's limit was what the budget had left, not its own timeout
        deadline = time.monotonic() + job.budget if job.budget else None
        while True:
            left = deadline - time.monotonic() if deadline is not None else None
            if job.budget and left is not None and left <= 0 and attempts:
                last = attempts[-1]
                if cut and last.failure is Failure.TIMEOUT:  # the budget stopped it, and its detail says so
                    ran_out = last.detail
                else:
                    ran_out = (
                        f"{budget_ran_out(job.budget, job.budget - left)}; its last attempt: {last.detail}"
                    )
                step = Step("give-up", name, reason=ran_out)
                break
            attempt_no = len(attempts) + 1
            with self.lock:
                run_id = self.state.run_started(
                    job.file, job.request_id, job.claim, attempt_no, name, self.vault.host, None
                )
            profile = self.vault.config.profiles[name]

            def started_job(pid: int, run_id: int = run_id) -> None:
                with self.lock:
                    self.state.job_started(run_id, pid, process_start_time(pid))

            prompt = self.prompt(job, name, attempts)
            cut = left is not None and left < own_timeout(job, profile)
            own = replace(job, limits=carry.limits(job.limits.within(profile.limits)))  # what is left of them
            attempt, log = run_attempt(
                own, name, profile, self.vault, prompt, attempt_no, started_job, self.cancel, left, job.budget
            )
            outcome = attempt.failure.value if attempt.failure else "done"
            with self.lock:
                self.state.run_ended(
                    run_id, outcome, attempt.exit_code, attempt.duration, log, attempt.cost_usd
                )
            attempts.append(attempt)
            logs.append(log)
            if carry.ran(attempt):  # the same failure once too often, or the request's limits are spent
                break
            step = self._next(attempts, route, offline)
            if step.action == "retry":
                if self.cancel is not None and self.cancel.wait(step.delay):
                    break
                if self.cancel is None:
                    self.sleep(step.delay)
            elif step.action == "fallback":
                name = step.profile
            else:
                break
        result = self._result(attempts, logs, step, started, ran_out)
        return Dispatched(carry.ended(result), tuple(attempts))

    def carry(self, job: Job) -> Carry:
        return Carry(self.state, self.lock, job, self.vault.config.retry.same_failure_limit)

    def _next(
        self, attempts: Sequence[Attempt], route: Sequence[str], offline: dict[str, HealthReport]
    ) -> Step:
        delays = self.vault.config.retry.rate_limit_delays
        while True:
            on_quota = self.vault.config.limits.on_quota
            step = next_step(attempts, route, offline=offline, delays=delays, on_quota=on_quota)
            if step.action != "fallback":
                return step
            report = self.health(step.profile)
            if report.usable:
                return step
            offline[step.profile] = report

    def _result(
        self, attempts: Sequence[Attempt], logs: Sequence[str], step: Step, started: datetime, ran_out: str
    ) -> RunResult:
        last = attempts[-1]
        duration = (datetime.now(started.tzinfo) - started).total_seconds()
        if last.failure is Failure.CANCELLED or (
            self.cancel is not None and self.cancel.is_set() and not last.ok
        ):
            state, reason = State.INTERRUPTED, stopped_why(self.cancel)
        elif step.action == "done":
            state, reason = State.DONE, ""
        elif step.action == "escalate":
            state, reason = State.ESCALATED, f"{step.reason}; check its credentials"
        elif step.action == "wait":  # its account's usage limit: vaultops.engine.quota says until when
            state, reason = State.WAITING, step.reason
        else:
            state, reason = State.ERROR, ran_out or last.detail
            if len(attempts) > 1:
                reason = f"{reason} (after {len(attempts)} attempts)"
        costs = [a.cost_usd for a in attempts if a.cost_usd is not None]
        return RunResult(
            state,
            last.profile,
            started,
            duration,
            last.text,
            reason,
            last.exit_code,
            logs[-1],
            attempts=summary(attempts) if len(attempts) > 1 else "",
            cost_usd=sum(costs) if costs else None,
            turns=last.turns,
            # a run the halt or a shutdown stopped printed no result: its session is the one it announced
            session=last.session_id or (stream_session(last.text) if state is State.INTERRUPTED else None),
            denials=last.denials,
            incident=last.detail if last.failure is Failure.UNGATED else "",
        )
