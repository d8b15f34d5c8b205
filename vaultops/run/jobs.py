"""Running one request: a built-in read-only check, or one attempt of an executor profile.  I/O edge."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from vaultops.base.argv import fill_argv
from vaultops.base.claude_code import is_claude, streaming_argv
from vaultops.base.confine import make_dirs, write_text
from vaultops.base.redact import redact, secret_values
from vaultops.classifier import targets
from vaultops.config import ProfileConfig, agent_environ
from vaultops.decide.files import in_repo
from vaultops.decide.route import DIRECT
from vaultops.hook.claude import GateSetupError, gated_command
from vaultops.hook.heard import Heard
from vaultops.hook.job import GateJob
from vaultops.model import Limits, State
from vaultops.render.results import RunResult
from vaultops.run import builtins
from vaultops.run.meter import Meter
from vaultops.run.outcome import Allowed, Attempt, Failure, read_attempt, redacted
from vaultops.run.process import ProcessResult, run_process
from vaultops.run.proof import Proof, unjudged
from vaultops.run.worktrees import WorktreeError, open_worktree, other_refs, put_back_refs
from vaultops.scan.plan import workdir_path
from vaultops.vault import Vault, inside_any

ALLOWED_TOOLS_FLAG = "--allowedTools"


# The kinds of work a claimed request becomes: a built-in read-only check run in process, one agent run
# of an executor profile, a plan note's fan-out (one agent run per task), or a long-lived worker session.
WorkKind = Literal["builtin", "agent", "fanout", "worker"]


@dataclass(frozen=True, slots=True)
class Job:
    file: str
    request_id: str
    title: str
    text: str
    type: str
    claim: str
    profile: str  # "direct", or the first profile of the route
    timeout: float | None = None
    route: tuple[str, ...] = ()
    tools: tuple[str, ...] | None = None  # narrowed by the request
    earlier: tuple[str, ...] = ()  # what earlier passes said of this request
    budget: float | None = None  # seconds all its attempts together may take (its claim's lease is longer)
    approved: bool = False  # the person approved it after an escalation
    lasting: bool = False  # ...for the rest of this job: the calls it asked for may run again until it ends
    resume: str = ""  # a Claude Code session to go on with (the person approved what it asked for)
    resumed_for: str = ""  # what the person approved, as they read it
    waited: str = ""  # what it waited for before going on in its session ``resume``: the account's quota
    workdir: str = ""  # a plan note's own folder, instead of its profile's (checked against allowed roots)
    tasks: tuple[str, ...] = ()  # a plan note's fan-out: one run per task
    done_tasks: frozenset[int] = frozenset()  # tasks (from 1) an earlier run finished: a retry skips them
    worker: str = ""  # a plan note run by a long-lived worker of this name (vaultops.engine.follow)
    files: tuple[str, ...] = ()  # a plan note's files: what its worker may touch
    # what one agent run may spend, within its profile's (vaultops.run.meter)
    limits: Limits = field(default_factory=Limits)
    repo: str = ""  # a code job's repository (its real path): it runs in a worktree of its own
    worktree: str = ""  # that worktree's folder, on ``branch``, started from ``base``
    branch: str = ""
    base: str = ""
    review: bool = False  # when its agent is done, its checks run and the person reviews it
    checks: tuple[tuple[str, ...], ...] = ()
    feedback: str = ""  # what the person asked to change, reviewing its last run
    retried: bool = False  # the person wrote `- retry: yes`: it runs once even after a streak of one failure

    @property
    def busy(self) -> tuple[str, ...]:
        """What it may change, as the overlap rule compares it with other jobs' files."""
        return in_repo(self.files, self.repo) if self.repo else self.files

    @property
    def kind(self) -> WorkKind:
        if self.profile == DIRECT:
            return "builtin"
        if self.worker:
            return "worker"
        return "fanout" if self.tasks else "agent"


def run_builtin(job: Job, vault: Vault, started: datetime) -> RunResult:
    text = job.text
    if job.type == "env-check":
        unexpected = vault.allowed_roots  # the vault and where jobs work: a fake program may lie there
        result = builtins.env_check(
            targets.commands(text), targets.env_vars(text), environ=os.environ, unexpected=unexpected
        )
    elif job.type == "service-status":
        result = builtins.service_status(targets.services(text))
    elif job.type == "filesystem-check":
        result = builtins.filesystem_check(
            targets.paths(text), allowed_roots=vault.allowed_roots, base=vault.root
        )
    else:
        raise ValueError(f"no built-in check for {job.type}")
    duration = (datetime.now(started.tzinfo) - started).total_seconds()
    output = redact(result.output, secret_values(os.environ))
    state = State.DONE if result.ok else State.ERROR
    return RunResult(state, "direct", started, duration, output, "" if result.ok else result.summary)


