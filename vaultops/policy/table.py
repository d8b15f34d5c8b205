"""The policy table: which actions are approved, escalated to the person, or denied
(docs/architecture.md, "Approvals: the policy").

Every tool call and every worker REQUEST is first mapped to one or more named *actions*; this table gives
each action a verdict.  The defaults are the seed's approval table, extended with the actions a Claude Code
tool call can take.  ``[policy]`` in the config overrides single entries, within floors: some actions may
never be approved (a merge is always the person's call; a command that cannot be parsed never runs unseen).
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["approve", "escalate", "deny"]
KINDS: tuple[Kind, ...] = ("approve", "escalate", "deny")
# The order of restriction: the most restrictive verdict of a call's actions wins.
RANK: dict[Kind, int] = {"approve": 0, "escalate": 1, "deny": 2}

# action -> (default verdict, what it covers); the text doubles as docs/safety/gate.md's table and reasons.
DEFAULTS: dict[str, tuple[Kind, str]] = {
    # --- the seed's table: worker REQUESTs (and the same actions in tool calls) ---
    "create_worktree": ("approve", "create a git worktree for the job"),
    "run_build": ("approve", "build, install dependencies, lint, format"),
    "run_tests": ("approve", "run the tests"),
    "open_draft_pr": ("approve", "open a draft pull request"),
    "push_own_branch": ("approve", "push to the worker's own branch"),
    "comment_external": ("escalate", "comment on or change an external tracker (issues, PRs, Asana, Jira)"),
    "merge_pr": ("escalate", "merge a pull request, push to main/master, or force-push"),
    "modify_outside_worktree": ("deny", "modify files outside the job's worktree"),
    "scope_expansion": ("deny", "work beyond the job's scope (the person is told)"),
    "unknown": ("escalate", "anything not recognised"),
    # --- what a Claude Code tool call can do besides ---
    "read": ("approve", "read or list files inside the worktree, inspect the system read-only"),
    "edit_worktree": ("approve", "create, edit or delete single files inside the worktree"),
    "run_local": ("approve", "run a program or script in the worktree"),
    "git_local": ("approve", "local git work: add, commit, branch, checkout, stash, fetch, pull"),
    "temp_write": ("approve", "write under /tmp or to /dev/null"),
    "network_read": ("approve", "download: GET requests, git clone, web fetch"),
    "network_unlisted": ("escalate", "a web tool reaching a host the profile's domains do not list"),
    "read_outside_worktree": ("escalate", "read files outside the worktree"),
    "read_secrets": ("escalate", "read keys, tokens and credentials (~/.ssh, ~/.aws, .env, …)"),
    "push_other_branch": ("escalate", "push to a branch that is not the worker's own"),
    "open_pr": ("escalate", "open a pull request that is not a draft, or mark one ready"),
    "delete_tree": ("escalate", "delete recursively or discard work (rm -r, git clean, git reset --hard)"),
    "delete_branch": ("escalate", "delete a branch or a tag, locally or on the remote"),
    "network_write": ("escalate", "send data out: POST/PUT/DELETE requests, scp, rsync to a host"),
    "remote_exec": ("escalate", "run commands on another machine (ssh)"),
    "payment": ("escalate", "payment APIs and tools (Stripe, PayPal, …): charges, products, prices"),
    "message_external": ("escalate", "send e-mail, SMS or chat messages"),
    "key_rotation": ("escalate", "create, rotate or load keys and tokens (ssh-keygen, gh auth, …)"),
    "system_change": ("escalate", "change the system: services, packages, users, mounts, schedules"),
    "privileged": ("escalate", "run as another user (sudo, su, doas)"),
    "kill_process": ("escalate", "signal or kill processes"),
    "database": ("escalate", "database clients and migrations"),
    "deploy": ("escalate", "publish or deploy: package registries, cloud and cluster tools"),
    "modify_policy": ("deny", "change what guards the agent: .claude settings and hooks, vaultops config"),
    "unparsable": ("escalate", "a command the policy cannot parse"),
    "fetch_metadata": ("deny", "reach a cloud metadata or link-local address (the machine's credentials)"),
    "send_secret": ("deny", "send a key, token or password out: in a URL, a header, a body, or a query"),
}

# Overrides may not go below these: "merge a PR → always escalate"; what cannot be parsed or is not known
# must never run unseen, the guard must not be able to approve its own removal, and the machine's cloud
# credentials are never handed to an agent, nor may a secret be sent out, whatever the host.
FLOORS: dict[str, Kind] = {
    "merge_pr": "escalate",
    "unparsable": "escalate",
    "modify_policy": "escalate",
    "fetch_metadata": "deny",
    "send_secret": "deny",
}

# MCP tools are named by the table directly: ``mcp__server__tool`` or ``mcp__server__*``.
_MCP_KEY = re.compile(r"^mcp__[A-Za-z0-9_.-]+__(?:[A-Za-z0-9_.-]+|\*)$")


@dataclass(frozen=True)
class Action:
    """One thing a call would do: a table name, and what exactly (for the reason the agent and person see)."""

    name: str
    detail: str = ""


@dataclass(frozen=True)
class Verdict:
    """The answer to a call or request: approve, escalate or deny, why, and which action decided it.

    ``notify`` is set where the person must hear of a denial too (scope expansion)."""

    kind: Kind
    reason: str
    action: str = "unknown"
    notify: bool = False

    @property
    def allowed(self) -> bool:
        return self.kind == "approve"


@dataclass(frozen=True)
class PolicyTable:
    """The table in force: the defaults with the config's overrides on top."""

    overrides: Mapping[str, Kind] = field(default_factory=dict)

    def kind(self, action: str) -> Kind:
        if action in self.overrides:
            return self.overrides[action]
        if action.startswith("mcp__"):
            for key, kind in self.overrides.items():
                if key.endswith("*") and fnmatch.fnmatchcase(action, key):
                    return kind
            return self.kind("unknown")  # an MCP tool the table does not name
        if action in DEFAULTS:
            return DEFAULTS[action][0]
        return self.kind("unknown")

    def verdict(self, action: Action) -> Verdict:
        kind = self.kind(action.name)
        what = DEFAULTS.get(action.name, ("", action.name))[1] if not action.name.startswith("mcp__") else ""
        detail = action.detail or what or action.name
        reason = f"{detail} ({action.name}: {kind})"
        return Verdict(kind, reason, action.name, notify=action.name == "scope_expansion" and kind == "deny")


