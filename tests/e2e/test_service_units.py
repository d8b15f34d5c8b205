"""The systemd unit and launchd agent: systemd's own verifier, and install/uninstall/status through the
real CLI with HOME in a temp folder (and a stand-in systemctl where one must run)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.support.helpers import make_vault, vaultops
from vaultops.service import install as service
from vaultops.service.units import systemd_unit


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_verifies_the_unit(tmp_path: Path) -> None:
    # A program path with a space, a % and a $: verify fails unless ExecStart names it exactly.
    folder = tmp_path / "bin dir %h $HOME"  # %h is a specifier (home), $HOME a variable
    folder.mkdir()
    exe = folder / "vaultops"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    vault = tmp_path / "My Vault"
    vault.mkdir()
    unit = tmp_path / "vaultops-test.service"

    def verify(program: Path) -> subprocess.CompletedProcess[str]:
        unit.write_text(systemd_unit(str(program), vault, 30, path_env=os.environ["PATH"]))
        return subprocess.run(
            ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60
        )

    proc = verify(exe)
    ours = [line for line in proc.stderr.splitlines() if unit.name in line]
    assert proc.returncode == 0 and not ours, proc.stderr
    proc = verify(folder / "missing")  # the control: verify does look at ExecStart
    assert proc.returncode != 0 and "missing" in proc.stderr


# --- through the CLI ----------------------------------------------------------------------------------


def _env(home: Path, bin_dir: Path | None = None) -> dict[str, str]:
    path = os.environ["PATH"] if bin_dir is None else f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    return {"HOME": str(home), "XDG_CONFIG_HOME": "", "PATH": path}


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_dry_run_prints_the_unit_and_commands_and_writes_nothing(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "My Vault", "# Inbox\n", config="[daemon]\ngrace = 12\n")
    home = tmp_path / "home"
    home.mkdir()
    before = _files(vault)
    proc = vaultops("--vault", str(vault), "service", "install", "--dry-run", env=_env(home))
    assert proc.returncode == 0, proc.stderr
    name = service.service_name(vault)
    lines = proc.stdout.splitlines()
    assert lines[0] == f"would write {home}/.config/systemd/user/{name}.service:"
    assert "Type=notify" in lines and "WatchdogSec=30" in lines and "TimeoutStopSec=27" in lines
    assert f"WorkingDirectory={vault}" in lines and "WantedBy=default.target" in lines
    exec_start = next(line for line in lines if line.startswith("ExecStart="))
    program = exec_start.removeprefix("ExecStart=").split(" ")[0]
    assert os.path.isabs(program) and os.access(program, os.X_OK), exec_start
    assert exec_start.endswith(f'--vault "{vault}" run')
    assert "would run: systemctl --user daemon-reload" in lines
    assert f"would run: systemctl --user enable --now {name}" in lines
    assert any("loginctl enable-linger $USER" in line for line in lines)
    assert _files(home) == [] and _files(vault) == before


def _fake_systemctl(bin_dir: Path, log: Path, *, fail: bool = False) -> None:
    """A stand-in that logs its arguments; `is-active` answers "active"."""
    bin_dir.mkdir()
    script = bin_dir / "systemctl"
    body = 'case "$2" in is-active) echo active;; esac'
    if fail:
        body = 'echo "Failed to connect to bus: No medium found" >&2; exit 1'
    script.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n{body}\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_install_status_uninstall(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", "# Inbox\n")
    home, log = tmp_path / "home", tmp_path / "systemctl.log"
    _fake_systemctl(tmp_path / "bin", log)
    env = _env(home, tmp_path / "bin")
    name = service.service_name(vault)
    unit = home / ".config" / "systemd" / "user" / f"{name}.service"

    dry = vaultops("--vault", str(vault), "service", "install", "--dry-run", env=env)
    proc = vaultops("--vault", str(vault), "service", "install", env=env)
    assert proc.returncode == 0, proc.stderr
    written = unit.read_text().splitlines()
    assert written == dry.stdout.splitlines()[1 : 1 + len(written)]
    assert log.read_text().splitlines() == ["--user daemon-reload", f"--user enable --now {name}"]

    proc = vaultops("--vault", str(vault), "service", "status", env=env)
    assert proc.returncode == 0 and proc.stdout.startswith(f"{name}: active\n"), proc.stdout
    assert "ok: service: installed and active" in vaultops("--vault", str(vault), "doctor", env=env).stdout

    log.unlink()  # installing again restarts the daemon on its new unit
    assert vaultops("--vault", str(vault), "service", "install", env=env).returncode == 0
    assert log.read_text().splitlines()[-1] == f"--user restart {name}"

    log.unlink()
    proc = vaultops("--vault", str(vault), "service", "uninstall", env=env)
    assert proc.returncode == 0, proc.stderr
    assert not unit.exists()
    assert log.read_text().splitlines() == [f"--user disable --now {name}", "--user daemon-reload"]
    proc = vaultops("--vault", str(vault), "service", "status", env=env)
    assert proc.returncode == 3 and "not installed" in proc.stdout


def test_install_without_a_user_session_says_how_to_fix_it(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", "# Inbox\n")
    home = tmp_path / "home"
    _fake_systemctl(tmp_path / "bin", tmp_path / "log", fail=True)
    proc = vaultops("--vault", str(vault), "service", "install", env=_env(home, tmp_path / "bin"))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "Failed to connect to bus" in proc.stderr, proc.stderr
    assert "loginctl enable-linger $USER" in proc.stderr
    assert (home / ".config" / "systemd" / "user" / f"{service.service_name(vault)}.service").exists()
