"""A stand-in ``claude`` that ignores the hooks it is given: it prints a stream-json session as Claude Code
does (``init``, then per turn an ``assistant`` line with one ``tool_use`` and a ``user`` line with its
``tool_result``, then the ``result``) and "runs" each tool by creating ``marker-<n>`` in its folder, without
asking any PreToolUse hook.  The CLI of claude-code #33343 and #40506, where hooks did not fire headless.

Started through a wrapper named ``claude`` (``standin``), so vaultops gates and proves it like the real CLI.
Its environment says how it behaves:

- ``STANDIN_HOOKS``: ``none`` (no hook at all), or ``session`` (it runs the settings' SessionStart hooks
  as Claude Code does, so the gate hears the session start, and then ignores every PreToolUse hook);
- ``STANDIN_CALLS``: how many tool calls it makes (3);
- ``STANDIN_THINK``: seconds each model turn takes (3.0), as a real model call does: a CLI stopped at
  its init line or at a tool's result is stopped long before the next turn could start another tool;
- ``STANDIN_FIRST``: seconds the first turn takes (``STANDIN_THINK``'s, unless given);
- ``STANDIN_QUIET``: ``yes``: it prints only its result, nothing of its session or its calls.

Standard library only; it never calls the network.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

SESSION = str(uuid.uuid4())
SESSION_START = "SessionStart"


def say(event: dict[str, object]) -> None:
    if os.environ.get("STANDIN_QUIET") == "yes" and event.get("type") != "result":
        return
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def settings_file(argv: list[str]) -> Path | None:
    for i, arg in enumerate(argv[:-1]):
        if arg == "--settings":
            return Path(argv[i + 1])
    return None


def session_start(settings: Path | None) -> None:
    """The settings' SessionStart hooks, each a shell command given the event on stdin, as Claude Code runs
    them before its ``init`` line."""
    if settings is None:
        return
    hooks = json.loads(settings.read_text()).get("hooks", {}).get(SESSION_START, [])
    event = {"session_id": SESSION, "cwd": os.getcwd(), "hook_event_name": SESSION_START, "source": "startup"}
    for entry in hooks:
        for hook in entry.get("hooks", []):
            subprocess.run(hook["command"], shell=True, input=json.dumps(event).encode(), check=False)


def main(argv: list[str]) -> int:
    if os.environ.get("STANDIN_HOOKS", "none") == "session":
        session_start(settings_file(argv))
    say({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION, "tools": ["Bash"]})
    calls = int(os.environ.get("STANDIN_CALLS", "3"))
    think = float(os.environ.get("STANDIN_THINK", "3.0"))
    first = float(os.environ.get("STANDIN_FIRST", think))
    for n in range(1, calls + 1):
        time.sleep(first if n == 1 else think)  # the model's turn
        call = f"toolu_standin_{n}"
        command = f"touch marker-{n}"
        message = {"id": f"msg_{n}", "role": "assistant", "model": "claude-standin", "content": [
            {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}
        ]}  # fmt: skip
        say({"type": "assistant", "message": message, "parent_tool_use_id": None, "session_id": SESSION})
        Path(f"marker-{n}").touch()  # the tool runs: no hook was asked
        result = {"type": "tool_result", "tool_use_id": call, "content": "", "is_error": False}
        say({"type": "user", "message": {"role": "user", "content": [result]}, "session_id": SESSION})
    say({"type": "result", "subtype": "success", "is_error": False, "result": "done", "num_turns": calls,
         "session_id": SESSION, "total_cost_usd": 0.0})  # fmt: skip
    return 0


def standin(folder: Path) -> Path:
    """A ``claude`` in ``folder`` that runs this stand-in with this interpreter."""
    folder.mkdir(parents=True, exist_ok=True)
    wrapper = folder / "claude"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).resolve()}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
