"""``vaultops init``: create what a vault needs, never overwriting anything that is there."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from vaultops.base.confine import confine, make_dirs, write_text
from vaultops.base.errors import VaultopsError
from vaultops.base.layout import CONFIG_FILE, DEFAULT_INBOX, DEFAULT_QUEUE, named_vault, vault_folder
from vaultops.commands.hook import hook_command
from vaultops.commands.init_commit import commit_init, dirty_before, untracked
from vaultops.commands.init_left import left_lines
from vaultops.commands.output import Output
from vaultops.hook.claude import hook_entry
from vaultops.sync.git import Git, GitError

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

# Model triage (optional): a second opinion on each request, asked once per version of its block.  It can
# only make a request stricter (see docs/safety/deciding.md, Model triage).  Claude Code with no tools, asked
# for JSON; it still runs behind the policy gate, as every Claude job does.
# [profiles.triage]
# command = ["claude", "-p", "{prompt}", "--output-format", "json", "--tools", ""]
# output = "claude-json"
# timeout = 120
# health = ["claude", "--version"]
#
# [classify]
# triage = "triage"                 # the profile above; unset: the rules alone decide
# triage_timeout = 60               # seconds (never more than the profile's timeout); then the rules decide

[routing]                           # type -> profiles, first one first
# default = ["worker-code"]

[notify]
urls = []                           # apprise URLs; put secrets in local.toml

[git]
push = true
claim_offline = false

# Answers (optional): count the person's answers only from git commits by these authors, for a vault where
# agents write requests too (see docs/safety/answers.md, How answers are trusted).
# [answers]
# authors = ["Ann Example <ann@example.org>"]
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


def _write_new(root: Path, rel: str, text: str) -> bool:
    """Write a file init owns, if it is missing; never through a symlink out of the vault."""
    path = confine(root / rel, root)
    if path.exists():
        return False
    make_dirs(path.parent, root)
    write_text(path, text, root)
    return True


def init(vault: str | None = None, claude: str | None = None) -> Output:
    """``vaultops init [DIR] [--claude PROJECT]``: scaffold the vault (DIR, else ``$VAULTOPS_VAULT``, else
    the current folder), and with ``claude`` wire ``vaultops hook`` for that vault into PROJECT's Claude
    Code settings.  ``--claude`` without a vault named on the command line scaffolds nothing."""
    done: list[str] = []
    if claude is None or vault:
        done = init_vault(vault_folder(vault))
    if claude is not None:
        project = Path(claude).expanduser()
        if not project.is_dir():
            raise VaultopsError(f"{project}: no such folder; pass the working directory Claude Code runs in")
        done += wire_claude_hook(project, hook_command(named_vault(vault)))
    return Output(done or ["nothing to do: everything is already set up"])


def init_vault(root: Path, inbox: str = DEFAULT_INBOX, queue: str = DEFAULT_QUEUE) -> list[str]:
    """Create what is missing, and commit what it wrote when the folder is a git repository (in a commit
    of its own: see init_commit); returns a line per thing done."""
    done: list[str] = []
    if not root.exists():
        root.mkdir(parents=True)
        done.append(f"created {root}")
    root = root.resolve()
    theirs = dirty_before(root, (CONFIG_FILE, inbox, ".gitignore"))
    changed: list[str] = []
    if _write_new(root, CONFIG_FILE, DEFAULT_CONFIG):
        changed.append(CONFIG_FILE)
        done.append(f"wrote {CONFIG_FILE}")
    make_dirs(root / ".vaultops" / "state", root)
    if _write_new(root, inbox, INBOX_HEADER):
        changed.append(inbox)
        done.append(f"wrote {inbox} (empty inbox with a header that explains the format)")
    queue_path = confine(root / queue, root)
    if not queue_path.exists():
        make_dirs(queue_path, root)
        done.append(f"created {queue}/")
    added = _append_missing_lines(confine(root / ".gitignore", root), IGNORE_LINES)
    if added:
        changed.append(".gitignore")
        done.append(f"added to .gitignore: {', '.join(added)}")
    git = Git(root)
    fresh = False
    if not git.is_repo():
        with contextlib.suppress(GitError, OSError, subprocess.SubprocessError):
            git.init()
            done.append("initialised a git repository")
            fresh = True
    # A repository init just made holds nothing of the person's yet: vaultops's own files that were
    # there already (a copy of the template) go in too, or the other machines never get the config.
    own = [rel for rel in (CONFIG_FILE, inbox, ".gitignore") if (root / rel).is_file()]
    if fresh:
        changed = [rel for rel in own if rel not in changed] + changed
    if changed:
        done += commit_init(root, changed, theirs)
    done += [
        f"{rel} is not committed: commit it, so that your other machines get it"
        for rel in own
        if rel not in changed and untracked(root, rel)
    ]
    if changed:  # a first init: say what the commit left out, and where this machine's own settings go
        done += left_lines(root, own)
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
