"""``vaultops hook``: Claude Code's PreToolUse (and PermissionRequest) hook, answering from the policy table.

Claude Code runs the hook before each matching tool call, with the event as JSON on stdin, and reads the
decision from stdout (``../shared/claude-code/``: a deny stops the call and the model sees the reason; exit
code 2 with a reason on stderr blocks too; exit 1 and a hook that times out do NOT block).  So this command
fails closed on its own:

- a decided call: the decision JSON on stdout, exit 0 (an escalated call is denied, its reason saying the
  person was asked, and one JSON line goes to ``<vault>/.vaultops/state/escalations.jsonl``);
- any error once the event is known (bad config, an exception): a deny JSON, exit 0, so the model sees why;
- input that is not an event it answers (not JSON, another event): exit 2 with the reason on stderr, which
  blocks whatever the event was;
- a watchdog answers deny by itself after ``DEADLINE`` seconds, long before Claude Code's hook timeout.

It imports only the standard library and ``vaultops.policy`` (no pydantic, no pipeline): it answers in tens
of milliseconds.  The config's ``[policy]`` section is read here with ``tomllib`` and checked by the same
function ``vaultops.config`` uses.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from vaultops.policy.decide import decide_call
from vaultops.policy.paths import Scope, is_protected
from vaultops.policy.table import PolicyTable, Verdict, check_overrides
from vaultops.policy.tools import ToolCall
from vaultops.store.asked import consume_allowance, fingerprint, record_escalation

EVENTS = ("PreToolUse", "PermissionRequest")
CONFIG_FILES = (".vaultops/config.toml", ".vaultops/local.toml")  # as vaultops.config, shared then local
DEADLINE = 5.0  # seconds; Claude Code's own timeout (30 s as wired by `init --claude`) lets the call through
MATCHER = "Bash|Edit|Write|MultiEdit|NotebookEdit|mcp__.*"
PREFIX = "vaultops policy"


class HookError(Exception):
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
    return HookAnswer(json.dumps(decision_json(event, allow, reason), ensure_ascii=False) + "\n", note)


def refusal(event: str, why: str) -> HookAnswer:
    """Fail closed: a deny for a known event, else exit 2 with the reason on stderr (blocks any event)."""
    reason = f"{PREFIX}: denied because the hook could not decide: {why}"
    if event in EVENTS:
        return _answer(event, False, reason, reason + "\n")
    return HookAnswer("", reason + "\n", 2)


# --- escalations and one-time allowances ------------------------------------------------------------------


def escalation_for(
    call: ToolCall,
    verdict: Verdict,
    event: Mapping[str, Any] | None = None,
    scope: Scope | None = None,
    request: str | None = None,
) -> dict[str, Any]:
    """The record of an escalated (or denied-and-told) call, as the pipeline reads it from
    ``escalations.jsonl``: enough to tell the person, and to resume the session (``claude --resume
    <session_id>``) with a one-time allowance for exactly this call (``grant_allowance``).  ``request`` is the
    vault request the job runs for (the dispatcher's ``VAULTOPS_REQUEST``)."""
    event = event or {}
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
        "workdir": scope.workdir if scope else call.cwd,
        "request": request or None,
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


def scope_for(cwd: str, environ: Mapping[str, str]) -> Scope:
    """The job's scope: ``VAULTOPS_WORKDIR`` (set by the dispatcher), else Claude Code's project folder, else
    the event's cwd; the own branch is ``VAULTOPS_BRANCH``, else the branch checked out unless it is main."""
    workdir = environ.get("VAULTOPS_WORKDIR") or environ.get("CLAUDE_PROJECT_DIR") or cwd
    workdir = os.path.abspath(os.path.expanduser(workdir))
    branch = current_branch(workdir)
    own = environ.get("VAULTOPS_BRANCH") or (branch if branch and not is_protected(branch) else None)
    listed = environ.get("VAULTOPS_FILES", "").replace("\n", ",").split(",")
    files = tuple(f.strip() for f in listed if f.strip())
    temp = ["/tmp", "/var/tmp"]
    if environ.get("TMPDIR"):
        temp.insert(0, environ["TMPDIR"].rstrip("/") or "/tmp")
    return Scope(
        workdir=workdir,
        home=environ.get("HOME") or os.path.expanduser("~"),
        own_branch=own,
        current_branch=branch,
        files=files,
        temp_dirs=tuple(temp),
        resolve=os.path.realpath,
    )


def load_table(vault: Path | None) -> PolicyTable:
    """The table with the vault's ``[policy]`` overrides (config.toml, then local.toml over it).  Not from
    ``VAULTOPS_*`` variables: a process's environment must not be able to loosen the policy."""
    if vault is None:
        return PolicyTable()
    if not vault.is_dir():
        raise HookError(f"the vault {vault} does not exist, so its policy cannot be read")
    merged: dict[str, Any] = {}
    for name in CONFIG_FILES:
        path = vault / name
        try:
            with path.open("rb") as fh:
                data = tomllib.load(fh)
        except FileNotFoundError:
            continue
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise HookError(f"{path} cannot be read ({exc})") from None
        section = data.get("policy", {})
        if not isinstance(section, dict):
            raise HookError(f"{path}: [policy] must be a table of action = verdict")
        overrides, problems = check_overrides(section)
        if problems:
            raise HookError(f"{path}: {problems[0]}")
        merged.update(overrides)
    return PolicyTable(merged)


def _tool_allowed(name: str, environ: Mapping[str, str]) -> bool:
    """``VAULTOPS_TOOLS`` (the job's tool list, set by the dispatcher) narrows what may run at all: an "allow"
    from this hook would otherwise run a tool that ``--allowedTools`` left out."""
    raw = environ.get("VAULTOPS_TOOLS")
    if raw is None:
        return True
    for entry in raw.replace(" ", ",").split(","):
        entry = entry.split("(", 1)[0].strip()
        if entry and (name == entry or (entry.startswith("mcp__") and name.startswith(entry + "__"))):
            return True
    return False


# --- the hook ---------------------------------------------------------------------------------------------


def answer(stdin_text: str, environ: Mapping[str, str], vault: Path | None) -> HookAnswer:
    """The whole hook as a function: the event's text in, what to print and the exit code out."""
    try:
        event = json.loads(stdin_text)
    except (ValueError, RecursionError) as exc:
        return refusal("", f"its input is not JSON ({exc})")
    if not isinstance(event, dict):
        return refusal("", "its input is not a JSON object")
    name = event.get("hook_event_name")
    if name not in EVENTS:
        return refusal("", f"the event {name!r} is not one it answers ({', '.join(EVENTS)})")
    try:
        return _decide(event, name, environ, vault)
    except HookError as exc:
        return refusal(name, str(exc))
    except Exception as exc:  # a bug must deny, never let the call through
        return refusal(name, f"internal error {exc!r}")


def _decide(event: dict[str, Any], name: str, environ: Mapping[str, str], vault: Path | None) -> HookAnswer:
    tool = event.get("tool_name")
    tool_input = event.get("tool_input")
    if not isinstance(tool, str) or not tool:
        raise HookError("the event names no tool")
    if not isinstance(tool_input, dict):
        tool_input = {}
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) and event.get("cwd") else os.getcwd()
    call = ToolCall(tool, tool_input, str(cwd))
    if not _tool_allowed(tool, environ):
        return _answer(
            name, False, f"{PREFIX}: denied: {tool} is not among this job's tools ($VAULTOPS_TOOLS)"
        )
    scope = scope_for(call.cwd, environ)
    verdict = decide_call(call, scope, load_table(vault))
    if verdict.kind == "approve":
        return _answer(name, True, f"{PREFIX}: approved: {verdict.reason}")
    # only an escalation can be approved by the person: a denied call never consumes an allowance
    if (
        verdict.kind == "escalate"
        and vault is not None
        and consume_allowance(vault, call.tool_name, call.tool_input)
    ):
        return _answer(name, True, f"{PREFIX}: approved once by the person: {verdict.reason}")
    if verdict.kind == "deny" and not verdict.notify:
        return _answer(name, False, f"{PREFIX}: denied: {verdict.reason}. Do not try another way around it.")
    escalated = verdict.kind == "escalate"
    asked = "the person has NOT been told (no vault is set for the hook); tell them yourself"
    if vault is not None:
        try:
            record = escalation_for(call, verdict, event, scope, environ.get("VAULTOPS_REQUEST"))
            record_escalation(vault, record)
            asked = "the person has been asked" if escalated else "the person has been told"
        except OSError as exc:
            asked = f"recording it for the person failed ({exc.strerror}); tell them yourself"
    what = "needs the person's approval" if escalated else "is denied"
    reason = f"{PREFIX}: not run: this {what}, and {asked}. {verdict.reason}. Do not retry it; go on or stop."
    return _answer(name, False, reason)


