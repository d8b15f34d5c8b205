"""Starting, nudging and stopping workers: the I/O edge of the package (processes, a FIFO, signals).

Every function here is what the CLI calls, so a Python user (or the daemon) can do the same:
``spawn``, ``inject``, ``terminate``, ``list_workers``, ``worker_logs``.

The shape of a worker on disk, under ``.vaultops/state/workers/<name>/``:

- ``stdin``: a named pipe.  The supervisor opens it read-write and gives it to the worker as stdin, so
  ``inject`` from any later process can write to the worker, and the worker never reads EOF meanwhile;
- ``stdout.log`` (and ``stdout.log.1``, …): its output, rotated;
- ``supervisor.log``: what the supervisor itself had to say (a crash of its own, say).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vaultops.base.claude_code import gate_problem, is_claude
from vaultops.base.confine import make_dirs, open_fd
from vaultops.base.errors import VaultopsError
from vaultops.base.names import name_problem
from vaultops.bus.identity import PARENT_VAR, WORKER_VAR
from vaultops.decide.files import files_overlap
from vaultops.hook.job import GateJob, gate_spec
from vaultops.run.process import _group_alive, _signal_group, process_start_time
from vaultops.store.state import StateDB
from vaultops.vault import Vault, inside_any
from vaultops.workers.logs import tail
from vaultops.workers.registry import LIVE, Registry, Worker, is_live, observed_state, process_alive

SPAWN_WAIT = 15.0  # seconds spawn waits for the worker to be running
INJECT_WAIT = 10.0  # seconds inject waits for a worker that is not reading its stdin
KILL_WAIT = 5.0  # seconds to wait for the group to go after SIGKILL
_POLL = 0.005
_supervisors: list[subprocess.Popen[bytes]] = []  # reaped on the next spawn, so a daemon keeps no zombies
_supervisors_lock = threading.Lock()  # a pass starts its jobs' workers from several threads at once


class WorkerError(VaultopsError):
    """A worker command that cannot be done; the message says why in one sentence."""


def state_db(vault: Vault) -> StateDB:
    return StateDB(vault.state_dir / "state.db")


def worker_folder(vault: Vault, name: str) -> Path:
    return vault.state_dir / "workers" / name


def _check_name(name: str) -> None:
    if problem := name_problem(name):
        raise WorkerError(problem)


def _known(registry: Registry, name: str) -> Worker:
    worker = registry.get(name)
    if worker is None:
        names = ", ".join(w.name for w in registry.all()) or "there are none"
        raise WorkerError(f"no worker named {name} (known: {names})")
    return worker


def _reap() -> None:
    with _supervisors_lock:
        _supervisors[:] = [proc for proc in _supervisors if proc.poll() is None]


# --- spawn -------------------------------------------------------------------------------------------------


def spawn(
    vault: Vault,
    name: str,
    command: Sequence[str],
    *,
    dir: str | os.PathLike[str] | None = None,
    files: Sequence[str] = (),
    persona: str | None = None,
    notify: Sequence[str] = (),
    parent: str = "person",
    stream_json: bool = False,
    prompt: str | None = None,
    profile: str | None = None,
    environ: Mapping[str, str] | None = None,
    wait: float = SPAWN_WAIT,
    plan: str | None = None,
    claim: str | None = None,
    request: str | None = None,
    branch: str = "",
) -> Worker:
    """Start a worker and wait until it runs (or failed to start); return its row.

    ``profile`` takes the command (and its env) from ``[profiles.NAME]`` instead of ``command``, its
    ``{prompt}`` filled with ``prompt``; a ``prompt`` that no ``{prompt}`` takes is the worker's first line
    on stdin.  With neither a command nor a profile, the first profile ``[routing]`` gives code work runs.
    Refused, with the reason, when: the caller is itself a worker; the name is taken by a live
    worker; ``dir`` is outside ``[limits] allowed_roots``; as many workers as allowed are alive; or
    ``files`` overlap a live worker's files.  ``plan`` and ``claim``: the plan note (and its claim) the
    daemon started it for; its ``[DONE:…]`` completes that note, and ``request`` (its id) is where the policy
    gate's escalations land.  A Claude Code worker runs behind the gate (``vaultops.hook``), hosted by its
    supervisor for as long as it lives; one that cannot be gated does not start."""
    from vaultops.config import agent_environ  # the config (pydantic): only spawn needs it

    environ = os.environ if environ is None else environ
    if environ.get(WORKER_VAR):
        raise WorkerError(
            f"a worker may not spawn workers ({WORKER_VAR}={environ[WORKER_VAR]} is set in this "
            "environment); ask the orchestrator or the person to spawn it"
        )
    _check_name(name)
    if not command and profile is None:
        # docs/guides/workers.md's `worker spawn NAME --dir DIR --prompt TEXT`: the profile code work goes to
        profile = next((p for p in vault.config.route_for("code") if p in vault.config.profiles), None)
    profile_env: dict[str, str] = {}
    if profile is not None:
        from vaultops.run.jobs import workdir_of

        if command:
            raise WorkerError("give either --profile or a command after --, not both")
        if profile not in vault.config.profiles:
            known = ", ".join(sorted(vault.config.profiles)) or "none are defined"
            raise WorkerError(f"no profile named {profile} under [profiles] ({known})")
        chosen = vault.config.profiles[profile]
        profile_env = dict(chosen.env)
        if dir is None:
            dir = workdir_of(vault, chosen)
    if not command and profile is None:
        raise WorkerError(
            "no command to run and no profile in [routing] code or default; give one after --, e.g. "
            "`worker spawn NAME -- claude …`, or --profile NAME"
        )
    workdir = Path(os.path.realpath(Path(dir).expanduser() if dir is not None else Path.cwd()))
    first_line = prompt
    if profile is not None:
        from vaultops.run.jobs import argv_for, session_command

        chosen = vault.config.profiles[profile]
        values = {
            "prompt": prompt or "",
            "id": name,
            "type": "worker",
            "title": name,
            "workdir": str(workdir),
            "vault": str(vault.root),
            "file": "",
        }
        command = argv_for(chosen, values, None, session=True)
        if any("{prompt}" in arg for arg in session_command(chosen)):
            first_line = None  # the prompt is in the command already
        # Claude Code's session reads stream-json user messages: the prompt, injects and answers
        stream_json = stream_json or (chosen.worker_command is not None and chosen.output == "claude-json")
    gated = vault.config.profiles[profile].gated if profile is not None else is_claude(command)
    if gated and (problem := gate_problem(command)):
        raise WorkerError(f"worker {name} cannot be gated: {problem}")
    if not workdir.is_dir():
        raise WorkerError(f"{workdir}: no such folder for the worker to run in")
    if not inside_any(workdir, vault.allowed_roots):
        roots = ", ".join(str(r) for r in vault.allowed_roots)
        raise WorkerError(f"{workdir} is outside [limits] allowed_roots ({roots}); add it there or pick one")
    config = vault.config.workers
    cap = config.max or vault.config.limits.max_concurrent
    folder = make_dirs(worker_folder(vault, name), vault.root)
    env = agent_environ(environ)
    env |= profile_env | {WORKER_VAR: name, PARENT_VAR: parent, "VAULTOPS_VAULT": str(vault.root)}
    argv = [
        sys.executable,
        "-m",
        "vaultops.workers.supervise",
        str(vault.state_dir / "state.db"),
        str(folder),
        name,
        "--log-max",
        str(config.log_max_bytes),
        "--log-keep",
        str(config.log_keep),
        "--policy",
        json.dumps(dict(vault.config.policy)),
        "--sender",
        vault.agent,
    ]
    if gated:
        given = vault.config.profiles[profile] if profile is not None else None
        tools = given.allowed_tools() if given is not None else None
        job = GateJob(
            vault.root, str(workdir), request or name, claim or "", tools, tuple(files), branch,
            domains=given.domains if given is not None else None,  # what its sandbox and web tools reach
            writable=given.writable if given is not None else (),
        )  # fmt: skip
        argv += ["--gate", gate_spec(job)]
    _reap()
    state = state_db(vault)
    registry = Registry(state)
    try:
        with registry.exclusive():  # the checks and the new row, as one step against other spawns
            live = registry.live()
            for other in live:
                if other.name == name:
                    raise WorkerError(
                        f"worker {name} is already running (pid {other.pid}); pick another name"
                    )
            if len(live) >= cap:
                running = ", ".join(w.name for w in live)
                raise WorkerError(
                    f"{len(live)} workers are running ({running}), as many as [workers] max allows ({cap}); "
                    "terminate one first"
                )
            for other in live:
                if files_overlap(tuple(files), other.files):
                    theirs = ", ".join(other.files) or "any file"
                    raise WorkerError(
                        f"its files overlap those of worker {other.name} ({theirs}); wait for it to end "
                        "or narrow --files"
                    )
            fifo = folder / "stdin"
            with contextlib.suppress(FileNotFoundError):
                fifo.unlink()  # a FIFO left by an earlier worker of this name may hold unread input
            os.mkfifo(fifo, 0o600)
            registry.add(
                name,
                parent=parent,
                dir=str(workdir),
                command=tuple(command),
                persona=persona,
                notify=tuple(notify),
                files=tuple(files),
                input="stream-json" if stream_json else "text",
                plan=plan,
                claim=claim,
            )
            errors_fd = open_fd(folder / "supervisor.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            with os.fdopen(errors_fd, "ab") as errors:
                supervisor = subprocess.Popen(
                    argv,
                    cwd=workdir,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                    start_new_session=True,  # its own group: terminate signals the worker and nothing else
                    close_fds=True,
                )
            with _supervisors_lock:
                _supervisors.append(supervisor)
            registry.supervisor_started(name, supervisor.pid, process_start_time(supervisor.pid))
        deadline = time.monotonic() + wait
        while True:
            worker = _known(registry, name)
            if worker.state != "starting":
                break
            if supervisor.poll() is not None or time.monotonic() > deadline:
                _signal_group(supervisor.pid, signal.SIGKILL)  # a supervisor that hangs is stopped
                registry.ended(name, "failed", None)
                worker = _known(registry, name)
                break
            time.sleep(_POLL)
        if worker.state == "failed":
            said = " / ".join(tail(folder, 3)) or _last_error(folder) or "no output"
            raise WorkerError(f"worker {name} did not start: {said}")
        if first_line:
            from vaultops.base.claude_code import stream_json_message

            with contextlib.suppress(WorkerError):  # it may have ended already: its state says so
                write_stdin(folder, (stream_json_message(first_line) if stream_json else first_line) + "\n")
        return worker
    finally:
        state.close()


def _last_error(folder: Path) -> str:
    with contextlib.suppress(OSError):
        lines = (folder / "supervisor.log").read_text(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""
    return ""


# --- inject ------------------------------------------------------------------------------------------------


def write_stdin(folder: Path, text: str, timeout: float = INJECT_WAIT) -> None:
    """Write to a worker's FIFO, whole.  Non-blocking, so that a FIFO without its supervisor (no reader)
    is an error at once, and a worker that stopped reading its stdin (the pipe full) one after ``timeout``
    seconds, rather than a hang."""
    try:
        fd = os.open(folder / "stdin", os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.ENOENT):
            raise WorkerError("its input is closed (the worker is not running)") from None
        raise
    try:
        data = text.encode("utf-8", "surrogateescape")
        deadline = time.monotonic() + timeout
        while data:
            try:
                data = data[os.write(fd, data) :]
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([], [fd], [], left)[1]:
                    raise WorkerError(
                        f"its input is full: it has not read its stdin for {timeout:g} s"
                    ) from None
    finally:
        os.close(fd)


def inject(vault: Vault, name: str, text: str, *, stream_json: bool | None = None) -> str:
    """Write ``text`` and a newline to a running worker's stdin; with ``stream_json`` (default: as the
    worker was spawned) wrapped as a Claude Code stream-json user message.  Returns what was written."""
    from vaultops.base.claude_code import stream_json_message

    state = state_db(vault)
    try:
        worker = _known(Registry(state), name)
    finally:
        state.close()
    if not is_live(worker):
        raise WorkerError(f"worker {name} is not running ({observed_state(worker, time.time(), 1e18)})")
    wrap = worker.input == "stream-json" if stream_json is None else stream_json
    line = stream_json_message(text) if wrap else text
    try:
        write_stdin(worker_folder(vault, name), line + "\n")
    except WorkerError as exc:
        raise WorkerError(f"cannot write to worker {name}: {exc.message}") from None
    return line


# --- terminate ---------------------------------------------------------------------------------------------


def _wait_gone(pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _group_alive(pgid):
        if time.monotonic() > deadline:
            return False
        _reap()
        time.sleep(0.02)
    return True


def terminate(vault: Vault, name: str, grace: float | None = None) -> tuple[Worker, str]:
    """TERM to the worker's process group, KILL after ``grace`` seconds ([workers] grace), and the row
    ends as ``exited``.  Returns the row and one sentence of what happened."""
    grace = vault.config.workers.grace if grace is None else grace
    state = state_db(vault)
    registry = Registry(state)
    try:
        worker = _known(registry, name)
        if worker.state not in LIVE:
            return worker, f"worker {name} had already ended ({worker.state})"
        if not process_alive(worker):
            registry.ended(name, "lost", None)
            return _known(registry, name), f"worker {name} was gone already (lost); recorded as lost"
        assert worker.sup_pid is not None  # process_alive checked it
        registry.stop_requested(name)
        if process_start_time(worker.sup_pid) == worker.sup_start:
            # the supervisor first: it notes the worker's descendants, then passes TERM to the group
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(worker.sup_pid, signal.SIGTERM)
        else:  # the supervisor is gone but the worker lives on in its group
            _signal_group(worker.sup_pid, signal.SIGTERM)
        how = "stopped with TERM"
        if not _wait_gone(worker.sup_pid, grace):
            _signal_group(worker.sup_pid, signal.SIGKILL)
            _wait_gone(worker.sup_pid, KILL_WAIT)
            how = f"killed after {grace:g} s (it did not stop on TERM)"
        registry.ended(name, "exited", None)  # only if the supervisor could not record it itself
        return _known(registry, name), f"worker {name} {how}"
    finally:
        state.close()


# --- list and logs -----------------------------------------------------------------------------------------


def latest_commit(folder: str) -> str | None:
    """``%h %s`` of the latest commit in a worker's folder, when it is in a git repository."""
    try:
        proc = subprocess.run(
            ["git", "-C", folder, "log", "-1", "--format=%h %s"],
            capture_output=True,
            text=True,
            timeout=5,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def list_workers(vault: Vault, now: float | None = None, commits: bool = True) -> list[dict[str, Any]]:
    """Every worker, as ``list`` shows it: the state observed now (``lost``, ``stale``), its age in
    seconds, and the latest commit in its folder."""
    now = time.time() if now is None else now
    stale_after = vault.config.workers.stale_after
    state = state_db(vault)
    try:
        workers = Registry(state).all()
    finally:
        state.close()
    rows = []
    for w in workers:
        rows.append(
            {
                "name": w.name,
                "state": observed_state(w, now, stale_after),
                "pid": w.pid,
                "parent": w.parent,
                "age": round(now - w.started, 1),
                "dir": w.dir,
                "commit": latest_commit(w.dir) if commits else None,
                "exit_code": w.exit_code,
                "persona": w.persona,
                "files": list(w.files),
                "last_line_at": w.last_line_at,
                "command": list(w.command),
                "plan": w.plan,  # the plan note it works on, when the daemon started it for one
            }
        )
    return rows


def worker_logs(vault: Vault, name: str, lines: int = 50, raw: bool = False) -> list[str]:
    """The end of a worker's log (its last ``lines`` lines); Claude Code's stream-json events shown as
    text unless ``raw``."""
    from vaultops.workers.reports import shown_lines

    state = state_db(vault)
    try:
        _known(Registry(state), name)
    finally:
        state.close()
    logged = tail(worker_folder(vault, name), lines)
    return logged if raw else [shown for line in logged for shown in shown_lines(line)]
