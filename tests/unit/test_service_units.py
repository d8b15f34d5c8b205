"""The systemd unit and launchd agent as text: golden files, escaping, names, and the dry runs that write
nothing."""

from __future__ import annotations

import os
import plistlib
import sys
from pathlib import Path

import pytest

from tests.support.helpers import REPO, make_vault
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
