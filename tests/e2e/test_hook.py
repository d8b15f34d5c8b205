"""``vaultops hook`` as Claude Code runs it: a real process, an event on stdin, the decision on stdout.

Payloads are shaped like the captured ones (``fixtures/hook/``).  The protocol facts these tests rely on: a
``permissionDecision: "deny"`` (exit 0) or exit code 2 blocks the call; exit code 1 and a hook that times out
let it through, so the hook must never end that way."""

from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import REPO, TEST_FIXTURES
from vaultops.commands.hook import hook_command
from vaultops.store.asked import fingerprint, grant_allowance

FIXTURES = TEST_FIXTURES / "hook"
# The hook's inputs from the environment; the developer's own must not leak into these tests.
_OWN = ("VAULTOPS_", "CLAUDE_PROJECT_DIR")


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(_OWN)}
    return {**base, **extra}


def run_hook(
    payload: dict[str, Any] | str, *args: str, environ: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [sys.executable, "-m", "vaultops", *args, "hook"],
        input=text,
        capture_output=True,
        text=True,
        env=environ if environ is not None else env(),
        timeout=timeout,
        cwd=REPO,
    )


def event(workdir: Path, tool: str = "Bash", name: str = "PreToolUse", **tool_input: Any) -> dict[str, Any]:
    base = json.loads((FIXTURES / "pretooluse_bash.json").read_text())
    return {**base, "cwd": str(workdir), "hook_event_name": name, "tool_name": tool, "tool_input": tool_input}


def decision(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert isinstance(out, dict)
    return out


def pre(proc: subprocess.CompletedProcess[str]) -> tuple[str, str]:
    """(permissionDecision, permissionDecisionReason) of a PreToolUse answer, checking its exact shape."""
    out = decision(proc)
    assert list(out) == ["hookSpecificOutput"]
    spec = out["hookSpecificOutput"]
    assert set(spec) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    assert spec["hookEventName"] == "PreToolUse"
    return spec["permissionDecision"], spec["permissionDecisionReason"]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    wd = tmp_path / "wd"
    (wd / "src").mkdir(parents=True)
    return wd


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    v = tmp_path / "vault"
    (v / ".vaultops").mkdir(parents=True)
    (v / ".vaultops" / "config.toml").write_text('[agent]\nname = "test"\n')
    return v


def escalations(vault: Path) -> list[dict[str, Any]]:
    path = vault / ".vaultops" / "state" / "escalations.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# --- decisions --------------------------------------------------------------------------------------------


def test_the_captured_payload_is_allowed_in_its_own_folder(workdir: Path) -> None:
    payload = {**json.loads((FIXTURES / "pretooluse_bash.json").read_text()), "cwd": str(workdir)}
    kind, reason = pre(run_hook(payload))
    assert kind == "allow" and "echo hello" in reason


@pytest.mark.parametrize("command", ["pytest -q", "ls -la && git status", "npm test", "git log --oneline"])
def test_safe_commands_are_allowed(workdir: Path, command: str) -> None:
    assert pre(run_hook(event(workdir, command=command)))[0] == "allow"


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("rm -rf /", "outside the worktree"),
        ("echo x > /etc/hosts", "/etc/hosts, outside the worktree"),
        ("bash -c 'rm -rf ~'", "outside the worktree"),
        ('echo "$(rm -rf /)"', "outside the worktree"),
    ],
)
def test_dangerous_commands_are_denied_with_the_reason(workdir: Path, command: str, why: str) -> None:
    kind, reason = pre(run_hook(event(workdir, command=command)))
    assert kind == "deny" and why in reason and reason.startswith("vaultops policy: denied")


def test_an_edit_outside_the_workdir_is_denied_and_inside_allowed(workdir: Path) -> None:
    outside = workdir.parent / "elsewhere.py"
    assert (
        pre(run_hook(event(workdir, "Edit", file_path=str(outside), old_string="a", new_string="b")))[0]
        == "deny"
    )
    inside = workdir / "src" / "a.py"
    assert pre(run_hook(event(workdir, "Write", file_path=str(inside), content="x")))[0] == "allow"
    (workdir / "out").symlink_to(workdir.parent)
    escape = workdir / "out" / "x.py"
    assert pre(run_hook(event(workdir, "Write", file_path=str(escape), content="x")))[0] == "deny"


def test_the_workdir_comes_from_vaultops_workdir_over_the_events_cwd(workdir: Path) -> None:
    sub = workdir / "src"
    target = workdir / "top.txt"
    inside_job = env(VAULTOPS_WORKDIR=str(workdir))
    assert (
        pre(run_hook(event(sub, "Write", file_path=str(target), content="x"), environ=inside_job))[0]
        == "allow"
    )
    assert pre(run_hook(event(sub, "Write", file_path=str(target), content="x")))[0] == "deny"


