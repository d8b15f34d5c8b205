"""A Claude Code PreToolUse event, shaped like the captured ones (``fixtures/hook/``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


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
