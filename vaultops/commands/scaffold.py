"""``vaultops init``: create what a vault needs, never overwriting anything that is there."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from vaultops.config import CONFIG_FILE
from vaultops.errors import VaultopsError
from vaultops.gate.claude import hook_entry
from vaultops.sync.git import Git

IGNORE_LINES = (".vaultops/state/", ".vaultops/local.toml", "*.vaultops.tmp")

INBOX_HEADER = """# COO Inbox

Requests for vaultops. Add one block per request at the end of this note, like this:

~~~markdown
## REQ-2026-05-04-0830-which-stripe Is stripe installed?
- type: env-check
Is the stripe CLI installed on this machine? `which stripe`
~~~

- A request starts with a `## REQ-` heading: an id of letters, digits, `.`, `_` or `-`, then a title.
- Optional fields come first: `- type:` (env-check, service-status, filesystem-check, truth-audit, db-query,
  execute-fix, code, research, review, …), `- profile:`, `- timeout:`, `- priority:`, `- from:`.
- vaultops takes a request once it has been unchanged for a few seconds; `- ready: yes` says it is finished.
- vaultops writes its lines (lock, status, result) under your request; leave them as they are. You can answer
  with `- decision: approve`, `- decision: deny`, `- retry: yes` or `- cancel: yes`.
- Anything risky (deleting, rotating keys, merging to main, messaging outsiders, spending money, changing
  system files) is never run: it is escalated to you.
"""

DEFAULT_CONFIG = """# vaultops configuration (shared by every machine; per-machine overrides go in local.toml)

[agent]
name = "vaultops"                   # who signs locks, results and commits

[inbox]
path = "_System/COO-Inbox.md"
settle = 3                          # seconds a request must be unchanged before it is taken

[queue]
folder = "executor-queue"

[limits]
max_concurrent = 3
daily_budget_usd = 10.0
allowed_roots = []                  # besides the vault: where jobs may run and checks may look

# An executor profile: an argv list, never a shell. {prompt} fills one argument.
# [profiles.worker-code]
# command = ["claude", "-p", "{prompt}", "--allowedTools", "Bash,Read,Edit,Grep,Glob"]
# output = "text"
# timeout = 600

[routing]                           # type -> profiles, first one first
# default = ["worker-code"]

[notify]
urls = []                           # apprise URLs; put secrets in local.toml

[git]
push = true
claim_offline = false
"""


def _append_missing_lines(path: Path, wanted: tuple[str, ...]) -> list[str]:
    existing = (
        path.read_text(encoding="utf-8", errors="surrogateescape").splitlines() if path.exists() else []
    )
    missing = [line for line in wanted if line not in existing]
    if missing:
        prefix = ""
        if path.exists() and path.stat().st_size:
            raw = path.read_bytes()
            prefix = "" if raw.endswith(b"\n") else "\n"
        with path.open("a", encoding="utf-8") as fh:
            fh.write(prefix + "\n".join(missing) + "\n")
    return missing


def init_vault(root: Path, inbox: str = "_System/COO-Inbox.md", queue: str = "executor-queue") -> list[str]:
    """Create what is missing; returns a line per thing done."""
    done: list[str] = []
    if not root.exists():
        root.mkdir(parents=True)
        done.append(f"created {root}")
    config = root / CONFIG_FILE
    if not config.exists():
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(DEFAULT_CONFIG, encoding="utf-8")
        done.append(f"wrote {CONFIG_FILE}")
    (root / ".vaultops" / "state").mkdir(parents=True, exist_ok=True)
    inbox_path = root / inbox
    if not inbox_path.exists():
        inbox_path.parent.mkdir(parents=True, exist_ok=True)
        inbox_path.write_text(INBOX_HEADER, encoding="utf-8")
        done.append(f"wrote {inbox} (empty inbox with a header that explains the format)")
    queue_path = root / queue
    if not queue_path.exists():
        queue_path.mkdir(parents=True)
        done.append(f"created {queue}/")
    added = _append_missing_lines(root / ".gitignore", IGNORE_LINES)
    if added:
        done.append(f"added to .gitignore: {', '.join(added)}")
    git = Git(root)
    if not git.is_repo():
        git.init()
        done.append("initialised a git repository")
    return done


CLAUDE_SETTINGS = ".claude/settings.json"


def _is_our_hook(entry: Any) -> bool:
    hooks = entry.get("hooks") if isinstance(entry, dict) else None
    if not isinstance(hooks, list):
        return False
    commands = [str(h.get("command", "")) for h in hooks if isinstance(h, dict)]
    return any("vaultops" in c and " hook" in c for c in commands)


def wire_claude_hook(project: Path, command: str) -> list[str]:
    """Add (or update) vaultops's PreToolUse hook in ``project/.claude/settings.json``, keeping every other
    setting; running it twice changes nothing.  Returns a line per thing done."""
    path = project / CLAUDE_SETTINGS
    settings: Any = {}
    if path.exists():
        try:
            settings = json.loads(path.read_text(encoding="utf-8") or "{}")
        except (ValueError, OSError) as exc:
            raise VaultopsError(f"{path}: not valid JSON ({exc}); fix it and run this again") from None
    if not isinstance(settings, dict) or not isinstance(settings.setdefault("hooks", {}), dict):
        raise VaultopsError(f"{path}: expected a JSON object whose hooks are an object; fix it and retry")
    pre = settings["hooks"].setdefault("PreToolUse", [])
    if not isinstance(pre, list):
        raise VaultopsError(f"{path}: hooks.PreToolUse is not a list; fix it and run this again")
    wanted = hook_entry(command)
    ours = [i for i, entry in enumerate(pre) if _is_our_hook(entry)]
    if ours and pre[ours[0]] == wanted and len(ours) == 1:
        return []
    for i in reversed(ours[1:]):
        del pre[i]
    if ours:
        pre[ours[0]] = wanted
    else:
        pre.append(wanted)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".vaultops.tmp")
    tmp.write_text(json.dumps(settings, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return [f"{'updated' if ours else 'added'} the vaultops hook in {path} (PreToolUse: every tool)"]