def argv_for(
    profile: ProfileConfig,
    values: dict[str, str],
    tools: tuple[str, ...] | None,
    *,
    session: bool = False,
    metered: bool = False,
) -> list[str]:
    """The command with its placeholders filled; a request's narrower tool list replaces the profile's.
    ``session``: its ``worker_command`` (a long-lived session), when it has one.  ``metered``: Claude
    Code prints stream-json, so that its spend can be counted as it runs (before the placeholders are
    filled: a request's text can never pose as a flag)."""
    command = list(session_command(profile) if session else profile.command)
    if metered and is_claude(command):
        command = streaming_argv(command)
    if tools is not None and ALLOWED_TOOLS_FLAG in command[:-1]:
        at = command.index(ALLOWED_TOOLS_FLAG) + 1
        if "{" not in command[at]:
            command[at] = ",".join(tools)
    allowed = tools if tools is not None else profile.allowed_tools()
    return fill_argv(command, {**values, "tools": ",".join(allowed or ())})


def session_command(profile: ProfileConfig) -> tuple[str, ...]:
    """What a worker of this profile runs: its ``worker_command``, else its one-shot command."""
    return profile.worker_command or profile.command


def workdir_of(vault: Vault, profile: ProfileConfig) -> Path:
    workdir = Path(os.path.expanduser(profile.workdir)) if profile.workdir else vault.root
    return workdir if workdir.is_absolute() else vault.root / workdir


def workdir_for(vault: Vault, job: Job, profile: ProfileConfig) -> Path:
    """Where a job runs: its worktree (a code job), else its own workdir, else its profile's."""
    if job.worktree:
        return Path(job.worktree)
    return workdir_path(job.workdir, vault.root) if job.workdir else workdir_of(vault, profile)


def _refs_kept(attempt: Attempt, repo: Path, refs: dict[str, str], branch: str) -> Attempt:
    """The attempt, failed when its agent moved a ref of the repository other than its own branch (each
    put back first): an agent that did what its fence was there to stop is not done."""
    try:
        moved = put_back_refs(repo, refs, branch)
    except WorktreeError as exc:
        return dataclasses.replace(attempt, failure=Failure.OTHER, detail=f"the job's repository: {exc}")
    if not moved:
        return attempt
    detail = f"the agent moved {', '.join(moved)} outside its own branch {branch}; vaultops put it back"
    return dataclasses.replace(attempt, failure=Failure.OTHER, detail=detail)


def own_timeout(job: Job, profile: ProfileConfig) -> float:
    """An attempt's own time limit: its profile's, or the request's ``timeout:`` when that is shorter."""
    return min(job.timeout, profile.timeout) if job.timeout else profile.timeout


def metered(attempt: Attempt, meter: Meter, secrets: tuple[str, ...]) -> Attempt:
    """The attempt with what the meter counted where the run did not say it itself: a run stopped at
    its limit printed no result, so its cost, turns, session and last words come from the stream."""
    if attempt.failure is not Failure.LIMIT:
        cost = attempt.cost_usd if attempt.cost_usd is not None else meter.cost_usd
        return dataclasses.replace(attempt, cost_usd=cost)
    stopped = dataclasses.replace(
        attempt,
        text=meter.last_text,
        cost_usd=meter.cost_usd,
        turns=meter.turns,
        session_id=meter.session_id or None,
    )
    return redacted(stopped, secrets)


def proving(profile: ProfileConfig) -> bool:
    """Whether a run of ``profile`` proves its gate saw every call: Claude Code, gated, its stream read."""
    return profile.gated and profile.output == "claude-json" and is_claude(profile.command)


def watcher(meter: Meter | None, proof: Proof | None) -> Callable[[str], str] | None:
    """What reads each line of a run's stdout: its meter and its proof, each given every line; the proof's
    reason first, since a call its gate did not see is worse than a limit reached."""
    if proof is None:
        return meter.feed if meter is not None else None

    def judge(line: str) -> str:
        spent = meter.feed(line) if meter is not None else ""
        return proof.feed(line) or spent

    return judge


def _which_limit(proc: ProcessResult) -> str:
    """For the run's log: the limit that stopped it, when one did."""
    return f" ({proc.limit} {proc.limit_seconds:g} s)" if proc.limit else ""


def _log(vault: Vault, job: Job, attempt_no: int, proc: ProcessResult) -> str:
    folder = make_dirs(vault.state_dir / "logs" / "runs", vault.root)
    path = folder / f"{job.request_id}-{job.claim}-{attempt_no}.log"
    parts = [
        f"argv: {' '.join(repr(a) for a in proc.argv)}",
        f"exit: {proc.exit_code}  timed_out: {proc.timed_out}{_which_limit(proc)}"
        f"  duration: {proc.duration:.2f} s",
        "--- stdout ---",
        proc.stdout,
        "--- stderr ---",
        proc.stderr,
    ]
    # the process's output is raw (parsed first): redacted here, as it is written
    text = redact("\n".join(parts), [*proc.secrets, *secret_values(os.environ)])
    write_text(path, text, vault.root)
    return path.relative_to(vault.root).as_posix()


