"""Review before done: a code job whose agent says it is done has its checks run in its worktree, each
under the policy gate and a time limit, and waits in ``review`` with its diffstat, its commits and each
check's exit status and output, failing checks first.  The person answers ``- decision: accept`` (done)
or ``- retry: yes — what to change``, which goes on in the same Claude Code session when this machine ran
it (vaultops.engine.claim).  "Done" that was not done is what the person reviews, not what they get.
"""

from __future__ import annotations

import os
import shlex
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from vaultops import lines as fmt
from vaultops.base.redact import redact, secret_values
from vaultops.base.words import counted
from vaultops.config import check_environ
from vaultops.engine.context import Context
from vaultops.hook.answer import GateError, load_table, scope_for
from vaultops.hook.fence import check_fence_problem, fence_for, fenced_argv
from vaultops.hook.job import GateJob
from vaultops.model import State
from vaultops.policy.decide import decide_call
from vaultops.policy.tools import ToolCall, call_actions
from vaultops.render.results import RunResult
from vaultops.run.carry import Carry, FailedCheck
from vaultops.run.jobs import Job
from vaultops.run.process import process_start_time, run_process
from vaultops.run.worktrees import Work, Worktree, WorktreeError, work_of

TAIL = 15  # lines of a check's output shown in the note (the whole of it is in the run's log)
_TEST_ACTIONS = frozenset({"run_tests", "read"})


@dataclass(frozen=True, slots=True)
class Check:
    argv: tuple[str, ...]
    exit_code: int | None  # None: it did not run, or did not end
    tail: str = ""
    why: str = ""  # why it did not run, or did not end

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    @property
    def shown(self) -> str:
        return shlex.join(self.argv)

    @property
    def verdict(self) -> str:
        return f"exit {self.exit_code}" if self.exit_code is not None else self.why


def session_key(file: str, request_id: str) -> str:
    """Where state.db keeps the session of a job's last run, for a review's feedback to go on in."""
    return f"session:{file}:{request_id}"


def checks_time(ctx: Context, job: Job) -> float:
    """The longest a job's checks may take together: each its profile's timeout.  Its claim's lease
    covers them, so that no other machine takes the job over while they run."""
    return len(job.checks) * _check_timeout(ctx, job) if job.review else 0.0


def _check_timeout(ctx: Context, job: Job) -> float:
    return ctx.config.profiles[job.profile].timeout if job.profile in ctx.config.profiles else 600.0


def reviewed(
    ctx: Context, job: Job, result: RunResult, lock: threading.Lock, cancel: threading.Event | None = None
) -> RunResult:
    """A finished code job that asks for review, after its checks; any other result as it is.  ``lock``
    guards state.db, which the jobs of a pass share; ``cancel`` (the daemon shutting down) stops them."""
    if not job.review or result.state is not State.DONE or not job.worktree:
        return result
    if result.session:
        with lock:
            ctx.state.set(session_key(job.file, job.request_id), result.session)
    tree = Worktree(Path(job.worktree), job.branch, job.base)
    timeout = _check_timeout(ctx, job)
    deadline = time.monotonic() + checks_time(ctx, job)
    checks = []
    for argv in job.checks:
        left = min(timeout, deadline - time.monotonic())
        if left <= 0 or (cancel is not None and cancel.is_set()):
            checks.append(Check(argv, None, why="not run: the job's time for its checks ran out"))
            continue
        checks.append(run_one(ctx, job, tree, argv, left, cancel, lock))
    # the next attempt (a retry with the person's feedback) is told which checks failed and how they ended
    failed = [FailedCheck(c.shown, c.verdict, c.tail) for c in checks if not c.passed]
    Carry(ctx.state, lock, job, ctx.config.retry.same_failure_limit).checked(failed, len(checks))
    try:
        work: Work | str = work_of(tree)
    except WorktreeError as exc:
        work = str(exc)
    output = report(checks, work, tree, result.output)
    return replace(result, state=State.REVIEW, output=output, reason=summary(checks, work, tree))


