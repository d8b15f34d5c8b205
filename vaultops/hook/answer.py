"""One Claude Code hook event in, the policy's decision out: what the hook prints and how it exits.

Claude Code runs the hook before each tool call, with the event as JSON on stdin, and reads the decision
from stdout (``fixtures/claude-code/``: a deny stops the call and the model sees the reason; exit code 2
with a reason on stderr blocks too; exit 1 and a hook that times out do NOT block).  So every answer here
fails closed on its own:

- a decided call: the decision JSON, exit 0 (an escalated call is denied, its reason saying the person
  was asked, and one JSON line goes to ``<vault>/.vaultops/state/escalations.jsonl``);
- any error once the event is known (bad config, an exception): a deny JSON, exit 0, so the model sees why;
- input that is not an event it answers (not JSON, another event): exit 2 with the reason on stderr, which
  blocks whatever the event was.

The config's ``[policy]`` tables are read by the config files' one reader (``vaultops.base.config_files``) and
checked by the same function ``vaultops.config`` uses, so answering needs no pydantic.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vaultops.base.config_files import UnreadableConfig, policy_tables
from vaultops.base.errors import ConfigError
from vaultops.base.redact import redact
from vaultops.hook.halt import halted
from vaultops.hook.job import GateJob
from vaultops.hook.memory import Memory
from vaultops.policy.decide import decide_call
from vaultops.policy.paths import Scope, is_protected
from vaultops.policy.table import PolicyTable, Verdict, check_overrides
from vaultops.policy.tools import ToolCall
from vaultops.policy.written import Written, writes_of
from vaultops.store.asked import consume_allowance, fingerprint, record_escalation

EVENTS = ("PreToolUse", "PermissionRequest")
PREFIX = "vaultops policy"


class GateError(Exception):
    """A reason to deny that is not the policy's verdict (the config cannot be read, the vault is gone)."""


@dataclass(frozen=True)
class HookAnswer:
    """What the hook prints and how it exits."""

    stdout: str
    stderr: str = ""
    exit_code: int = 0


# --- the decision JSON ------------------------------------------------------------------------------------


def decision_json(event: str, allow: bool, reason: str) -> dict[str, Any]:
    """Claude Code's answer for ``event``: PreToolUse's ``permissionDecision`` or PermissionRequest's
    ``decision.behavior`` (with ``message`` on a deny, which the model sees)."""
    if event == "PermissionRequest":
        decision: dict[str, Any] = {"behavior": "allow"} if allow else {"behavior": "deny", "message": reason}
        return {"hookSpecificOutput": {"hookEventName": event, "decision": decision}}
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow" if allow else "deny",
            "permissionDecisionReason": reason,
        }
    }


def _answer(event: str, allow: bool, reason: str, note: str = "") -> HookAnswer:
    """The reason quotes the call, and Claude Code keeps it in its transcript: redacted like any text."""
    reason, note = redact(reason), redact(note)
    return HookAnswer(json.dumps(decision_json(event, allow, reason), ensure_ascii=False) + "\n", note)


def refusal(event: str, why: str) -> HookAnswer:
    """Fail closed: a deny for a known event, else exit 2 with the reason on stderr (blocks any event)."""
    reason = f"{PREFIX}: denied because the hook could not decide: {why}"
    if event in EVENTS:
        return _answer(event, False, reason, reason + "\n")
    return HookAnswer("", reason + "\n", 2)


# --- escalations ------------------------------------------------------------------------------------------


def escalation_for(
    call: ToolCall, verdict: Verdict, event: Mapping[str, Any], scope: Scope, job: GateJob
) -> dict[str, Any]:
    """The record of an escalated (or denied-and-told) call, as the pipeline reads it from
    ``escalations.jsonl``: enough to tell the person, and to resume the session (``claude --resume
    <session_id>``) with a one-time allowance for exactly this call."""
    return {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "kind": verdict.kind,
        "action": verdict.action,
        "reason": verdict.reason,
        "notify": verdict.notify or verdict.kind == "escalate",
        "tool_name": call.tool_name,
        "tool_input": dict(call.tool_input),
        "fingerprint": fingerprint(call.tool_name, call.tool_input),
        "cwd": call.cwd,
        "workdir": scope.workdir,
        "request": job.request or None,
        "claim": job.claim or None,
        "session_id": event.get("session_id"),
        "tool_use_id": event.get("tool_use_id"),
        "transcript_path": event.get("transcript_path"),
        "event": event.get("hook_event_name"),
    }


# --- the scope and the table ------------------------------------------------------------------------------


def current_branch(workdir: str) -> str | None:
    """The branch checked out in ``workdir``, read from ``.git/HEAD`` (a worktree's ``.git`` file too)."""
    git = Path(workdir) / ".git"
    try:
        if git.is_file():
            target = git.read_text().strip().removeprefix("gitdir:").strip()
            git = (Path(workdir) / target).resolve()
        head = (git / "HEAD").read_text().strip()
    except (OSError, ValueError):
        return None
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else None


