"""A Claude Code tool call as policy actions.

``Bash`` is split into its simple commands (``bash.py``) and each is judged (``commands.py``); ``Edit``,
``Write``, ``MultiEdit`` and ``NotebookEdit`` write their path; ``Read``, ``Glob``, ``Grep`` and ``LS`` read
theirs; an MCP tool (``mcp__server__tool``) is its own action, which the table names or escalates; a tool
this module does not know is ``unknown``.  Malformed input (a missing path, a command that is not text) is
``unparsable``: never approved.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vaultops.base.redact import redact
from vaultops.policy.bash import SimpleCommand, Word, split_command
from vaultops.policy.commands import command_actions
from vaultops.policy.egress import bash_leak, input_leak
from vaultops.policy.hosts import metadata_targets
from vaultops.policy.judge import Judge
from vaultops.policy.paths import Scope, is_secret
from vaultops.policy.same_call import same_call_actions
from vaultops.policy.table import Action

WRITE_TOOLS = {
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
READ_TOOLS = {
    "Read": "file_path",
    "NotebookRead": "notebook_path",
    "LS": "path",
    "Glob": "path",
    "Grep": "path",
}
# Tools that touch nothing outside the conversation; a subagent's own tool calls come through the hook too.
HARMLESS_TOOLS = frozenset(
    {
        "TodoWrite",
        "TodoRead",
        "Task",
        "Agent",
        "ExitPlanMode",
        "EnterPlanMode",
        "AskUserQuestion",
        "BashOutput",
        "KillShell",
        "KillBash",
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
        "TaskOutput",
        "TaskList",
        "TaskGet",
    }
)
NETWORK_READ_TOOLS = frozenset({"WebFetch", "WebSearch"})


@dataclass(frozen=True)
class ToolCall:
    """One tool call as Claude Code's hook payload gives it; ``cwd`` is where a Bash command starts."""

    tool_name: str
    tool_input: Mapping[str, Any] = field(default_factory=dict)
    cwd: str = "/"


def _path_word(call: ToolCall, key: str, default: str | None = None) -> Word | None:
    value = call.tool_input.get(key, default)
    if not isinstance(value, str) or not value:
        return None
    return Word(value)


def call_actions(call: ToolCall, scope: Scope) -> list[Action]:
    """Every action ``call`` would take, judged against ``scope``."""
    name = call.tool_name
    if name == "Bash":
        return _bash(call, scope)
    if name in WRITE_TOOLS:
        word = _path_word(call, WRITE_TOOLS[name])
        if word is None:
            return [Action("unparsable", f"{name} without a {WRITE_TOOLS[name]}")]
        judge = _judge(call, scope, name, word.text)
        judge.write(word, "edits" if name != "Write" else "writes")
        return judge.actions
    if name in READ_TOOLS:
        return _read(call, scope)
    if name in HARMLESS_TOOLS:
        return [Action("read", f"{name} changes nothing outside the conversation")]
    if name in NETWORK_READ_TOOLS:
        target = call.tool_input.get("url") or call.tool_input.get("query") or ""
        if not isinstance(target, str):
            return [Action("unparsable", f"{name} with a url that is not text")]
        leak = input_leak(name, call.tool_input, ("url", "query", "allowed_domains", "blocked_domains"))
        if leak is not None:  # the request itself carries it out, to whichever host
            return [leak]
        if name == "WebFetch" and metadata_targets(target, bare=True):
            return [Action("fetch_metadata", f"{name} {str(target)[:120]}: a cloud metadata address")]
        return [Action("network_read", f"{name} {str(target)[:120]}".strip())]
    if name.startswith("mcp__"):
        leak = input_leak(name, call.tool_input)  # an MCP server sends its arguments to its service
        return [Action(name, f"the MCP tool {name}"), *([leak] if leak is not None else [])]
    return [Action("unknown", f"the tool {name!r} is not one the policy knows")]


def _judge(call: ToolCall, scope: Scope, name: str, shown: str) -> Judge:
    """A ``Judge`` for a path-taking tool: the same path rules as a shell command's arguments."""
    judge = Judge(SimpleCommand((Word(name), Word(shown))), scope, call.cwd)
    judge.text = f"{name} {shown}"
    return judge


def _read(call: ToolCall, scope: Scope) -> list[Action]:
    name = call.tool_name
    key = READ_TOOLS[name]
    default = call.cwd if name in ("Glob", "Grep", "LS") else None
    word = _path_word(call, key, default)
    if word is None:
        return [Action("unparsable", f"{name} without a {key}")]
    judge = _judge(call, scope, name, word.text)
    judge.read(word)
    pattern = call.tool_input.get("pattern") if name == "Glob" else call.tool_input.get("glob")
    if name == "Grep" and (
        (isinstance(pattern, str) and is_secret(pattern)) or call.tool_input.get("type") == "env"
    ):
        judge.add("read_secrets", f"Grep over files named {pattern or '*.env'}, which hold keys or tokens")
    if isinstance(pattern, str) and (pattern.startswith(("/", "~")) or ".." in pattern):
        # a pattern can leave the folder it starts from: judge the fixed part in front of its first wildcard
        fixed = pattern.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]
        judge.read(Word(posixpath.join(word.text, fixed) if not fixed.startswith(("/", "~")) else fixed))
    return judge.actions


def _bash(call: ToolCall, scope: Scope) -> list[Action]:
    command = call.tool_input.get("command")
    if not isinstance(command, str):
        return [Action("unparsable", "a Bash call without a command")]
    split = split_command(command)
    actions = [Action("unparsable", f"`{command[:120]}`: {problem}") for problem in split.problems]
    for cmd in split.commands:
        actions.extend(command_actions(cmd, scope, call.cwd))
    actions.extend(same_call_actions(split.commands, scope, call.cwd))
    leak = bash_leak(command, split.commands, actions)
    if leak is not None:  # every reason quotes the command: none may show what it would send
        actions = [Action(a.name, redact(a.detail)) for a in actions] + [leak]
    if not actions:
        actions.append(Action("read", "an empty command"))
    return actions
