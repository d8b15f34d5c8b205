"""The systemd unit and launchd agent: golden files, systemd's own verifier, and install/uninstall/status
through the real CLI with HOME in a temp folder (and a stand-in systemctl where one must run)."""

from __future__ import annotations

import os
import plistlib
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import REPO, make_vault, vaultops
from vaultops.base.errors import VaultopsError
from vaultops.service import install as service
from vaultops.service.units import launchd_plist, systemd_unit

GOLDEN = REPO / "fixtures" / "golden"
EXE = "/opt/vaultops/bin/vaultops"
VAULT = Path("/home/person/My Vault")
PATH_ENV = "/home/person/.local/bin:/usr/local/bin:/usr/bin:/bin"
LABEL = "io.vaultops.my-vault-0123abcd"
LOGS = Path("/home/person/Library/Logs/vaultops")


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("VAULTOPS_UPDATE_GOLDEN"):  # after a deliberate change: rewrite, then review the diff
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_systemd_unit_golden() -> None:
    _golden("vaultops.service", systemd_unit(EXE, VAULT, 30, path_env=PATH_ENV))


def test_launchd_plist_golden() -> None:
    text = launchd_plist(EXE, VAULT, 30, LABEL, LOGS, PATH_ENV)
    _golden("vaultops.plist", text)
    agent = plistlib.loads(text.encode())
    assert agent["ProgramArguments"] == [EXE, "--vault", str(VAULT), "run"]
    assert agent["ExitTimeOut"] == 45 and agent["KeepAlive"] is True and agent["RunAtLoad"] is True
    assert agent["EnvironmentVariables"]["PATH"] == PATH_ENV


def test_unit_escapes_what_systemd_would_expand() -> None:
    unit = systemd_unit(["/usr/bin/python3", "-m", "vaultops"], Path('/v/50% "done" $HOME'), 2.5)
    assert 'ExecStart=/usr/bin/python3 -m vaultops --vault "/v/50%% \\"done\\" $$HOME" run' in unit
    assert 'WorkingDirectory=/v/50%% "done" $HOME' in unit
    assert "TimeoutStopSec=17.5" in unit
    assert "TimeoutStopSec=15\n" in systemd_unit(EXE, VAULT, 0)
    with pytest.raises(VaultopsError, match="line break"):
        systemd_unit(EXE, Path("/v/two\nlines"), 30)


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


def test_service_name_is_stable_per_vault(tmp_path: Path) -> None:
    one, two = tmp_path / "a" / "My Vault!", tmp_path / "b" / "My Vault!"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    (tmp_path / "link").symlink_to(one)
    name = service.service_name(one)
    assert name.startswith("vaultops-my-vault-") and len(name) == len("vaultops-my-vault-") + 8
    assert service.service_name(tmp_path / "link") == name == service.service_name(one)
    assert service.service_name(two) != name
    assert service.service_name(Path("/заметки")).startswith("vaultops-vault-")


def test_the_executable_is_absolute(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(service.shutil, "which", lambda name: None)
    monkeypatch.setattr(sys, "argv", [str(REPO / "vaultops" / "__main__.py")])  # python -m vaultops
    assert service.vaultops_command() == [os.path.abspath(sys.executable), "-m", "vaultops"]
    script = tmp_path / "vaultops"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["./vaultops"])
    assert service.vaultops_command() == [str(script)]
    monkeypatch.setattr(service.shutil, "which", lambda name: "bin/vaultops")
    assert service.vaultops_command() == [str(tmp_path / "bin" / "vaultops")]


def test_unsupported_platform_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(VaultopsError, match="your own supervisor"):
        service.install(tmp_path, dry_run=True, platform="win32")


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


def test_launchd_dry_run_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault(tmp_path / "v", "# Inbox\n", repo=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    lines = service.install(vault, dry_run=True, platform="darwin")
    label = "io.vaultops." + service.service_name(vault).removeprefix("vaultops-")
    plist = tmp_path / "home" / "Library" / "LaunchAgents" / f"{label}.plist"
    assert lines[0] == f"would write {plist}:"
    agent = plistlib.loads("\n".join(lines[1 : lines.index("</plist>") + 1]).encode())
    assert agent["ProgramArguments"][-3:] == ["--vault", str(vault), "run"] and agent["ExitTimeOut"] == 45
    assert f"would run: launchctl bootstrap gui/{os.getuid()} {plist}" in lines
    assert not (tmp_path / "home").exists()


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
