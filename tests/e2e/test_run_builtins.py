"""The built-in handlers against real files, real commands on PATH and real processes."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from datetime import datetime
from pathlib import Path

import pytest

from vaultops.run import builtins
from vaultops.run.builtins import env_check, filesystem_check, service_status


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


def test_missing_and_refused_commands(tmp_path: Path) -> None:
    result = env_check(
        ["vaultops-no-such-tool", "a;b", "../x", "-rf", "$(id)", ""], [], environ={"PATH": str(tmp_path)}
    )
    assert result.ok  # "not installed" is an answer
    assert "vaultops-no-such-tool: not found on PATH" in result.output
    assert result.output.count("refused: not a plain command name") == 5


def test_env_vars_set_or_not_and_never_the_value() -> None:
    environ = {"STRIPE_API_KEY": "sk_live_notreallyasecret123", "EMPTY_ONE": "", "PATH": "/usr/bin"}
    result = env_check([], ["STRIPE_API_KEY", "EMPTY_ONE", "NOT_THERE_X", "lower", "A-B"], environ=environ)
    assert result.ok
    assert result.output.splitlines() == [
        "STRIPE_API_KEY: set",
        "EMPTY_ONE: set (empty)",
        "NOT_THERE_X: not set",
        "'lower': refused: not an environment variable name (A-Z, 0-9, _)",
        "'A-B': refused: not an environment variable name (A-Z, 0-9, _)",
    ]
    assert "sk_live" not in result.output + result.summary


def test_secrets_in_version_output_are_redacted(tmp_path: Path) -> None:
    leaky = fake_command(tmp_path / "bin", "leaky", "print('leaky 1.0 token plain-looking-value')")
    version = builtins._version(str(leaky), ("--version",), {"LEAKY_TOKEN": "plain-looking-value"})
    assert version == "leaky 1.0 token [REDACTED:secret]"


def test_nothing_valid_to_check_is_not_ok() -> None:
    result = env_check(["a b"], ["x y"], environ={})
    assert not result.ok and "nothing to check" in result.summary
    assert not env_check([], [], environ={}).ok


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


def test_service_names_are_checked() -> None:
    result = service_status(["-h", "a b", "x;reboot", "../etc"])
    assert not result.ok
    assert result.output.count("refused: not a service name") == 4


# --- filesystem-check ------------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("hello")  # 5 bytes
    (root / "docs" / "b.md").write_text("x" * 100)
    (root / "note.txt").write_text("abc")
    (root / "link-inside").symlink_to(root / "note.txt")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s" * 10_000)
    (root / "escape").symlink_to(outside)
    (root / "escape-file").symlink_to(outside / "secret.txt")
    return root


def check(root: Path, *paths: str) -> builtins.HandlerResult:
    return filesystem_check(list(paths), allowed_roots=[root], base=root)


def test_file(tree: Path) -> None:
    result = check(tree, "note.txt")
    assert result.ok and result.summary == "note.txt: file, 3 bytes"
    lines = result.output.splitlines()
    assert lines[0] == f"note.txt: file ({tree / 'note.txt'})"
    modified = next(line for line in lines if "modified:" in line).split("modified: ")[1]
    assert abs(datetime.fromisoformat(modified).timestamp() - (tree / "note.txt").stat().st_mtime) < 1
    assert "  size: 3 bytes" in lines
    assert f"  mode: {stat.filemode((tree / 'note.txt').stat().st_mode)}" in lines


def test_directory_lists_and_sizes_without_following_symlinks(tree: Path) -> None:
    result = check(tree, ".")
    assert result.summary == ".: directory, 5 entries"
    # 5 + 100 + 3 bytes of files; the symlinks count as entries, the 10,000 bytes outside do not.
    assert "  total: 108 bytes in 3 files; also 1 folders, 3 symlinks or other entries" in result.output
    assert result.output.endswith("    docs/\n    escape-file@\n    escape@\n    link-inside@\n    note.txt")


def test_first_50_entries_only(tree: Path) -> None:
    many = tree / "many"
    many.mkdir()
    for i in range(60):
        (many / f"f{i:02}").touch()
    result = check(tree, "many")
    assert "  entries: 60" in result.output and "first 50 entries" in result.output
    assert "    f49" in result.output and "f50" not in result.output


def test_walk_is_capped(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builtins, "WALK_MAX", 3)
    result = check(tree, ".")
    assert "total: at least" in result.output and "(stopped after 3 entries)" in result.output


def test_escapes_are_refused(tree: Path) -> None:
    outside = tree.parent / "outside"
    result = check(
        tree,
        "escape",
        "escape/secret.txt",
        "escape-file",
        "../outside",
        "docs/../../outside",
        str(outside),
        "/etc/passwd",
        "note.txt",
    )
    lines = result.output.splitlines()
    assert [line for line in lines if ": refused: " in line] == [
        "escape: refused: outside the allowed roots",
        "escape/secret.txt: refused: outside the allowed roots",
        "escape-file: refused: outside the allowed roots",
        "../outside: refused: outside the allowed roots",
        "docs/../../outside: refused: outside the allowed roots",
        f"{outside}: refused: outside the allowed roots",
        "/etc/passwd: refused: outside the allowed roots",
    ]
    assert result.ok and result.summary == "note.txt: file, 3 bytes"  # the one allowed path is answered
    assert "secret.txt: file" not in result.output and "10,000" not in result.output


def test_allowed_symlink_dotdot_home_and_missing(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tree))
    result = check(tree, "link-inside", "docs/../note.txt", "~/docs/a.md", str(tree / "docs"), "nope")
    assert result.ok
    assert f"link-inside: file ({tree / 'note.txt'})" in result.output
    assert f"docs/../note.txt: file ({tree / 'note.txt'})" in result.output
    assert "~/docs/a.md: file" in result.output
    assert f"{tree / 'docs'}: directory" in result.output
    assert f"nope: does not exist ({tree / 'nope'})" in result.output


def test_roots_are_resolved_too(tree: Path) -> None:
    alias = tree.parent / "alias"
    alias.symlink_to(tree)
    result = filesystem_check([str(tree / "note.txt"), "note.txt"], allowed_roots=[alias], base=alias)
    assert result.output.count("note.txt: file") == 2


def test_a_named_pipe_is_stat_ed_never_opened(tree: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this system")
    os.mkfifo(tree / "pipe")  # opening it for reading would block this test
    assert check(tree, "pipe").summary == "pipe: named pipe, 0 bytes"


def test_nothing_allowed_is_not_ok(tree: Path) -> None:
    result = check(tree, "/etc", "", "a\0b")
    assert not result.ok and "nothing to check" in result.summary