def hook_command(vault: Path | None, argv0: str | None = None) -> str:
    """The shell command for ``.claude/settings.json``: this very vaultops (absolute), ``hook``, the vault.

    ``|| exit 2`` turns any other failure (vaultops missing, a crash before it could answer) into Claude
    Code's blocking exit code: a hook that exits 1 would let the call through."""
    argv0 = argv0 if argv0 is not None else sys.argv[0]
    if argv0 and os.path.basename(argv0) == "vaultops" and os.access(argv0, os.X_OK):
        program = [os.path.abspath(argv0)]
    else:
        program = [os.path.abspath(sys.executable), "-m", "vaultops"]
    if vault is not None:
        program += ["--vault", str(vault.resolve())]
    return shlex.join([*program, "hook"]) + " || exit 2"


def _watchdog(event_name: list[str]) -> None:
    """After ``DEADLINE`` s, answer deny and exit at once, whatever is still running (a hung disk, a lock)."""
    if not hasattr(signal, "setitimer"):
        return
    # VAULTOPS_HOOK_DEADLINE may shorten it (tests), never stretch it toward Claude Code's own timeout
    seconds = min(float(os.environ.get("VAULTOPS_HOOK_DEADLINE") or DEADLINE), DEADLINE)

    def expire(signum: int, frame: FrameType | None) -> None:
        out = refusal(event_name[0], f"it took longer than {seconds:g} s")
        with contextlib.suppress(OSError):
            os.write(1, out.stdout.encode())
            os.write(2, out.stderr.encode())
        os._exit(out.exit_code)

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def main(vault_arg: str | None) -> int:
    """``vaultops hook``: read the event, print the decision.  Never raises, never exits 1."""
    event_name = [""]
    try:
        _watchdog(event_name)
        raw = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
        with contextlib.suppress(ValueError, AttributeError):
            peek = json.loads(raw)
            event_name[0] = peek.get("hook_event_name", "") if isinstance(peek, dict) else ""
        vault_text = vault_arg or os.environ.get("VAULTOPS_VAULT")
        vault = Path(vault_text).expanduser() if vault_text else None
        result = answer(raw, os.environ, vault)
    except BaseException as exc:  # the hook must answer, whatever happened
        result = refusal(event_name[0], f"internal error {exc!r}")
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.write(result.stdout)
        sys.stdout.flush()
        sys.stderr.write(result.stderr)
        sys.stderr.flush()
    return result.exit_code
