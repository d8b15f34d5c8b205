"""The service definitions as text: a systemd user unit and a launchd agent.  Pure: values in, text out.

Both run ``<vaultops> --vault <vault> run`` in the vault, with the PATH of the install so that the agent
CLIs found by hand are found by the service too, and give the daemon ``grace`` seconds plus a margin to
stop: it lets running jobs finish for ``grace``, then marks them interrupted, commits and pushes.
"""

from __future__ import annotations

import math
import plistlib
from collections.abc import Sequence
from pathlib import Path

from vaultops.base.errors import VaultopsError

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
STOP_MARGIN = 15.0  # beyond the grace: marking jobs interrupted, the commit and the push

# The vaultops executable: one path, or a prefix such as [python, "-m", "vaultops"].
Exe = str | Sequence[str]


def daemon_argv(exe: Exe, vault: Path) -> list[str]:
    prefix = [exe] if isinstance(exe, str) else list(exe)
    return [*prefix, "--vault", str(vault), "run"]


def _seconds(value: float) -> str:
    """A time span systemd reads: "45", or "45.5" (never "4.5e+01")."""
    return str(int(value)) if value == int(value) else f"{value:.3f}".rstrip("0")


def _no_newline(text: str) -> str:
    # A unit file is line-based: a newline in a path would end the setting and start another.
    if "\n" in text or "\r" in text:
        raise VaultopsError(f"{text!r} holds a line break, which a systemd unit cannot name; rename it")
    return text


def _quoted(text: str) -> str:
    """One word as systemd splits ExecStart= and Environment=: double quotes with C-style escapes."""
    if text and not any(c in text for c in " \t\"'\\;"):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _exec_start(argv: Sequence[str]) -> str:
    # systemd expands %specifiers in every word, and $VARIABLES in the arguments but not in the program
    # path (checked with systemd-analyze verify): "%" is doubled everywhere, "$" only after the first.
    words = []
    for i, word in enumerate(argv):
        escaped = _no_newline(word).replace("%", "%%")
        words.append(_quoted(escaped if i == 0 else escaped.replace("$", "$$")))
    return " ".join(words)


def systemd_unit(
    exe: Exe, vault: Path, grace: float, watchdog_sec: int = 30, path_env: str = DEFAULT_PATH
) -> str:
    """A systemd user unit (``~/.config/systemd/user/<name>.service``) for the daemon of ``vault``."""
    where = _no_newline(str(vault)).replace("%", "%%")  # WorkingDirectory= is taken whole, unquoted
    return "\n".join(
        [
            "# Written by `vaultops service install`; `vaultops service uninstall` removes it.",
            "[Unit]",
            f"Description=vaultops daemon for {where}",
            "After=network-online.target",
            "",
            "[Service]",
            # The daemon says READY=1 once it watches the vault and pings the watchdog while it runs;
            # only the main process may speak, so an agent CLI that inherits the socket cannot.
            "Type=notify",
            "NotifyAccess=main",
            f"ExecStart={_exec_start(daemon_argv(exe, vault))}",
            f"WorkingDirectory={where}",
            f"Environment={_quoted(_no_newline('PATH=' + path_env).replace('%', '%%'))}",
            "Environment=PYTHONUNBUFFERED=1",
            "Restart=on-failure",
            "RestartSec=5",
            # Exit 2 is a config or vault error, 65 a corrupt state.db: restarting cannot fix either, and the
            # log would fill with it.
            "RestartPreventExitStatus=2 65",
            f"WatchdogSec={watchdog_sec}",
            # SIGTERM to the daemon alone: it stops claiming and lets its jobs finish within the grace;
            # whatever is left of the unit after TimeoutStopSec is killed.
            "KillMode=mixed",
            f"TimeoutStopSec={_seconds(grace + STOP_MARGIN)}",
            "",
            "[Install]",
            "WantedBy=default.target",
            "",
        ]
    )


def launchd_plist(exe: Exe, vault: Path, grace: float, label: str, log_dir: Path, path_env: str) -> str:
    """A launchd agent (``~/Library/LaunchAgents/<label>.plist``) for the daemon of ``vault``."""
    agent = {
        "Label": label,
        "ProgramArguments": daemon_argv(exe, vault),
        "WorkingDirectory": str(vault),
        "RunAtLoad": True,
        "KeepAlive": True,
        # launchd sends SIGTERM, then SIGKILL after ExitTimeOut (whole seconds).
        "ExitTimeOut": math.ceil(grace + STOP_MARGIN),
        "EnvironmentVariables": {"PATH": path_env, "PYTHONUNBUFFERED": "1"},
        "StandardOutPath": str(log_dir / f"{label}.log"),
        "StandardErrorPath": str(log_dir / f"{label}.err.log"),
    }
    return plistlib.dumps(agent, sort_keys=True).decode("utf-8")
