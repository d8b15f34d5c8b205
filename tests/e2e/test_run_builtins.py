"""The built-in handlers against real files, real commands on PATH and real processes."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from vaultops.run import builtins
from vaultops.run.builtins import env_check, service_status


def fake_command(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!{sys.executable}\nimport os, sys\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


# --- env-check -------------------------------------------------------------------------------------


MARKER_BODY = "open({marker!r}, 'a').write(' '.join(sys.argv) + '\\n'); print('deployed')"


def marked(folder: Path, name: str, marker: Path) -> Path:
    """A program that ignores its arguments and acts: it leaves ``marker`` behind if it is ever run."""
    return fake_command(folder, name, MARKER_BODY.format(marker=str(marker)))


def test_a_known_program_is_asked_for_its_version() -> None:
    git_path = shutil.which("git")
    if git_path is None:
        pytest.skip("git is not installed")
    result = env_check(["git"], [], environ={"PATH": os.path.dirname(git_path)})
    assert result.ok
    assert result.output.startswith(f"git: {git_path} (git version ")


def test_an_unknown_program_is_described_and_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = marked(tmp_path / "bin", "deploy-now", marker)
    result = env_check(["deploy-now"], [], environ={"PATH": str(tmp_path / "bin")})
    assert not marker.exists()
    assert result.output == (
        f"deploy-now: {path} (script run by {sys.executable}; no package owns it; not run: vaultops asks only"
        " programs it knows for their version)"
    ) or "package unknown" in result.output
    assert "deployed" not in result.output


def test_a_fake_git_early_on_path_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    marked(tmp_path / "bin", "git", marker)
    marked(tmp_path / "bin", "python3", marker)
    real_git = shutil.which("git") or "/usr/bin/git"
    path = f"{tmp_path / 'bin'}:{os.path.dirname(real_git)}"
    result = env_check(["git", "python3"], [], environ={"PATH": path})
    assert not marker.exists()
    assert result.output.count("not run: it lies in a temporary folder") == 2


def test_a_known_name_in_the_vault_or_a_workdir_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    vault = tmp_path / "vault"
    marked(vault / "tools", "node", marker)
    result = env_check(["node"], [], environ={"PATH": str(vault / "tools")}, unexpected=[vault])
    assert not marker.exists()
    assert "not run: it lies inside the vault or a folder jobs work in" in result.output


def test_what_the_file_really_is_decides(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    bin_dir = tmp_path / "bin"
    target = marked(tmp_path / "elsewhere", "wipe", marker)
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(target)  # a known name that is really something else
    (bin_dir / "halt").symlink_to(target)
    for name in ("reboot", "rm", "mkfs.ext4", "Shutdown"):
        marked(bin_dir, name, marker)
    names = ["git", "halt", "reboot", "rm", "mkfs.ext4", "Shutdown"]
    result = env_check(names, [], environ={"PATH": str(bin_dir)})
    assert not marker.exists()
    assert result.output.count("not run: ") == 6
    assert f"git: {bin_dir / 'git'} (symlink to {target}; script run by {sys.executable};" in result.output


def test_file_kinds_and_package_owners(tmp_path: Path) -> None:
    from vaultops.run import programs

    assert programs.file_kind(os.path.realpath(sys.executable)) in ("ELF executable", "Mach-O executable")
    env_script = tmp_path / "s"
    env_script.write_text("#!/usr/bin/env -S node --flag\nconsole.log(1)\n")
    assert programs.file_kind(str(env_script)) == "script run by node"
    (tmp_path / "data").write_bytes(b"\x00\x01")
    assert programs.file_kind(str(tmp_path / "data")) == "file of unknown type"
    assert programs.package_owner(str(env_script)) in ("no package owns it", "package unknown")
    dpkg = shutil.which("dpkg", path=programs.SYSTEM_PATH)
    sh = shutil.which("sh", path=programs.SYSTEM_PATH)
    if dpkg and sh:
        assert programs.package_owner(sh).startswith("package ")


def test_probe_output_failures_and_hangs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builtins, "VERSION_TIMEOUT", 0.5)
    bin_dir = tmp_path / "bin"
    err = fake_command(bin_dir, "errtool", "print('errtool 3.1', file=sys.stderr)")
    bad = fake_command(bin_dir, "badtool", "print('usage: badtool FILE'); sys.exit(2)")
    slow = fake_command(bin_dir, "slowtool", "import time; time.sleep(60)")
    probe = ("--version",)
    assert builtins._version(str(err), probe, {}) == "errtool 3.1"
    assert builtins._version(str(bad), probe, {}) == "version unknown: --version exited with 2"
    assert builtins._version(str(slow), ("-V",), {}) == "version unknown: -V did not finish"


def test_probe_is_cached_per_file_and_runs_in_a_minimal_environment(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    body = f"open({str(runs)!r}, 'a').write('x'); print('tool 1.0', sorted(os.environ), sys.argv[1:])"
    path = fake_command(tmp_path / "bin", "tool", body)
    environ = {"PATH": "/usr/bin", "SECRET_THING": "no", "PYTHONPATH": "/evil"}
    first = builtins._version(str(path), ("--version",), environ)
    assert first == "tool 1.0 ['HOME', 'LC_ALL', 'PATH', 'TMPDIR'] ['--version']"
    builtins._version(str(path), ("--version",), environ)
    assert runs.read_text() == "x"
    fake_command(tmp_path / "bin", "tool", body.replace("1.0", "2.0"))  # an upgrade: new size and mtime
    os.utime(path, ns=(0, 10**18))
    assert builtins._version(str(path), ("--version",), environ).startswith("tool 2.0")
    assert runs.read_text() == "xx"


def test_secrets_in_version_output_are_redacted(tmp_path: Path) -> None:
    leaky = fake_command(tmp_path / "bin", "leaky", "print('leaky 1.0 token plain-looking-value')")
    version = builtins._version(str(leaky), ("--version",), {"LEAKY_TOKEN": "plain-looking-value"})
    assert version == "leaky 1.0 token [REDACTED:secret]"


# --- service-status --------------------------------------------------------------------------------


def test_a_service_that_certainly_does_not_exist() -> None:
    result = service_status(["vaultops-no-such-service-7f3a9c"])
    assert result.ok
    assert result.summary == "vaultops-no-such-service-7f3a9c: not running or not found"
    if shutil.which("pgrep"):
        assert "processes: none named" in result.output


def test_the_tests_own_process_is_running() -> None:
    comm = Path("/proc/self/comm")
    name = comm.read_text().strip() if comm.exists() else Path(sys.executable).name
    if shutil.which("pgrep") is None:
        pytest.skip("pgrep is not installed, so a running process cannot be found by name")
    result = service_status([name])
    assert result.ok
    assert result.summary == f"{name}: running"
    assert "running (pids " in result.output

