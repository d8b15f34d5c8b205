"""A Claude Code PreToolUse event, shaped like the captured ones (``fixtures/hook/``), and a job for the gate
to judge it in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.helpers import make_vault
from vaultops.hook.job import GateJob


def pretooluse(workdir: Path, tool: str = "Bash", **tool_input: Any) -> dict[str, Any]:
    return {
        "session_id": "s-1",
        "transcript_path": "/dev/null",
        "cwd": str(workdir),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": f"toolu_{abs(hash(json.dumps(tool_input)))}",
    }


def gate_job(root: Path) -> GateJob:
    """A job with Bash, Read and Write, working in a folder of its own beside a vault without git."""
    vault = make_vault(root / "vault", repo=False)
    work = root / "work"
    work.mkdir()
    return GateJob(vault, str(work), "REQ-x", "c1", ("Bash", "Read", "Write"))
