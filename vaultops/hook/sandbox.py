"""The fence the operating system holds around every command an agent runs: what one job's commands may
write, read and reach, as Claude Code's ``sandbox`` settings and as a bubblewrap command line.  Pure values.

The gate judges each tool call's text; a file the agent wrote and a later command runs (a Makefile, a
conftest, a downloaded script) says nothing in that text.  The fence does not read text: whatever runs,
it writes only the job's own folder, its temp folder and what a commit on its own branch needs, it reads no
credentials, and it reaches no host the profile did not list.  It is the second wall, under the gate, and
the gate keeps judging every call.

Found by experiment with the real CLI (2.1.197; ``tests/e2e/test_sandbox.py`` keeps each one true):

- with ``enabled``, each Bash command runs under bubblewrap: writes outside the folder Claude Code runs
  in fail with "Read-only file system", and so does any connection (none leaves without a listed domain);
- the command's own folder, a temp folder of Claude Code's (``$TMPDIR``) and, in a git worktree, the
  repository's git folder are writable by default, except its ``config`` and ``hooks``;
- ``failIfUnavailable``: without bubblewrap or socat the CLI refuses to start (exit 1, saying so);
- ``allowUnsandboxedCommands: false``: a Bash call with ``dangerouslyDisableSandbox`` still runs inside;
- ``denyWrite`` over ``allowWrite``: a path denied stays denied, also below an allowed one, so denials are
  given as the exact siblings to close, never as a folder with an exception inside it;
- a denied path that does not exist is made unreadable, not only unwritable (git then fails to read
  ``packed-refs``): only existing paths are denied;
- ``denyRead`` on a folder hides it (``No such file or directory``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TMP_VARIABLES = ("TMPDIR", "TMP", "TEMP")


@dataclass(frozen=True, slots=True)
class Fence:
    """One job's fence.  Paths are absolute and exist (see the module's notes on denied paths)."""

    workdir: str  # written: the job's worktree or workdir
    writable: tuple[str, ...] = ()  # written too: what a commit on its own branch needs, the profile's own
    read_only: tuple[str, ...] = ()  # never written, though inside a writable folder
    unreadable: tuple[str, ...] = ()  # never read: credentials, vaultops's own state
    domains: tuple[str, ...] = ()  # hosts the commands may reach (through Claude Code's proxy); () none


def claude_settings(fence: Fence) -> dict[str, Any]:
    """The ``sandbox`` block of a job's ``--settings``: on, fail closed, no way out for a command."""
    return {
        "enabled": True,
        "failIfUnavailable": True,
        "allowUnsandboxedCommands": False,
        "autoAllowBashIfSandboxed": False,  # the gate decides every call; the fence is not a reason to allow
        "excludedCommands": [],
        "filesystem": {
            "allowWrite": list(fence.writable),
            "denyWrite": list(fence.read_only),
            "denyRead": list(fence.unreadable),
        },
        "network": {"allowedDomains": list(fence.domains), "allowLocalBinding": False},
    }


def bwrap_argv(
    bwrap: str, fence: Fence, tmp: str, argv: Sequence[str], hidden_files: Sequence[str]
) -> list[str]:
    """``argv`` under bubblewrap in ``fence`` (for vaultops's own checks, which run code the agent wrote):
    the whole system read-only, ``workdir``, ``writable`` and the private ``tmp`` writable, no network at
    all, its own process tree (nothing outlives it), credentials hidden.  ``hidden_files``: the
    ``unreadable`` entries that are files (covered by an empty file; folders get an empty one)."""
    args = [
        bwrap, "--die-with-parent", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
    ]  # fmt: skip
    for path in (fence.workdir, tmp, *fence.writable):  # the job's folder first: another may be inside it
        args += ["--bind", path, path]
    for path in fence.read_only:
        args += ["--ro-bind", path, path]
    for path in fence.unreadable:
        args += (
            ["--ro-bind", "/dev/null", path]
            if path in hidden_files
            else ["--tmpfs", path, "--remount-ro", path]
        )
    for name in TMP_VARIABLES:
        args += ["--setenv", name, tmp]
    return [*args, "--chdir", fence.workdir, "--", *argv]
