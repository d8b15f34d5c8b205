"""``vaultops service install|uninstall|status``: the daemon as a systemd user unit or a launchd agent.

Every function returns the lines to print.  ``dry_run`` prints the file (path and content) and the
commands, and writes and runs nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from vaultops.base.errors import VaultError, VaultopsError
from vaultops.config import load_config
from vaultops.service.units import DEFAULT_PATH, launchd_plist, systemd_unit

_TIMEOUT = 30  # seconds for one systemctl/launchctl call: they answer at once or are stuck on a bus


def service_name(vault: Path) -> str:
    """Stable per vault: its folder name for people, a hash of its real path so two vaults called
    "vault" on one machine get two services."""
    real = os.path.realpath(vault.expanduser())
    folder = re.sub(r"[^a-z0-9]+", "-", Path(real).name.lower()).strip("-")[:32] or "vault"
    return f"vaultops-{folder}-{hashlib.sha256(real.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"


def vaultops_command() -> list[str]:
    """The vaultops executable as an absolute argv prefix: the one on PATH, else the script that is
    running, else this Python with ``-m vaultops``.  Symlinks are kept (a venv's python is one)."""
    found = shutil.which("vaultops")
    if found:
        return [os.path.abspath(found)]
    argv0 = sys.argv[0] if sys.argv else ""
    # `python -m vaultops` sets argv[0] to vaultops/__main__.py, which is no command of its own.
    if argv0 and not argv0.endswith(".py") and os.path.isfile(argv0) and os.access(argv0, os.X_OK):
        return [os.path.abspath(argv0)]
    return [os.path.abspath(sys.executable), "-m", "vaultops"]


@dataclass
class _Service:
    """Where this vault's service is defined and how its manager is told."""

    kind: str  # "systemd" or "launchd"
    name: str
    path: Path
    label: str = ""
    log_dir: Path = field(default_factory=Path)

    def definition(self, vault: Path, grace: float) -> str:
        path_env = os.environ.get("PATH") or DEFAULT_PATH
        if self.kind == "systemd":
            return systemd_unit(vaultops_command(), vault, grace, path_env=path_env)
        return launchd_plist(vaultops_command(), vault, grace, self.label, self.log_dir, path_env)


def _service(vault: Path, platform: str | None) -> _Service:
    name = service_name(vault)
    system = platform or sys.platform
    home = Path.home()
    if system.startswith("linux"):
        xdg = os.environ.get("XDG_CONFIG_HOME", "")
        config_home = Path(xdg) if os.path.isabs(xdg) else home / ".config"
        return _Service("systemd", name, config_home / "systemd" / "user" / f"{name}.service")
    if system == "darwin":
        label = f"io.vaultops.{name.removeprefix('vaultops-')}"
        plist = home / "Library" / "LaunchAgents" / f"{label}.plist"
        return _Service("launchd", name, plist, label, home / "Library" / "Logs" / "vaultops")
    raise VaultopsError(
        f"vaultops service knows systemd (Linux) and launchd (macOS), not {system}; "
        "run `vaultops --vault DIR run` under your own supervisor"
    )


def _root(vault: Path) -> Path:
    root = vault.expanduser()
    if not root.is_dir():
        raise VaultError(f"{root}: no such vault folder; pass --vault DIR or run `vaultops init {root}`")
    return root.resolve()


def _run(argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str] | None:
    """Run a service-manager command; None if it is not installed."""
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=_TIMEOUT
        )
    except FileNotFoundError:
        if check:
            raise VaultopsError(f"{argv[0]} is not installed, so `{shlex.join(argv)}` cannot run") from None
        return None
    except subprocess.TimeoutExpired:
        if check:
            raise VaultopsError(f"`{shlex.join(argv)}` did not answer within {_TIMEOUT} s") from None
        return None
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise VaultopsError(
            f"`{shlex.join(argv)}` failed ({detail[-1] if detail else f'exit {proc.returncode}'})"
        )
    return proc


def _steps(lines: list[str], commands: list[list[str]], dry_run: bool, after: str) -> None:
    for argv in commands:
        if dry_run:
            lines.append(f"would run: {shlex.join(argv)}")
            continue
        try:
            _run(argv)
        except VaultopsError as exc:
            raise VaultopsError(f"{exc.message}; {after}") from None
        lines.append(f"ran: {shlex.join(argv)}")


