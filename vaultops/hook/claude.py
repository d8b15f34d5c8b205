"""Claude Code under the gate: the job's ``--settings`` with vaultops's PreToolUse hook on every tool,
put on the command line of every Claude Code process vaultops starts.

Found by experiment with the real CLI (``tests/e2e/test_gate_claude.py`` keeps each one true):

- a project's ``.claude/settings.json`` with ``"disableAllHooks": true`` switches off hooks given with
  ``--settings`` too, and its ``env`` reaches the hook's process; so a gated job loads the user's settings
  only (``--setting-sources user``), never the project's or its local ones, which the folder's own files
  (a cloned repository's included) could choose;
- ``"disableAllHooks": false`` in the ``--settings`` file wins over the user's own ``true``;
- Claude Code runs every matching hook and any deny stops the call, so other hooks can add denials but
  never take ours away;
- ``--bare`` skips hooks altogether, so a gated command may not carry it, nor its own ``--settings`` or
  ``--setting-sources`` (``vaultops.config`` refuses them, naming the profile);
- an ``http`` hook whose server is down lets the call run (a non-blocking error), so the gate is a command
  hook whose client exits 2 on any failure.

The same settings put every Bash command of the job in the operating system's sandbox
(``vaultops.hook.sandbox``), fenced to the job's folder; a machine that cannot sandbox starts no job.
"""

from __future__ import annotations

import contextlib
import errno
import json
import shlex
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from vaultops.base import faults
from vaultops.base.claude_code import gate_problem, gated_argv
from vaultops.hook.answer import OnRecord
from vaultops.hook.fence import fence_for, sandbox_problem
from vaultops.hook.heard import SESSION_START, Heard
from vaultops.hook.job import GateJob
from vaultops.hook.sandbox import Fence, claude_settings
from vaultops.hook.server import GateServer
from vaultops.policy.web import ANY

MATCHER = "*"  # every tool: Bash, the file tools, the web tools, MCP tools, and whatever comes next
HOOK_TIMEOUT = 30  # seconds Claude Code waits for a hook; the hook denies by itself long before
CLIENT = Path(__file__).with_name("client.py")


def hook_entry(command: str) -> dict[str, Any]:
    """One PreToolUse entry of a settings file: ``command`` before every tool call."""
    return {"matcher": MATCHER, "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT}]}


def client_command(socket_path: Path) -> str:
    """The hook's shell command: the thin client, bare Python; ``|| exit 2`` blocks on any other failure
    (a missing interpreter exits 127, which would not block)."""
    return shlex.join([sys.executable, "-I", "-S", str(CLIENT), str(socket_path)]) + " || exit 2"


def settings_for(socket_path: Path, fence: Fence | None) -> dict[str, Any]:
    """The job's settings: the gate's hook on every tool call, and ``fence`` around every Bash command
    (None only where a test switches the sandbox off, to show what it holds).  The same client reaches the
    gate at the session's start, before the first tool call can run: the proof that the hooks are live
    (``vaultops.hook.heard``)."""
    command = client_command(socket_path)
    started = {"hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT}]}
    settings: dict[str, Any] = {
        "disableAllHooks": False,
        "hooks": {"PreToolUse": [hook_entry(command)], SESSION_START: [started]},
    }
    if fence is not None:
        settings["sandbox"] = claude_settings(fence)
    return settings


def job_fence(job: GateJob) -> Fence:
    """The fence for ``job``'s commands; raises GateSetupError when this machine cannot put one up."""
    if problem := sandbox_problem():
        raise GateSetupError(f"the sandbox for its commands cannot start: {problem}")
    workdir = Path(job.workdir) if job.workdir else Path.cwd()
    if workdir.resolve().parts[1:2] == ("dev",):  # Claude Code's sandbox mounts a /dev of its own
        raise GateSetupError(
            f"the sandbox for its commands cannot hold a folder under /dev ({workdir}); move it"
        )
    vault = job.vault or workdir
    domains = [d for d in job.domains or () if d != ANY]  # "*" is for the web tools, never for commands
    return fence_for(workdir, vault, branch=job.branch, domains=domains, writable=job.writable)


class GateSetupError(Exception):
    """The gate cannot be set up, so the agent must not start; says why in one sentence."""


@contextlib.contextmanager
def gate(
    job: GateJob, argv: Sequence[str], on_record: OnRecord | None = None, heard: Heard | None = None
) -> Iterator[Path]:
    """A gate for one job, answering until the block ends; yields the settings file to give Claude Code
    with ``argv`` (the command as filled: a request's text must not smuggle in ``--bare``).  ``heard``
    learns what the gate heard (the session's start, the calls it judged)."""
    if problem := gate_problem(argv):
        raise GateSetupError(f"cannot be gated: {problem}")
    fence = job_fence(job)
    try:
        if faults.enabled("gate.setup"):
            raise OSError(errno.EMFILE, "too many open files (a fault injected by a test)")
        server = GateServer(replace(job, fenced=True), on_record, heard)
    except OSError as exc:
        raise GateSetupError(f"the policy gate could not be set up ({exc.strerror or exc})") from None
    with server:
        settings = server.folder / "settings.json"
        # a test's switch: the sandbox silently off while the gate still counts on it, to show what it holds
        shown = None if faults.enabled("sandbox.off") else fence
        text = json.dumps(settings_for(server.socket_path, shown), indent=2) + "\n"
        try:
            settings.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise GateSetupError(f"the gate's settings could not be written ({exc.strerror})") from None
        yield settings


@contextlib.contextmanager
def gated_command(
    job: GateJob, argv: Sequence[str], on_record: OnRecord | None = None, heard: Heard | None = None
) -> Iterator[list[str]]:
    """``argv`` as it runs behind the job's gate and in its fence, which answer until the block ends (see
    ``gate``)."""
    with gate(job, argv, on_record, heard) as settings:
        yield gated_argv(argv, settings)
