"""Decisions: the table applied to every action of a tool call or a worker's request.

The most restrictive verdict of all the actions wins (deny over escalate over approve), so joining a safe
command to a dangerous one can never make the pair look safe.  A worker's REQUEST is read together with its
recent messages (the last ``WINDOW``): its own branch is the one its ``[REQUEST:create_worktree]`` named when
the job did not name one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vaultops.policy.bash import SimpleCommand, Word
from vaultops.policy.judge import Judge
from vaultops.policy.own_code import own_code_actions
from vaultops.policy.paths import Scope, branch_name, is_protected
from vaultops.policy.table import DEFAULTS, RANK, Action, PolicyTable, Verdict
from vaultops.policy.tags import Problem, Tag, parse_lines
from vaultops.policy.tools import ToolCall, call_actions
from vaultops.policy.web import unlisted_web
from vaultops.policy.written import Written

WINDOW = 20  # the worker's messages a request is read with (docs/architecture.md, "Approvals: the policy")
MAX_REASONS = 3  # reasons quoted in a verdict; the rest are counted

# What workers call their requests, mapped to the table's names.
_ALIASES: dict[str, str] = {
    **dict.fromkeys(("worktree", "new_worktree", "git_worktree", "create_worktree"), "create_worktree"),
    **dict.fromkeys(("build", "compile", "run_build"), "run_build"),
    **dict.fromkeys(("test", "tests", "run_test", "run_tests", "ci"), "run_tests"),
    **dict.fromkeys(
        ("draft_pr", "create_draft_pr", "open_draft_pr", "open_draft_pull_request"), "open_draft_pr"
    ),
    **dict.fromkeys(("pr", "create_pr", "open_pr", "open_pull_request", "create_pull_request"), "open_pr"),
    **dict.fromkeys(("push", "push_branch", "push_to_branch", "git_push", "push_own_branch"), "push"),
    **dict.fromkeys(
        (
            "comment",
            "post_comment",
            "asana_comment",
            "post_asana_comment",
            "jira_comment",
            "comment_on_issue",
            "tracker_comment",
            "comment_pr",
            "comment_external",
            "post_asana",
            "comment_issue",
        ),
        "comment_external",
    ),
    **dict.fromkeys(("merge", "merge_pr", "merge_pull_request", "merge_branch"), "merge_pr"),
    **dict.fromkeys(("edit", "modify_files", "edit_file", "edit_files", "write_file", "modify_file"), "edit"),
    **dict.fromkeys(
        ("modify_outside_worktree", "edit_outside_worktree", "write_outside_worktree"),
        "modify_outside_worktree",
    ),
    **dict.fromkeys(("scope_expansion", "expand_scope"), "scope_expansion"),
}
_TRUE = frozenset({"1", "true", "yes", "y", "on"})


@dataclass(frozen=True)
class WorkerContext:
    """What a worker's request is judged with: the job's scope and the worker's recent messages (oldest
    first; only the last ``WINDOW`` count)."""

    scope: Scope
    messages: tuple[str, ...] = ()

    @property
    def window(self) -> tuple[str, ...]:
        return self.messages[-WINDOW:]


def decide_actions(actions: Sequence[Action], table: PolicyTable | None = None) -> Verdict:
    """The verdict on a set of actions: the most restrictive one, with the reasons of those that gave it."""
    table = table or PolicyTable()
    if not actions:
        return Verdict("escalate", "nothing to judge, so nothing is assumed safe", "unknown")
    verdicts = [table.verdict(a) for a in actions]
    worst = max(RANK[v.kind] for v in verdicts)
    winners = [v for v in verdicts if RANK[v.kind] == worst]
    reasons: list[str] = []
    for v in winners:
        if v.reason not in reasons:
            reasons.append(v.reason)
    shown = "; ".join(reasons[:MAX_REASONS])
    if len(reasons) > MAX_REASONS:
        shown += f"; and {len(reasons) - MAX_REASONS} more"
    first = winners[0]
    return Verdict(first.kind, shown, first.action, notify=any(v.notify for v in winners))


def decide_call(
    call: ToolCall,
    scope: Scope,
    table: PolicyTable | None = None,
    *,
    written: Written | None = None,
    fenced: bool = False,
    domains: tuple[str, ...] | None = None,
) -> Verdict:
    """The verdict on one Claude Code tool call.

    ``written``: what the job wrote before this call (``vaultops.policy.written``); running it, or what this
    very call writes, is judged unknown unless the call runs inside the operating system's sandbox.
    ``fenced``: the job's Bash commands run in that sandbox; a Bash call that asks to leave it
    (``dangerouslyDisableSandbox``) is then denied outright, whatever the table says.  ``domains``: the
    hosts the job's web tools may reach (``vaultops.policy.hosts.unlisted_web``); None: no list."""
    if fenced and unfenced_request(call):
        shown = str(call.tool_input.get("command", ""))[:120]
        why = (
            f"`{shown}` asks to run outside the operating system's sandbox (dangerouslyDisableSandbox), "
            "and every command of this job runs inside it"
        )
        return Verdict("deny", why, "leave_sandbox")
    actions = call_actions(call, scope) + own_code_actions(call, scope, written or Written(), fenced)
    if domains is not None and (unlisted := unlisted_web(call.tool_name, call.tool_input, domains)):
        actions.append(Action("network_unlisted", unlisted))
    return decide_actions(actions, table)