def test_an_escalated_call_is_denied_saying_the_person_was_asked(workdir: Path, vault: Path) -> None:
    payload = event(workdir, command="gh pr merge 12")
    kind, reason = pre(run_hook(payload, "--vault", str(vault)))
    assert kind == "deny"
    assert "needs the person's approval, and the person has been asked" in reason and "merge_pr" in reason
    [record] = escalations(vault)
    assert record["kind"] == "escalate" and record["action"] == "merge_pr"
    assert record["tool_name"] == "Bash" and record["tool_input"] == {"command": "gh pr merge 12"}
    assert record["session_id"] == payload["session_id"] and record["tool_use_id"] == payload["tool_use_id"]
    assert record["fingerprint"] == fingerprint("Bash", {"command": "gh pr merge 12"})
    assert record["workdir"] == str(workdir) and record["notify"] is True


def test_without_a_vault_an_escalation_says_nobody_was_told(workdir: Path) -> None:
    kind, reason = pre(run_hook(event(workdir, command="gh pr merge 12")))
    assert kind == "deny" and "has NOT been told" in reason


def test_the_vault_can_come_from_the_environment(workdir: Path, vault: Path) -> None:
    pre(run_hook(event(workdir, command="git push origin main"), environ=env(VAULTOPS_VAULT=str(vault))))
    assert [r["action"] for r in escalations(vault)] == ["merge_pr"]


def test_a_one_time_allowance_lets_exactly_that_call_through_once(workdir: Path, vault: Path) -> None:
    grant_allowance(vault, "Bash", {"command": "gh pr merge 12"})
    other = pre(run_hook(event(workdir, command="gh pr merge 13"), "--vault", str(vault)))
    assert other[0] == "deny"
    first = pre(run_hook(event(workdir, command="gh pr merge 12"), "--vault", str(vault)))
    assert first[0] == "allow" and "approved once by the person" in first[1]
    assert pre(run_hook(event(workdir, command="gh pr merge 12"), "--vault", str(vault)))[0] == "deny"


def test_an_allowance_never_unlocks_a_denied_call(workdir: Path, vault: Path) -> None:
    grant_allowance(vault, "Bash", {"command": "rm -rf /"})
    assert pre(run_hook(event(workdir, command="rm -rf /"), "--vault", str(vault)))[0] == "deny"


def test_the_vaults_policy_overrides_apply(workdir: Path, vault: Path) -> None:
    (vault / ".vaultops" / "local.toml").write_text('[policy]\ndelete_tree = "approve"\n')
    assert pre(run_hook(event(workdir, command="rm -rf build"), "--vault", str(vault)))[0] == "allow"
    assert pre(run_hook(event(workdir, command="rm -rf build")))[0] == "deny"  # the default escalates


def test_a_bad_policy_config_denies_naming_the_file_and_key(workdir: Path, vault: Path) -> None:
    (vault / ".vaultops" / "config.toml").write_text('[policy]\nmerge_pr = "approve"\n')
    kind, reason = pre(run_hook(event(workdir, command="ls"), "--vault", str(vault)))
    assert kind == "deny" and "config.toml: [policy] merge_pr cannot be approve" in reason
    (vault / ".vaultops" / "config.toml").write_text("[policy\n")
    kind, reason = pre(run_hook(event(workdir, command="ls"), "--vault", str(vault)))
    assert kind == "deny" and "config.toml cannot be read" in reason


def test_a_missing_vault_denies(workdir: Path, tmp_path: Path) -> None:
    kind, reason = pre(run_hook(event(workdir, command="ls"), "--vault", str(tmp_path / "gone")))
    assert kind == "deny" and "does not exist" in reason


def test_vaultops_tools_narrows_what_may_run(workdir: Path) -> None:
    narrow = env(VAULTOPS_TOOLS="Read,Grep,mcp__docs")
    kind, reason = pre(run_hook(event(workdir, command="ls"), environ=narrow))
    assert kind == "deny" and "not among this job's tools" in reason
    mcp = event(workdir, "mcp__docs__search", query="x")
    assert pre(run_hook(mcp, environ=narrow))[1].startswith(
        "vaultops policy: not run"
    )  # listed: the table decides
    assert (
        pre(run_hook(event(workdir, command="ls"), environ=env(VAULTOPS_TOOLS="Bash(git:*),Read")))[0]
        == "allow"
    )


# --- PermissionRequest ------------------------------------------------------------------------------------


def test_permission_request_answers_in_its_own_shape(workdir: Path) -> None:
    payload = {**json.loads((FIXTURES / "permissionrequest_bash.json").read_text()), "cwd": str(workdir)}
    assert decision(run_hook(payload)) == {
        "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}
    }
    payload["tool_input"] = {"command": "rm -rf /"}
    out = decision(run_hook(payload))["hookSpecificOutput"]
    assert out["hookEventName"] == "PermissionRequest"
    assert out["decision"]["behavior"] == "deny" and "outside the worktree" in out["decision"]["message"]
    assert set(out["decision"]) == {"behavior", "message"}


# --- failing closed ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "garbage", "[1, 2]", '"PreToolUse"', "{", '{"tool_name": "Bash"}'])
def test_unreadable_input_is_blocked_with_exit_2(text: str) -> None:
    proc = run_hook(text)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("vaultops policy: denied because the hook could not decide")