def install(vault: Path, *, dry_run: bool, platform: str | None = None) -> list[str]:
    root = _root(vault)
    service = _service(root, platform)
    content = service.definition(root, load_config(root).daemon.grace)
    existed = service.path.exists()
    lines: list[str] = []
    if dry_run:
        lines += [f"would write {service.path}:", *content.splitlines()]
    else:
        service.path.parent.mkdir(parents=True, exist_ok=True)
        if service.kind == "launchd":
            service.log_dir.mkdir(parents=True, exist_ok=True)  # launchd opens the logs, it makes no folder
        tmp = service.path.with_name(service.path.name + ".vaultops.tmp")
        tmp.write_text(content, encoding="utf-8")
        os.replace(tmp, service.path)  # a half-written unit is never loaded
        lines.append(f"wrote {service.path}")
    if service.kind == "systemd":
        commands = [
            ["systemctl", "--user", "daemon-reload"],
            ["systemctl", "--user", "enable", "--now", service.name],
        ]
        if existed:  # `enable --now` leaves a running daemon on its old unit and config
            commands.append(["systemctl", "--user", "restart", service.name])
        after = (
            "the unit is written; without a user session, run `loginctl enable-linger $USER`, "
            "log in again and retry"
        )
        _steps(lines, commands, dry_run, after)
        lines += [
            "then: loginctl enable-linger $USER   # so that it runs without a login session, and from boot",
            f"see it: systemctl --user status {service.name}; its log: journalctl --user -u {service.name}",
        ]
    else:
        domain = f"gui/{os.getuid()}"
        if existed:  # bootstrap refuses a label that is loaded: take the old one out first
            if dry_run:
                lines.append(f"would run: launchctl bootout {domain}/{service.label}")
            else:
                _run(["launchctl", "bootout", f"{domain}/{service.label}"], check=False)
        after = f"the agent is written; load it with `launchctl bootstrap {domain} {service.path}`"
        _steps(lines, [["launchctl", "bootstrap", domain, str(service.path)]], dry_run, after)
        lines.append(f"see it: launchctl print {domain}/{service.label}; its log: {service.log_dir}")
    return lines


def uninstall(vault: Path, *, dry_run: bool, platform: str | None = None) -> list[str]:
    root = vault.expanduser()  # the folder may be gone already: its service can still be removed
    service = _service(root, platform)
    if not service.path.exists():
        return [f"not installed: no {service.path}"]
    lines: list[str] = []
    if service.kind == "systemd":
        after = f"the unit is still at {service.path}"
        _steps(lines, [["systemctl", "--user", "disable", "--now", service.name]], dry_run, after)
    elif dry_run:
        lines.append(f"would run: launchctl bootout gui/{os.getuid()}/{service.label}")
    else:  # it fails when the agent is not loaded, which is what we want anyway
        _run(["launchctl", "bootout", f"gui/{os.getuid()}/{service.label}"], check=False)
        lines.append(f"ran: launchctl bootout gui/{os.getuid()}/{service.label}")
    if dry_run:
        lines.append(f"would remove {service.path}")
    else:
        service.path.unlink(missing_ok=True)
        lines.append(f"removed {service.path}")
    if service.kind == "systemd":
        _steps(lines, [["systemctl", "--user", "daemon-reload"]], dry_run, "the unit file is removed")
    return lines


def service_status(vault: Path, platform: str | None = None) -> tuple[str, list[str]]:
    """(state, lines): state is "active", "inactive", "not installed", "unknown", or what the service
    manager says ("failed", "activating", …)."""
    service = _service(vault.expanduser(), platform)
    if not service.path.exists():
        return "not installed", [f"{service.name}: not installed (vaultops service install)"]
    if service.kind == "systemd":
        proc = _run(["systemctl", "--user", "is-active", service.name], check=False)
        state = (proc.stdout.strip() if proc else "") or "unknown"
        lines = [f"{service.name}: {state}", f"unit: {service.path}"]
        if state == "unknown":
            detail = (proc.stderr.strip().splitlines() or ["?"])[-1] if proc else "systemctl did not answer"
            lines.append(f"systemctl --user cannot tell: {detail}")
        return state, [*lines, f"log: journalctl --user -u {service.name}"]
    proc = _run(["launchctl", "print", f"gui/{os.getuid()}/{service.label}"], check=False)
    if proc is None:
        state = "unknown"
    elif proc.returncode != 0:
        state = "inactive"  # the plist is there but not loaded
    else:
        found = re.search(r"^\s*state = (.+)$", proc.stdout, re.MULTILINE)
        state = "active" if found and found.group(1).strip() == "running" else "inactive"
    return state, [f"{service.label}: {state}", f"agent: {service.path}", f"log: {service.log_dir}"]
