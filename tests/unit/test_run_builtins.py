"""The built-in checks that only look: files, folders, links, environment variables and names, on files
in a temp folder; none of them starts a process."""

from __future__ import annotations

import os
import stat
from datetime import datetime
from pathlib import Path

import pytest

from vaultops.run import builtins
from vaultops.run.builtins import env_check, filesystem_check, service_status

# --- env-check -------------------------------------------------------------------------------------


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


def test_nothing_valid_to_check_is_not_ok() -> None:
    result = env_check(["a b"], ["x y"], environ={})
    assert not result.ok and "nothing to check" in result.summary
    assert not env_check([], [], environ={}).ok


# --- service-status --------------------------------------------------------------------------------


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