def check_overrides(raw: Mapping[str, object]) -> tuple[dict[str, Kind], list[str]]:
    """Check ``[policy]`` entries: (the overrides, problems); a problem names the key and what is allowed."""
    out: dict[str, Kind] = {}
    problems: list[str] = []
    for key, value in raw.items():
        if key not in DEFAULTS and not _MCP_KEY.match(key):
            close = difflib.get_close_matches(key, DEFAULTS, n=1)
            known = f"known: {', '.join(DEFAULTS)}, mcp__server__tool"
            hint = f"did you mean {close[0]}?" if close else known
            problems.append(f"[policy] {key} is not a known action ({hint})")
            continue
        if value not in KINDS:
            problems.append(f"[policy] {key} must be one of approve, escalate, deny, got {value!r}")
            continue
        kind: Kind = value  # narrowed by the check just above
        floor = FLOORS.get(key)
        if floor is not None and RANK[kind] < RANK[floor]:
            problems.append(f"[policy] {key} cannot be {kind}: it is at least {floor}, always")
            continue
        out[key] = kind
    return out, problems


def most_restrictive(verdicts: Iterable[Verdict]) -> Verdict | None:
    """The verdict that wins: deny over escalate over approve; the first of equals keeps its reason."""
    best: Verdict | None = None
    for v in verdicts:
        if best is None or RANK[v.kind] > RANK[best.kind]:
            best = v
    return best
