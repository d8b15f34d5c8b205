"""Running one request: a built-in read-only handler, or an executor profile's command.  I/O edge."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from vaultops.config import ProfileConfig
from vaultops.decide import targets
from vaultops.model import State
from vaultops.record.render import RunResult
from vaultops.run import builtins
from vaultops.run.argv import fill_argv
from vaultops.run.process import ProcessResult, run_process
from vaultops.run.redact import redact
from vaultops.vault import Vault, inside_any

_SECRET_NAME = re.compile(r"(TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL)", re.I)


@dataclass(frozen=True, slots=True)
class Job:
    file: str
    request_id: str
    title: str
    text: str
    type: str
    claim: str
    handler: str  # "direct" or a profile name
    timeout: float | None = None


def secret_values(environ: Mapping[str, str], *more: Mapping[str, str]) -> list[str]:
    """Values of secret-looking variables, so that they can be redacted wherever they appear."""
    found = []
    for env in (environ, *more):
        for name, value in env.items():
            if _SECRET_NAME.search(name) and len(value) >= 6:
                found.append(value)
    return found


def run_builtin(job: Job, vault: Vault, started: datetime) -> RunResult:
    text = job.text
    if job.type == "env-check":
        result = builtins.env_check(targets.commands(text), targets.env_vars(text), environ=os.environ)
    elif job.type == "service-status":
        result = builtins.service_status(targets.services(text))
    elif job.type == "filesystem-check":
        result = builtins.filesystem_check(
            targets.paths(text), allowed_roots=vault.allowed_roots, base=vault.root
        )
    else:
        raise ValueError(f"no built-in handler for {job.type}")
    duration = (datetime.now(started.tzinfo) - started).total_seconds()
    output = redact(result.output, secret_values(os.environ))
    state = State.DONE if result.ok else State.ERROR
    return RunResult(state, "direct", started, duration, output, "" if result.ok else result.summary)


def _log_path(vault: Vault, job: Job) -> Path:
    folder = vault.state_dir / "logs" / "runs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{job.request_id}-{job.claim}.log"


def _write_log(path: Path, proc: ProcessResult) -> None:
    parts = [
        f"argv: {' '.join(repr(a) for a in proc.argv)}",
        f"exit: {proc.exit_code}  timed_out: {proc.timed_out}  duration: {proc.duration:.2f} s",
        "--- stdout ---",
        proc.stdout,
        "--- stderr ---",
        proc.stderr,
    ]
    path.write_text("\n".join(parts), encoding="utf-8")


def run_profile(
    job: Job, name: str, profile: ProfileConfig, vault: Vault, prompt: str, started: datetime
) -> RunResult:
    workdir = Path(os.path.expanduser(profile.workdir)) if profile.workdir else vault.root
    if not workdir.is_absolute():
        workdir = vault.root / workdir
    if not inside_any(workdir, vault.allowed_roots) or not workdir.is_dir():
        reason = f"[profiles.{name}] workdir {workdir} is missing or outside [limits] allowed_roots"
        return RunResult(State.ERROR, name, started, 0.0, "", reason)
    values = {
        "prompt": prompt,
        "id": job.request_id,
        "type": job.type,
        "title": job.title,
        "workdir": str(workdir),
        "vault": str(vault.root),
        "file": job.file,
    }
    argv = fill_argv(profile.command, values)
    env = {k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"} | dict(profile.env)
    env |= {"VAULTOPS_REQUEST": job.request_id, "VAULTOPS_CLAIM": job.claim}
    proc = run_process(
        argv,
        cwd=workdir,
        env=env,
        timeout=job.timeout or profile.timeout,
        inactivity_timeout=profile.inactivity_timeout,
        extra_secrets=secret_values(os.environ, profile.env),
    )
    log = _log_path(vault, job)
    _write_log(log, proc)
    log_rel = log.relative_to(vault.root).as_posix()
    if proc.start_error:
        reason = f"{proc.start_error}; install it or fix [profiles.{name}] command"
        return RunResult(State.ERROR, name, started, proc.duration, "", reason, None, log_rel)
    if proc.timed_out:
        reason = f"timed out after {job.timeout or profile.timeout:g} s"
        return RunResult(
            State.ERROR, name, started, proc.duration, proc.stdout + proc.stderr, reason, None, log_rel
        )
    if proc.exit_code == 0:
        return RunResult(State.DONE, name, started, proc.duration, proc.stdout, "", 0, log_rel)
    output = proc.stdout + ("\n" if proc.stdout and proc.stderr else "") + proc.stderr
    return RunResult(
        State.ERROR, name, started, proc.duration, output, f"exit {proc.exit_code}", proc.exit_code, log_rel
    )