def scope_for(job: GateJob, cwd: str, environ: Mapping[str, str]) -> Scope:
    """The job's scope: its workdir (else the event's cwd); its own branch, else the branch checked out
    unless it is protected; the temp folders of ``environ``."""
    workdir = job.workdir or os.path.abspath(os.path.expanduser(cwd))
    branch = current_branch(workdir)
    own = job.branch or (branch if branch and not is_protected(branch) else None)
    temp = ["/tmp", "/var/tmp"]
    if environ.get("TMPDIR"):
        temp.insert(0, environ["TMPDIR"].rstrip("/") or "/tmp")
    return Scope(
        workdir=workdir,
        home=environ.get("HOME") or os.path.expanduser("~"),
        own_branch=own,
        current_branch=branch,
        files=job.files,
        temp_dirs=tuple(temp),
        resolve=os.path.realpath,
    )


def load_table(vault: Path | None) -> PolicyTable:
    """The table with the vault's ``[policy]`` overrides (config.toml, then local.toml over it).  Not from
    ``VAULTOPS_*`` variables: a process's environment must not be able to loosen the policy."""
    if vault is None:
        return PolicyTable()
    if not vault.is_dir():
        raise GateError(f"the vault {vault} does not exist, so its policy cannot be read")
    try:
        tables = policy_tables(vault)
    except UnreadableConfig as exc:
        raise GateError(f"{exc.path} cannot be read ({exc.why})") from None
    except ConfigError as exc:
        raise GateError(exc.message) from None
    merged: dict[str, Any] = {}
    for path, section in tables:
        overrides, problems = check_overrides(section)
        if problems:
            raise GateError(f"{path}: {problems[0]}")
        merged.update(overrides)
    return PolicyTable(merged)


# --- the answer -------------------------------------------------------------------------------------------


OnRecord = Callable[[Mapping[str, Any]], None]


def answer(
    stdin_text: str,
    job: GateJob,
    environ: Mapping[str, str] | None = None,
    on_record: OnRecord | None = None,
    memory: Memory | None = None,
) -> HookAnswer:
    """The whole hook as a function: the event's text in, what to print and the exit code out.
    ``on_record`` hears of each escalation once it is recorded (a worker's supervisor tells its plan note);
    ``memory`` is what the job wrote so far (a job's gate server keeps one; a hook started alone has none,
    and judges each call with its own writes only)."""
    try:
        event = json.loads(stdin_text)
    except (ValueError, RecursionError) as exc:
        return refusal("", f"its input is not JSON ({exc})")
    if not isinstance(event, dict):
        return refusal("", "its input is not a JSON object")
    name = event.get("hook_event_name")
    if name not in EVENTS:
        return refusal("", f"the event {name!r} is not one it answers ({', '.join(EVENTS)})")
    if said := halted():  # the fleet's kill switch comes before anything the policy would say
        return _answer(name, False, f"{PREFIX}: denied: the fleet is {said}. Stop now; do nothing more.")
    try:
        return _decide(event, name, job, os.environ if environ is None else environ, on_record, memory)
    except GateError as exc:
        return refusal(name, str(exc))
    except Exception as exc:  # a bug must deny, never let the call through
        return refusal(name, f"internal error {exc!r}")


def _decide(
    event: dict[str, Any],
    name: str,
    job: GateJob,
    environ: Mapping[str, str],
    on_record: OnRecord | None,
    memory: Memory | None,
) -> HookAnswer:
    tool = event.get("tool_name")
    tool_input = event.get("tool_input")
    if not isinstance(tool, str) or not tool:
        raise GateError("the event names no tool")
    if not isinstance(tool_input, dict):
        tool_input = {}
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) and event.get("cwd") else os.getcwd()
    call = ToolCall(tool, tool_input, str(cwd))
    if not job.allows_tool(tool):
        return _answer(name, False, f"{PREFIX}: denied: {tool} is not among this job's tools")
    scope = scope_for(job, call.cwd, environ)
    written = memory.written if memory is not None else Written()
    verdict = decide_call(
        call, scope, load_table(job.vault), written=written, fenced=job.fenced, domains=job.domains
    )
    if verdict.kind == "approve":
        _remember(memory, call, scope)
        return _answer(name, True, f"{PREFIX}: approved: {verdict.reason}")
    # only an escalation can be approved by the person: a denied call never consumes an allowance
    vault = job.vault
    if (
        verdict.kind == "escalate"
        and vault is not None
        and (granted := consume_allowance(vault, tool, tool_input, job.request))
    ):
        _remember(memory, call, scope)
        return _answer(name, True, f"{PREFIX}: approved {granted} by the person: {verdict.reason}")
    if verdict.kind == "deny" and not verdict.notify:
        return _answer(name, False, f"{PREFIX}: denied: {verdict.reason}. Do not try another way around it.")
    escalated = verdict.kind == "escalate"
    asked = "the person has NOT been told (no vault is set for the hook); tell them yourself"
    if vault is not None:
        try:
            record = escalation_for(call, verdict, event, scope, job)
            record_escalation(vault, record)
            asked = "the person has been asked" if escalated else "the person has been told"
            if on_record is not None:
                on_record(record)
        except OSError as exc:
            asked = f"recording it for the person failed ({exc.strerror}); tell them yourself"
    what = "needs the person's approval" if escalated else "is denied"
    reason = f"{PREFIX}: not run: this {what}, and {asked}. {verdict.reason}. Do not retry it; go on or stop."
    return _answer(name, False, reason)


def _remember(memory: Memory | None, call: ToolCall, scope: Scope) -> None:
    """A call let through: what it writes is the agent's own code from now on (before the answer goes out,
    so the next call cannot be judged without it)."""
    if memory is not None:
        memory.remember(writes_of(call, scope))