def run_one(
    ctx: Context,
    job: Job,
    tree: Worktree,
    argv: tuple[str, ...],
    timeout: float,
    cancel: threading.Event | None = None,
    lock: threading.Lock | None = None,
) -> Check:
    """One check in the worktree, if the gate lets it run there (a check is a command like any other)."""
    if "=" in argv[0]:  # the gate would read `A=b/x` as an assignment; run, it is the program `./A=b/x`
        return Check(argv, None, why="not run: a program whose name holds `=` is not what the gate judges")
    guard = GateJob(ctx.vault.root, str(tree.path), job.request_id, job.claim, None, job.files, job.branch)
    call = ToolCall("Bash", {"command": shlex.join(argv)}, str(tree.path))
    scope = scope_for(guard, str(tree.path), os.environ)
    try:
        verdict = decide_call(call, scope, load_table(ctx.vault.root))
    except GateError as exc:
        return Check(argv, None, why=f"not run: {exc}")
    if verdict.kind != "approve":
        return Check(argv, None, why=f"not run: the gate says {verdict.kind} ({verdict.reason})")
    profile = ctx.config.profiles.get(job.profile)
    added = profile is None or argv not in profile.checks  # the request's own: tests, and nothing else
    if added and (other := [a for a in call_actions(call, scope) if a.name not in _TEST_ACTIONS]):
        why = f"a check a request adds may only run tests, and {other[0].detail} ({other[0].name})"
        return Check(argv, None, why=f"not run: {why}")
    # the agent wrote the code a check runs (its tests, a conftest, a Makefile): in the job's fence, as its
    # own commands were, with no way to commit, and the check is not run where there can be no fence
    if problem := check_fence_problem():
        return Check(argv, None, why=f"not run: the sandbox for checks cannot start: {problem}")
    writable = profile.writable if profile is not None else ()
    fence = fence_for(tree.path, ctx.vault.root, branch=job.branch, writable=writable, commits=False)
    secrets = secret_values(os.environ)
    env = check_environ(os.environ)
    guard_db = lock or threading.Lock()
    # recorded as a run (attempt 0) with its process: a daemon killed mid-check stops it when it starts
    # again (vaultops.engine.recover), so a retry never runs the job's tests twice in one worktree
    with guard_db:
        run_id = ctx.state.run_started(job.file, job.request_id, job.claim, 0, "check", ctx.vault.host, None)

    def started(pid: int) -> None:
        with guard_db:
            ctx.state.job_started(run_id, pid, process_start_time(pid))

    with tempfile.TemporaryDirectory(prefix="vaultops-check-") as tmp:
        fenced = fenced_argv(fence, argv, Path(tmp))
        proc = run_process(
            fenced,
            cwd=tree.path,
            env=env,
            timeout=timeout,
            extra_secrets=secrets,
            cancel=cancel,
            on_start=started,
        )
    with guard_db:
        outcome = "done" if proc.exit_code == 0 else "error"
        ctx.state.run_ended(run_id, outcome, proc.exit_code, proc.duration)
    output = redact("\n".join(filter(None, (proc.stdout.rstrip(), proc.stderr.rstrip()))), secrets)
    tail = "\n".join(output.splitlines()[-TAIL:])
    if proc.start_error:
        return Check(argv, None, tail, proc.start_error)
    if proc.cancelled:
        return Check(argv, None, tail, "stopped when vaultops shut down")
    if proc.timed_out:
        return Check(argv, None, tail, f"timed out after {timeout:g} s")
    return Check(argv, proc.exit_code, tail)


def summary(checks: Sequence[Check], work: Work | str, tree: Worktree) -> str:
    """The status line's reason: failing checks first, then what the branch holds, then the answers."""
    failed = [c for c in checks if not c.passed]
    if failed:
        said = "; ".join(f"{c.shown} ({c.verdict})" for c in failed)
        head = f"review: {len(failed)} of {counted(len(checks), 'check')} failed: {said}"
    else:
        head = f"review: {counted(len(checks), 'check')} passed" if checks else "review: no checks configured"
    commits = f"{counted(len(work.commits), 'commit')} on {tree.branch}" if isinstance(work, Work) else work
    return f"{head}; {commits}; {fmt.REVIEW_ANSWERS}"


def report(checks: Sequence[Check], work: Work | str, tree: Worktree, said: str) -> str:
    """What the result block shows, failing checks first: each check with its exit status and the end of
    its output, the branch's commits and diffstat, changes not committed, and the agent's last words."""
    out: list[str] = []
    ordered = sorted(checks, key=lambda c: c.passed)  # failed first, each group in the order configured
    failed = sum(1 for c in checks if not c.passed)
    total = counted(len(checks), "check")
    out.append(f"Checks: {failed} of {total} failed" if failed else f"Checks: {total} passed")
    for c in ordered:
        out.append(f"{'PASS' if c.passed else 'FAIL'} {c.shown} — {c.verdict}")
        out += [f"    {line}" for line in c.tail.splitlines()]
    if isinstance(work, str):
        out += ["", f"The branch could not be read: {work}"]
    else:
        out += ["", f"Branch {tree.branch}, from {tree.base[:12]}: {counted(len(work.commits), 'commit')}"]
        out += [f"    {c}" for c in work.commits] or ["    (no commits: the work is not committed)"]
        out += ["", "Diffstat:", *(f"    {line}" for line in work.diffstat.splitlines() or ["(no changes)"])]
        if work.uncommitted:
            out += ["", f"Not committed ({len(work.uncommitted)}):", *(f"    {u}" for u in work.uncommitted)]
    if said.strip():
        out += ["", "The agent said:", said.rstrip()]
    return "\n".join(out)