def run_attempt(
    job: Job,
    name: str,
    profile: ProfileConfig,
    vault: Vault,
    prompt: str,
    attempt_no: int,
    on_start: Callable[[int], None] | None = None,
    cancel: threading.Event | None = None,
    limit: float | None = None,
    budget: float | None = None,
) -> tuple[Attempt, str]:
    """One run of one profile: (what it produced, the vault path of its full log).  ``limit``: the
    seconds left of the job's ``budget`` (all its attempts together), which cuts the timeout short."""
    refs: dict[str, str] = {}
    if job.worktree:
        try:
            open_worktree(Path(job.repo), Path(job.worktree), job.branch, job.base)
            refs = other_refs(Path(job.repo), job.branch)
        except WorktreeError as exc:
            return Attempt(name, Failure.OTHER, "", str(exc), 0.0), ""
    workdir = workdir_for(vault, job, profile)
    if not inside_any(workdir, vault.allowed_roots) or not workdir.is_dir():
        detail = f"[profiles.{name}] workdir {workdir} is missing or outside [limits] allowed_roots"
        return Attempt(name, Failure.OTHER, "", detail, 0.0), ""
    values = {
        "prompt": prompt,
        "id": job.request_id,
        "type": job.type,
        "title": job.title,
        "workdir": str(workdir),
        "vault": str(vault.root),
        "file": job.file,
    }
    env = agent_environ(os.environ) | dict(profile.env)
    # for `vaultops hook` inside the agent: which vault records its escalations, and the job's scope
    env |= {
        "VAULTOPS_REQUEST": job.request_id,
        "VAULTOPS_CLAIM": job.claim,
        "VAULTOPS_VAULT": str(vault.root),
        "VAULTOPS_WORKDIR": str(workdir),
    }
    tools = job.tools if job.tools is not None else profile.allowed_tools()
    if tools is not None:  # a hook's "allow" must not run a tool the job was not given
        env["VAULTOPS_TOOLS"] = ",".join(tools)
    allowed = Allowed(own_timeout(job, profile), budget, limit)
    limits = job.limits.within(profile.limits)
    if limits and (problem := profile.metering_problem()):
        return Attempt(name, Failure.OTHER, "", f"[profiles.{name}] {problem}", 0.0), ""
    meter = Meter(limits, vault.config.limits.prices) if limits else None
    # a gated Claude Code run proves its gate saw every call: its stream is read against what the gate heard
    heard = Heard()
    proof = Proof(heard) if proving(profile) else None
    argv = argv_for(profile, values, job.tools, metered=meter is not None or proof is not None)
    if job.resume and profile.output == "claude-json" and attempt_no == 1:
        argv = [argv[0], "--resume", job.resume, *argv[1:]]
    if job.branch:  # the gate lets it push there, and nowhere else
        env["VAULTOPS_BRANCH"] = job.branch
    guarded = GateJob(
        vault.root, str(workdir), job.request_id, job.claim, tools, job.files, job.branch,
        domains=profile.domains, writable=profile.writable,
    )  # fmt: skip
    with contextlib.ExitStack() as stack:
        if profile.gated:
            try:
                argv = stack.enter_context(gated_command(guarded, argv, heard=heard))
            except GateSetupError as exc:
                detail = f"[profiles.{name}] {exc}; the job did not start"
                return Attempt(name, Failure.OTHER, "", detail, 0.0), ""
        proc = run_process(
            argv,
            cwd=workdir,
            env=env,
            timeout=allowed.seconds,
            inactivity_timeout=profile.inactivity_timeout,
            extra_secrets=secret_values({**os.environ, **profile.env}),
            on_start=on_start,
            cancel=cancel,
            watch=watcher(meter, proof),
            overdue=proof.overdue if proof is not None else None,
        )
    attempt = read_attempt(profile.output, name, proc, allowed)
    if job.worktree:
        attempt = _refs_kept(attempt, Path(job.repo), refs, job.branch)
    if meter is not None:
        attempt = metered(attempt, meter, proc.secrets)
    if proof is not None and proof.ended():
        attempt = unjudged(attempt, proof.reason, proc.secrets)  # whatever else it did, a call went unjudged
    if attempt.failure is Failure.OTHER and proc.start_error:
        # only a missing or unusable program is the profile's fault; anything else says what it is
        profile_fault = proc.start_error.startswith(("command not found", "permission denied"))
        fix = f"; install it or fix [profiles.{name}] command" if profile_fault else ""
        attempt = Attempt(name, Failure.OTHER, "", f"{proc.start_error}{fix}", 0.0)
    return attempt, _log(vault, job, attempt_no, proc)