def unfenced_request(call: ToolCall) -> bool:
    """A Bash call that asks Claude Code to run it outside its sandbox."""
    return call.tool_name == "Bash" and bool(call.tool_input.get("dangerouslyDisableSandbox"))


# --- worker requests ---------------------------------------------------------------------------------------


def own_branch(context: WorkerContext) -> str | None:
    """The job's branch, else the branch of the last worktree the worker asked for within the window."""
    if context.scope.own_branch:
        return context.scope.own_branch
    branch = None
    for item in parse_lines("\n".join(context.window)):
        if isinstance(item, Tag) and item.kind == "REQUEST" and _ALIASES.get(item.label) == "create_worktree":
            branch = item.params.get("branch") or branch
    return branch


def request_actions(tag: Tag, context: WorkerContext) -> list[Action]:
    """What a ``[REQUEST:…]`` asks to do, as table actions."""
    label = _ALIASES.get(tag.label, tag.label)
    params = tag.params
    shown = f"[REQUEST:{tag.label}]" + (f" {tag.text}" if tag.text else "")
    if label == "push":
        return _push(tag, context, shown)
    if label == "open_pr" and params.get("draft", "").lower() in _TRUE:
        return [Action("open_draft_pr", f"{shown}: opens a draft pull request")]
    if label == "edit":
        return _edit(tag, context, shown)
    if label in DEFAULTS or label.startswith("mcp__"):
        return [Action(label, f"{shown}: {DEFAULTS.get(label, ('', 'an MCP tool'))[1]}")]
    return [Action("unknown", f"{shown}: not an action in the policy table")]


def _push(tag: Tag, context: WorkerContext, shown: str) -> list[Action]:
    params = tag.params
    mine = own_branch(context)
    target = branch_name(params.get("branch") or params.get("ref") or params.get("to") or mine or "")
    actions: list[Action] = []
    if params.get("force", "").lower() in _TRUE:
        actions.append(Action("merge_pr", f"{shown}: a forced push rewrites the remote's history"))
    if not target:
        actions.append(Action("push_other_branch", f"{shown}: names no branch, and the worker has none yet"))
    elif is_protected(target):
        actions.append(Action("merge_pr", f"{shown}: pushes to {target}"))
    elif target == mine:
        actions.append(Action("push_own_branch", f"{shown}: pushes to {target}, the worker's own branch"))
    else:
        actions.append(
            Action("push_other_branch", f"{shown}: {target} is not the worker's own branch ({mine})")
        )
    return actions


def _edit(tag: Tag, context: WorkerContext, shown: str) -> list[Action]:
    raw = [v for k in ("path", "file", "files", "paths") if (v := tag.params.get(k))]
    paths = [p.strip() for value in raw for p in value.split(",") if p.strip()]
    if not paths:
        return [Action("unknown", f"{shown}: an edit that names no file")]
    scope = context.scope
    judge = Judge(SimpleCommand((Word("edit"),)), scope, scope.workdir)
    judge.text = shown
    for path in paths:
        judge.write(Word(path), "edits")
    return judge.actions


def decide_request(item: Tag | Problem, context: WorkerContext, table: PolicyTable | None = None) -> Verdict:
    """The verdict on one tagged line of a worker.

    A REQUEST is decided by the table; a worker's own ESCALATE is at least escalated (and scope expansion is
    denied, and the person told); STATUS and DONE ask for nothing; a malformed tag is escalated."""
    if isinstance(item, Problem):
        return decide_actions(
            [Action("unparsable", f"the worker's line cannot be read: {item.message}")], table
        )
    if item.kind == "REQUEST":
        return decide_actions(request_actions(item, context), table)
    if item.kind == "ESCALATE":  # the worker asks the person itself: no table entry can approve that
        label = _ALIASES.get(item.label, item.label)
        shown = f"[ESCALATE:{item.label}] {item.text}".strip()
        if label in DEFAULTS:
            named = decide_actions([Action(label, shown)], table)
            if RANK[named.kind] > RANK["escalate"]:
                return named
        return Verdict("escalate", f"the worker asks the person: {shown}", label)
    return Verdict("approve", f"[{item.kind}:{item.label}] reports, asks for nothing", "report")


def decide_messages(
    text: str | Iterable[str], context: WorkerContext, table: PolicyTable | None = None
) -> list[tuple[Tag | Problem, Verdict]]:
    """Every tagged line of a worker's message with its verdict; chatter is left out."""
    return [(item, decide_request(item, context, table)) for item in parse_lines(text)]
