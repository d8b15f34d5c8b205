"""What one gate guards: the vault whose policy and escalations count, the request and claim the agent
works for, and the folder it may change.  Pure values."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class GateJob:
    """``vault`` None: no vault is known (a person's own session wired by hand), so nothing is recorded
    and the default table holds.  ``tools`` None: the job's tool list is not narrowed."""

    vault: Path | None
    workdir: str  # "": the folder the event says Claude Code runs in
    request: str = ""
    claim: str = ""
    tools: tuple[str, ...] | None = None
    files: tuple[str, ...] = ()
    branch: str = ""  # the job's own branch; else the one checked out, unless it is protected
    # the job's Bash commands run in the operating system's sandbox: running the agent's own files is then
    # the sandbox's to hold, and a call asking to leave it is denied (never read from the environment: an
    # agent's variables must not loosen the gate)
    fenced: bool = False
    # the hosts its commands and web tools may reach (the profile's ``domains``; "*": any host for the web
    # tools); None: no list is known (a session wired by hand), and the web tools are judged as ever
    domains: tuple[str, ...] | None = None
    writable: tuple[str, ...] = ()  # folders its commands may write beyond its own (the profile's)

    def allows_tool(self, name: str) -> bool:
        """Whether the job was given this tool: an "allow" must never run a tool ``--allowedTools`` left
        out.  ``mcp__server`` gives every tool of that server."""
        if self.tools is None:
            return True
        for entry in self.tools:
            entry = entry.split("(", 1)[0].strip()
            if entry and (name == entry or (entry.startswith("mcp__") and name.startswith(entry + "__"))):
                return True
        return False


def split_list(raw: str, *, spaces: bool = True) -> tuple[str, ...]:
    """``"Bash, Read,Grep"`` (split at commas and newlines, and at spaces unless ``spaces`` is false)."""
    raw = raw.replace("\n", ",")
    if spaces:
        raw = raw.replace(" ", ",")
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def job_from_environ(environ: Mapping[str, str], vault: Path | None) -> GateJob:
    """The job as a hook started by hand (``init --claude``) sees it: ``VAULTOPS_*`` variables, else
    Claude Code's project folder, else (workdir "") the event's cwd."""
    workdir = environ.get("VAULTOPS_WORKDIR") or environ.get("CLAUDE_PROJECT_DIR") or ""
    tools = environ.get("VAULTOPS_TOOLS")
    return GateJob(
        vault=vault,
        workdir=os.path.abspath(os.path.expanduser(workdir)) if workdir else "",
        request=environ.get("VAULTOPS_REQUEST", ""),
        claim=environ.get("VAULTOPS_CLAIM", ""),
        tools=split_list(tools) if tools is not None else None,
        files=split_list(environ.get("VAULTOPS_FILES", ""), spaces=False),
        branch=environ.get("VAULTOPS_BRANCH", ""),
    )


def gate_spec(job: GateJob) -> str:
    """The job as one JSON argument, for a process that hosts the gate (a worker's supervisor)."""
    fields = {
        "vault": str(job.vault) if job.vault is not None else None,
        "workdir": job.workdir,
        "request": job.request,
        "claim": job.claim,
        "tools": list(job.tools) if job.tools is not None else None,
        "files": list(job.files),
        "branch": job.branch,
        "fenced": job.fenced,
        "domains": list(job.domains) if job.domains is not None else None,
        "writable": list(job.writable),
    }
    return json.dumps(fields, ensure_ascii=False)


def job_from_spec(text: str) -> GateJob:
    """``gate_spec``'s JSON back as a job; ValueError if it is not one."""
    raw = json.loads(text)
    if not isinstance(raw, dict) or not isinstance(raw.get("workdir"), str):
        raise ValueError("the gate's job is not a JSON object with a workdir")
    tools = raw.get("tools")
    return GateJob(
        vault=Path(raw["vault"]) if raw.get("vault") else None,
        workdir=raw["workdir"],
        request=str(raw.get("request") or ""),
        claim=str(raw.get("claim") or ""),
        tools=tuple(str(t) for t in tools) if isinstance(tools, list) else None,
        files=tuple(str(f) for f in raw.get("files") or ()),
        branch=str(raw.get("branch") or ""),
        fenced=raw.get("fenced") is True,
        domains=tuple(str(d) for d in domains) if isinstance(domains := raw.get("domains"), list) else None,
        writable=tuple(str(w) for w in raw.get("writable") or ()),
    )
