"""Helpers for tests that run the real Claude Code CLI offline, against ``fake_anthropic.FakeAnthropic``.

``scripts/install-claude`` installs the CLI; ``scripts/test`` runs it and exports ``VAULTOPS_CLAUDE_BIN``.
Tests that need it are marked ``@requires_claude`` and skip, saying why, where it is absent.

Settings found by experiment (2.1.197 and 2.1.332):

- ``ANTHROPIC_BASE_URL`` + any ``ANTHROPIC_API_KEY``: no login, no network.
- ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``: no calls to the vendor's hosts, no "session title" request.
- ``CLAUDE_CONFIG_DIR``: sessions, shell snapshots and ``.claude.json`` go there, not to ``$HOME``.
- ``HOME`` set to an empty folder: nothing is written there, and the Bash tool's shell snapshot no longer
  sources the user's ``~/.bashrc``, which made a Bash-tool run 0.75-0.9 s instead of 0.5 s.  A missing HOME
  works too.
- ``CLAUDE_CODE_MAX_RETRIES=0``: a 429/5xx/401 fails at the first answer (about 0.4 s); each retry adds the
  back-off, about 0.5 s for the first.  A ``retry-after`` over 60 s fails at once whatever the setting.
- ``IS_SANDBOX=1`` as root, else ``--dangerously-skip-permissions`` refuses to start (exit 1).
- Inherited ``ANTHROPIC_*``/``CLAUDE_*``/proxy settings are dropped: the developer's own setup cannot leak in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DEFAULT_DIR = Path(
    os.environ.get("VAULTOPS_CLAUDE_DIR") or Path.home() / ".cache" / "vaultops" / "claude-code"
)

# Inherited variables that would change where or how the CLI talks to the API, or which account it uses.
_DROP_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "CLAUDECODE", "AWS_BEARER_TOKEN_BEDROCK", "OTEL_")
_DROP = {
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
    "http_proxy", "https_proxy", "all_proxy", "no_proxy",
    "API_TIMEOUT_MS", "MCP_TIMEOUT", "DISABLE_PROMPT_CACHING", "IS_SANDBOX",
}  # fmt: skip


def _executable(path: str | Path | None) -> str | None:
    if path and os.path.isfile(path) and os.access(path, os.X_OK):
        return str(path)
    return None


def claude_bin() -> str | None:
    """The ``claude`` to test with: ``$VAULTOPS_CLAUDE_BIN``, else the install-claude cache, else on PATH."""
    return (
        _executable(os.environ.get("VAULTOPS_CLAUDE_BIN"))
        or _executable(DEFAULT_DIR / "node_modules" / ".bin" / "claude")
        or shutil.which("claude")
    )


CLI_MISSING = "the Claude Code CLI is not installed (npm missing?): run scripts/install-claude"
requires_claude = pytest.mark.skipif(claude_bin() is None, reason=CLI_MISSING)


def claude_env(base_url: str, config_dir: Path, max_retries: int = 0) -> dict[str, str]:
    """A whole environment for running ``claude`` against the fake API at ``base_url``, offline and fast.

    ``config_dir`` (created) holds the CLI's state; ``config_dir/home`` (created, empty) is its HOME."""
    home = config_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in _DROP and not name.startswith(_DROP_PREFIXES)
    }
    env.update(
        {
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "test-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CONFIG_DIR": str(config_dir),
            "CLAUDE_CODE_MAX_RETRIES": str(max_retries),
            "HOME": str(home),
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
    )
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"
    return env


# -- processes -----------------------------------------------------------------------------------------------
def _stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, ppid, pgrp, session) of a live process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2]), int(fields[3])


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def descendants(pid: int) -> list[int]:
    """Live descendants of ``pid`` (children first), found through /proc.

    Note: the Bash tool of Claude Code runs each command in a new session, so these are not all in the CLI's
    process group; killing that group does not reach them."""
    children: dict[int, list[int]] = {}
    for other in _all_pids():
        stat = _stat(other)
        if stat is not None:
            children.setdefault(stat[1], []).append(other)
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(0), []):
            found.append(child)
            todo.append(child)
    return [p for p in found if alive(p)]


def group_members(pgid: int) -> list[int]:
    """Live processes (not zombies) whose process group or session is ``pgid``."""
    members = []
    for pid in _all_pids():
        stat = _stat(pid)
        if stat is not None and stat[0] != "Z" and pgid in (stat[2], stat[3]):
            members.append(pid)
    return members


def session_of(pid: int) -> int | None:
    stat = _stat(pid)
    return None if stat is None else stat[3]


FAKE_TOOL = '#!/bin/sh\necho "$(basename "$0") $*" >> "{log}"\necho "fake $(basename "$0") ran"\n'


def fake_tools(folder: Path, log: Path, names: tuple[str, ...] = ("gh", "pytest")) -> Path:
    """Executables named ``names`` in ``folder`` that log each call ("gh pr merge 12") to ``log``."""
    folder.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        tool = folder / name
        tool.write_text(FAKE_TOOL.format(log=log))
        tool.chmod(0o755)
    return folder


def wire_hook(vault: Path, project: Path) -> None:
    """`vaultops init --claude PROJECT`, as a user runs it (no VAULTOPS_* from the test's own environment)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("VAULTOPS_")}
    wired = subprocess.run(
        [sys.executable, "-m", "vaultops", "--vault", str(vault), "init", "--claude", str(project)],
        capture_output=True, text=True, env=clean, timeout=60,
    )  # fmt: skip
    assert wired.returncode == 0, wired.stderr


def profile(
    name: str,
    base_url: str,
    config_dir: Path,
    *,
    timeout: int = 60,
    workdir: str = "",
    subscription: bool = False,
) -> str:
    """A ``[profiles.NAME]`` table that runs the real CLI (``-p``, JSON output) against the fake API at
    ``base_url``, with the offline environment's changes in its ``env``.  ``subscription``: logged in with a
    token, as a Claude Pro or Max account is, instead of an API key (the CLI then reads the API's usage-limit
    headers, ``fake_anthropic.UsageLimit``); an empty key is as good as none to it."""
    env = claude_env(base_url, config_dir, max_retries=0)
    if subscription:
        env |= {"ANTHROPIC_API_KEY": "", "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-test"}
    changed = {k: v for k, v in env.items() if os.environ.get(k) != v}
    table = ", ".join(f"{k} = {json.dumps(v)}" for k, v in sorted(changed.items()))
    return (
        f"[profiles.{name}]\n"
        f'command = [{json.dumps(claude_bin())}, "-p", "{{prompt}}", "--output-format", "json", '
        '"--allowedTools", "{tools}"]\n'
        f'output = "claude-json"\ntools = ["Bash", "Read"]\ntimeout = {timeout}\nhealth = []\n'
        + (f"workdir = {json.dumps(workdir)}\n" if workdir else "")
        + f"env = {{ {table} }}\n\n"
    )
