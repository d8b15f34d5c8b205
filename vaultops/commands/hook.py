"""``vaultops hook``: Claude Code's PreToolUse (and PermissionRequest) hook, answering from the policy table.

The command form of the gate, for a person's own sessions wired with ``init --claude`` (jobs vaultops starts
get the faster ``vaultops.hook.server`` instead).  The decision is ``vaultops.hook.answer``; this adds the
job from ``VAULTOPS_*`` variables and a watchdog that answers deny by itself after ``DEADLINE`` seconds,
long before Claude Code's hook timeout (a hook that times out does not block).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
from pathlib import Path
from types import FrameType

from vaultops.hook.answer import HookAnswer, refusal
from vaultops.hook.answer import answer as answer_event
from vaultops.hook.job import job_from_environ

DEADLINE = 5.0  # seconds; Claude Code's own timeout (30 s as wired by `init --claude`) lets the call through


# The hook's program: Python without site (``-I -S``), as the gate's thin client runs, given the folder that
# holds the vaultops package.  Site's start-up (every .pth file of every installed package) is a good part
# of a call's cost, and the hook needs nothing but the standard library and vaultops: a test holds it so.
_BOOT = "import sys; sys.path.insert(0, sys.argv.pop(1)); from vaultops.cli import main; sys.exit(main())"
PACKAGE_FOLDER = Path(__file__).resolve().parents[2]


def hook_command(vault: Path | None, argv0: str | None = None) -> str:
    """The shell command for ``.claude/settings.json``: this very Python (absolute), this vaultops,
    ``hook``, the vault.  ``argv0`` is no longer used (the command does not depend on how vaultops was
    started); it is accepted for callers that still pass it.

    ``|| exit 2`` turns any other failure (Python missing, a crash before it could answer) into Claude
    Code's blocking exit code: a hook that exits 1 would let the call through."""
    del argv0
    program = [os.path.abspath(sys.executable), "-I", "-S", "-c", _BOOT, str(PACKAGE_FOLDER)]
    if vault is not None:
        program += ["--vault", str(vault.resolve())]
    return shlex.join([*program, "hook"]) + " || exit 2"


def _watchdog(event_name: list[str]) -> None:
    """After ``DEADLINE`` s, answer deny and exit at once, whatever is still running (a hung disk, a lock)."""
    if not hasattr(signal, "setitimer"):
        return
    # VAULTOPS_HOOK_DEADLINE may shorten it (tests), never stretch it toward Claude Code's own timeout
    seconds = min(float(os.environ.get("VAULTOPS_HOOK_DEADLINE") or DEADLINE), DEADLINE)

    def expire(signum: int, frame: FrameType | None) -> None:
        out = refusal(event_name[0], f"it took longer than {seconds:g} s")
        with contextlib.suppress(OSError):
            os.write(1, out.stdout.encode())
            os.write(2, out.stderr.encode())
        os._exit(out.exit_code)

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def answer(vault: Path | None) -> HookAnswer:
    """``vaultops hook``: read the event on stdin, decide.  Never raises: whatever happens, the answer
    denies (or blocks with exit 2), never lets the call through by exiting 1.  ``vault`` None: no vault is
    known, so the default table holds and nothing is recorded."""
    event_name = [""]
    try:
        _watchdog(event_name)
        raw = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
        with contextlib.suppress(ValueError, AttributeError):
            peek = json.loads(raw)
            event_name[0] = peek.get("hook_event_name", "") if isinstance(peek, dict) else ""
        return answer_event(raw, job_from_environ(os.environ, vault))
    except BaseException as exc:  # the hook must answer, whatever happened
        return refusal(event_name[0], f"internal error {exc!r}")
