"""The policy tests' sandbox: a worktree with symlinks out of it, a home, somewhere outside, a temp folder;
``{wd}``, ``{outside}``, ``{home}`` and ``{tmp}`` in a corpus entry stand for them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from vaultops.policy.decide import decide_call
from vaultops.policy.paths import Scope
from vaultops.policy.tools import ToolCall

OWN = "fix/tab-preview"


class Sandbox:
    def __init__(self, root: Path) -> None:
        self.wd = root / "wd"
        for d in ("src", "sub", "scripts"):
            (self.wd / d).mkdir(parents=True)
        (self.wd / "src" / "a.py").write_text("a = 1\n")
        (self.wd / "README.md").write_text("# readme\n")
        (self.wd / "link-etc").symlink_to("/etc")
        (root / "outside" / "data").mkdir(parents=True)
        (self.wd / "link-out").symlink_to(root / "outside")
        (root / "home" / ".ssh").mkdir(parents=True)
        (root / "tmp").mkdir()
        self.subs = {"{wd}": str(self.wd), "{outside}": str(root / "outside"), "{home}": str(root / "home"),
                     "{tmp}": str(root / "tmp")}  # fmt: skip
        self.scope = Scope(
            workdir=str(self.wd),
            home=str(root / "home"),
            own_branch=OWN,
            current_branch=OWN,
            temp_dirs=(str(root / "tmp"),),
            resolve=os.path.realpath,
        )

    def fill(self, value: Any) -> Any:
        if isinstance(value, str):
            for key, real in self.subs.items():
                value = value.replace(key, real)
            return value
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        return value

    def judged(self, entries: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str, str]]:
        """Each labelled corpus entry with the gate's verdict on it: (entry, kind, reason)."""
        out = []
        for e in entries:
            call = ToolCall(e["tool_name"], self.fill(e["tool_input"]), self.fill(e.get("cwd", "{wd}")))
            verdict = decide_call(call, self.scope)
            out.append((e, verdict.kind, verdict.reason))
        return out

    def kind(self, command: str) -> str:
        return decide_call(ToolCall("Bash", {"command": self.fill(command)}, str(self.wd)), self.scope).kind


def corpus_entries(path: Path) -> list[dict[str, Any]]:
    """A labelled corpus of tool calls (tests/corpus/tool_calls*.jsonl), one JSON object a line."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
