"""What Claude Code's sandbox does, as vaultops relies on it (the notes in ``vaultops.hook.sandbox``): each
fact found by experiment with the real CLI, offline, kept true here.  A job's settings are
``vaultops.hook.sandbox.claude_settings`` of its fence; these runs give the CLI those settings alone (no
gate), so that what they show is the sandbox's doing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_cli import claude_bin, claude_env, requires_claude
from tests.support.fake_anthropic import FakeAnthropic, Text, ToolUse
from tests.support.helpers import code_repo, git
from vaultops.hook.fence import fence_for, sandbox_problem
from vaultops.hook.sandbox import claude_settings

pytestmark = [requires_claude, pytest.mark.skipif(bool(sandbox_problem()), reason="no sandbox here")]


def repository(tmp: Path) -> tuple[Path, Path]:
    """A repository with a job's worktree on its own branch: (the repository, the worktree)."""
    repo = code_repo(tmp / "repo", {"f": "a\n"})
    tree = tmp / "wt"
    git(repo, "worktree", "add", "-q", "-b", "vaultops/REQ-x", str(tree))
    return repo, tree


def bash(tmp: Path, cwd: Path, settings: dict[str, Any], command: str, **extra: Any) -> tuple[int, str]:
    """One Bash call by the CLI in ``cwd`` with ``settings``: (the CLI's exit code, the tool's result)."""
    path = tmp / "settings.json"
    path.write_text(json.dumps(settings))
    with FakeAnthropic() as api:
        api.script(ToolUse("Bash", {"command": command, **extra}), Text("ok"))
        env = claude_env(api.base_url, tmp / "cc")
        env.update(
            GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@b", GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@b"
        )
        argv = [str(claude_bin()), "--settings", str(path), "--setting-sources", "user", "-p", "go",
                "--output-format", "json", "--dangerously-skip-permissions"]  # fmt: skip
        proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
        results = [
            block.get("content")
            for body in api.requests[1:]
            for message in body["messages"]
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
    said = results[0] if results else proc.stderr
    return proc.returncode, said if isinstance(said, str) else json.dumps(said)


def sandboxed(tmp: Path, cwd: Path, **changes: Any) -> dict[str, Any]:
    sandbox = claude_settings(fence_for(cwd, tmp / "vault", home=tmp / "home"))
    for key, value in changes.items():
        sandbox[key] = value
    return {"sandbox": sandbox}


def test_writes_outside_the_folder_and_connections_fail(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside"
    _, said = bash(
        tmp_path,
        work,
        sandboxed(tmp_path, work),
        f"echo x > {outside}; echo in > in; curl -sS -m 5 http://127.0.0.1:9/; echo curl=$?",
    )
    assert "Read-only file system" in said and not outside.exists(), said
    assert (work / "in").exists(), "its own folder is written"
    assert "curl=0" not in said


def test_without_the_sandbox_the_same_command_escapes(tmp_path: Path) -> None:
    """The control: the facts above are the sandbox's, not the machine's."""
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside"
    bash(tmp_path, work, {}, f"echo x > {outside}")
    assert outside.exists()


def test_a_command_cannot_ask_its_way_out(tmp_path: Path) -> None:
    """``allowUnsandboxedCommands: false``: ``dangerouslyDisableSandbox`` still runs inside (the default
    true lets it out, which is why vaultops sets it)."""
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside"
    _, said = bash(
        tmp_path, work, sandboxed(tmp_path, work), f"echo x > {outside}", dangerouslyDisableSandbox=True
    )
    assert not outside.exists(), said
    bash(
        tmp_path,
        work,
        sandboxed(tmp_path, work, allowUnsandboxedCommands=True),
        f"echo x > {outside}",
        dangerouslyDisableSandbox=True,
    )
    assert outside.exists(), "the CLI's default: a command may leave"


def test_a_worktree_commits_on_its_branch_and_touches_no_other_ref_nor_the_config(tmp_path: Path) -> None:
    repo, tree = repository(tmp_path)
    gitdir = repo / ".git"
    settings = {
        "sandbox": claude_settings(
            fence_for(tree, tmp_path / "vault", branch="vaultops/REQ-x", home=tmp_path / "home")
        )
    }
    command = (
        "echo b >> f && git add f && git commit -qm two; echo commit=$?; "
        f"git update-ref refs/heads/main HEAD; echo main=$?; git config user.email evil@x; echo config=$?; "
        f"echo x >> {gitdir / 'hooks' / 'pre-commit'}; echo hook=$?"
    )
    _, said = bash(tmp_path, tree, settings, command)
    assert "commit=0" in said, said
    assert git(repo, "log", "--format=%s", "vaultops/REQ-x").split() == ["two", "start"]
    assert git(repo, "log", "--format=%s", "main").split() == ["start"], "main did not move"
    assert "evil" not in (gitdir / "config").read_text() and not (gitdir / "hooks" / "pre-commit").exists()
    assert "main=0" not in said and "config=0" not in said and "hook=0" not in said, said


def test_credentials_are_hidden_and_a_denied_folder_reads_as_missing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE\n")
    work = tmp_path / "work"
    work.mkdir()
    settings = {"sandbox": claude_settings(fence_for(work, tmp_path / "vault", home=home))}
    _, said = bash(tmp_path, work, settings, f"cat {home / '.ssh' / 'id_ed25519'}; ls {home / '.ssh'}")
    assert "PRIVATE" not in said and "No such file or directory" in said, said


def test_a_machine_without_bubblewrap_refuses_to_start(tmp_path: Path) -> None:
    """``failIfUnavailable``: the CLI exits 1 saying what is missing.  bubblewrap and socat are hidden in a
    mount namespace of this test's own (root only)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("hiding bubblewrap needs root and unshare")
    work = tmp_path / "work"
    work.mkdir()
    real = tmp_path / "realbin"
    real.mkdir()
    hide = tmp_path / "hide.sh"
    hide.write_text(
        "set -e\nmount --bind /usr/bin " + str(real) + "\nmount -t tmpfs tmpfs /usr/bin\n"
        f'for f in {real}/*; do n="${{f##*/}}"; case "$n" in bwrap|socat) ;; '
        f'*) {real}/ln -s "$f" "/usr/bin/$n";; esac; done\n'
        'exec "$@"\n'
    )
    settings_path = tmp_path / "settings.json"
    settings_path.write_text(json.dumps(sandboxed(tmp_path, work)))
    with FakeAnthropic() as api:
        api.script(ToolUse("Bash", {"command": f"echo x > {tmp_path / 'outside'}"}), Text("ok"))
        env = claude_env(api.base_url, tmp_path / "cc")
        argv = ["unshare", "-m", "sh", str(hide), str(claude_bin()), "--settings", str(settings_path),
                "--setting-sources", "user", "-p", "go", "--output-format", "json"]  # fmt: skip
        proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=120)
    if "mount" in proc.stderr and proc.returncode != 1:
        pytest.skip(f"no mount namespace here: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 1 and "sandbox required but unavailable" in proc.stderr, proc.stderr
    assert not (tmp_path / "outside").exists() and api.requests == []