def test_events_it_does_not_answer_are_blocked_with_exit_2() -> None:
    for line in (FIXTURES / "other_events.jsonl").read_text().splitlines():
        proc = run_hook(line)
        name = json.loads(line)["hook_event_name"]
        assert proc.returncode == 2 and name in proc.stderr and proc.stdout == "", name


def test_a_known_event_without_a_tool_is_denied(workdir: Path) -> None:
    payload = event(workdir, command="ls")
    del payload["tool_name"]
    kind, reason = pre(run_hook(payload))
    assert kind == "deny" and "names no tool" in reason


def test_an_exception_inside_the_policy_denies() -> None:
    """The policy raising (a bug) must deny: the hook process is run with ``decide_call`` replaced."""
    code = (
        "import sys, vaultops.hook.answer as h\n"
        "def boom(*a, **k):\n    raise RuntimeError('policy bug')\n"
        "h.decide_call = boom\n"
        "from vaultops.cli import main\n"
        "sys.exit(main(['hook']))\n"
    )
    payload = json.loads((FIXTURES / "pretooluse_bash.json").read_text())
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env(),
        timeout=30,
    )
    kind, reason = pre(proc)
    assert kind == "deny" and "internal error RuntimeError('policy bug')" in reason


def test_a_hook_that_cannot_finish_denies_by_itself() -> None:
    """stdin never closes (or a disk hangs): the watchdog answers before Claude Code's timeout would allow."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultops", "hook"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(VAULTOPS_HOOK_DEADLINE="0.5"),
        cwd=REPO,
    )
    try:
        start = time.monotonic()
        assert proc.stdin is not None
        proc.stdin.write('{"hook_event_name": "PreToolUse", ')
        proc.stdin.flush()
        code = proc.wait(timeout=20)
        assert time.monotonic() - start < 10
        assert code == 2
        assert proc.stderr is not None and "longer than 0.5 s" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_the_hook_answers_well_within_a_second(workdir: Path) -> None:
    payload = event(workdir, command="git status && pytest -q | tee log.txt")
    times = []
    for _ in range(5):
        start = time.monotonic()
        assert pre(run_hook(payload))[0] == "allow"
        times.append(time.monotonic() - start)
    print(
        f"\nvaultops hook: median {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
    )
    assert statistics.median(times) < 1.0


# --- init --claude ----------------------------------------------------------------------------------------


def _init(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vaultops", *args],
        capture_output=True,
        text=True,
        env=env(),
        timeout=60,
        cwd=REPO,
    )


def test_init_claude_wires_the_hook_idempotently_keeping_other_settings(tmp_path: Path, vault: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    other = {
        "permissions": {"allow": ["Read"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]},
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(other))
    proc = _init("--vault", str(vault), "init", "--claude", str(project))
    assert proc.returncode == 0, proc.stderr
    assert "added the vaultops hook" in proc.stdout
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert (
        settings["permissions"] == other["permissions"]
        and settings["hooks"]["Stop"] == other["hooks"]["Stop"]
    )
    [entry] = settings["hooks"]["PreToolUse"]
    assert entry["matcher"] == "*"
    [hook] = entry["hooks"]
    assert hook["type"] == "command" and hook["timeout"] == 30
    argv = shlex.split(hook["command"].removesuffix(" || exit 2"))
    assert (
        os.path.isabs(argv[0])
        and argv[-1] == "hook"
        and argv[argv.index("--vault") + 1] == str(vault.resolve())
    )
    before = (project / ".claude" / "settings.json").read_bytes()
    again = _init("--vault", str(vault), "init", "--claude", str(project))
    assert again.returncode == 0 and "nothing to do" in again.stdout
    assert (project / ".claude" / "settings.json").read_bytes() == before


def test_the_wired_command_runs_through_a_shell_and_fails_closed(tmp_path: Path, workdir: Path) -> None:
    command = hook_command(None)
    payload = json.dumps(event(workdir, command="rm -rf /"))
    proc = subprocess.run(
        ["sh", "-c", command], input=payload, capture_output=True, text=True, env=env(), timeout=30
    )
    assert pre(proc)[0] == "deny"
    broken = hook_command(None, argv0="").replace(sys.executable, str(tmp_path / "no-such-python"))
    proc = subprocess.run(
        ["sh", "-c", broken], input=payload, capture_output=True, text=True, env=env(), timeout=30
    )
    assert proc.returncode == 2  # vaultops missing: still a blocking exit, not 127


def test_init_claude_refuses_broken_settings_and_missing_folders(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text("{not json")
    proc = _init("init", "--claude", str(project))
    assert proc.returncode == 1 and "settings.json: not valid JSON" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert (project / ".claude" / "settings.json").read_text() == "{not json"
    proc = _init("init", "--claude", str(tmp_path / "nowhere"))
    assert proc.returncode == 1 and "no such folder" in proc.stderr
    assert not (tmp_path / "nowhere").exists()


