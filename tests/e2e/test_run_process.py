"""run_process() with real child processes: small Python scripts run with this interpreter."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vaultops.base.redact import redact
from vaultops.run import process
from vaultops.run.process import run_process


def script(tmp_path: Path, body: str, name: str = "child.py") -> list[str]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return [sys.executable, str(path)]


def gone(pid: int) -> bool:
    """Dead, or a zombie nobody has reaped yet (not every container's init reaps orphans)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():
        return stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    return False


def wait_gone(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.05)
    return gone(pid)


def kill_if_alive(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture(autouse=True)
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "TERM_GRACE", 1.0)


def test_exit_code_and_both_streams(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        """
        import sys
        print("to stdout")
        print("to stderr", file=sys.stderr)
        sys.exit(3)
    """,
    )
    result = run_process(argv, cwd=tmp_path, timeout=30)
    assert result.exit_code == 3 and not result.timed_out and result.start_error is None
    assert result.stdout == "to stdout\n" and result.stderr == "to stderr\n"
    assert result.argv == tuple(argv) and 0 < result.duration < 30


def test_killed_by_a_signal_is_a_negative_exit_code(tmp_path: Path) -> None:
    argv = script(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert run_process(argv, cwd=tmp_path, timeout=30).exit_code == -signal.SIGKILL


def test_own_session_and_group_and_no_stdin(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        """
        import os, sys
        print(os.getpgid(0) == os.getpid(), os.getsid(0) == os.getpid(), repr(sys.stdin.read()))
    """,
    )
    result = run_process(argv, cwd=tmp_path, timeout=30)
    assert result.stdout == "True True ''\n"


def test_cwd(tmp_path: Path) -> None:
    work = tmp_path / "work dir"
    work.mkdir()
    result = run_process([sys.executable, "-c", "import os; print(os.getcwd())"], cwd=work, timeout=30)
    assert Path(result.stdout.strip()).resolve() == work.resolve()


def test_env_is_passed_and_notify_socket_removed(tmp_path: Path) -> None:
    env = {"FOO": "bar baz", "NOTIFY_SOCKET": "/run/systemd/notify", "PATH": os.environ.get("PATH", "")}
    code = "import os; print(os.environ.get('FOO'), os.environ.get('NOTIFY_SOCKET'), 'HOME' in os.environ)"
    result = run_process([sys.executable, "-c", code], cwd=tmp_path, env=env, timeout=30)
    assert result.stdout == "bar baz None False\n"


def test_env_defaults_to_ours_without_notify_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULTOPS_TEST_VAR", "inherited")
    monkeypatch.setenv("NOTIFY_SOCKET", "/run/systemd/notify")
    code = "import os; print(os.environ.get('VAULTOPS_TEST_VAR'), os.environ.get('NOTIFY_SOCKET'))"
    result = run_process([sys.executable, "-c", code], cwd=tmp_path, timeout=30)
    assert result.stdout == "inherited None\n"


def test_missing_executable_is_a_start_error(tmp_path: Path) -> None:
    result = run_process(["vaultops-no-such-command-xyz", "--version"], cwd=tmp_path, timeout=30)
    assert result.exit_code is None and not result.timed_out
    assert result.start_error == "command not found: vaultops-no-such-command-xyz"
    assert result.stdout == result.stderr == ""


def test_not_executable_is_a_start_error(tmp_path: Path) -> None:
    path = tmp_path / "not-exec"
    path.write_text("#!/bin/sh\necho hi\n")
    path.chmod(0o644)
    result = run_process([str(path)], cwd=tmp_path, timeout=30)
    if os.geteuid() == 0 and result.start_error is None:
        pytest.skip("root may execute files without an exec bit on this system")
    assert result.exit_code is None and result.start_error == f"permission denied: {path}"


def test_missing_cwd_and_empty_argv_are_start_errors(tmp_path: Path) -> None:
    result = run_process([sys.executable, "-c", "pass"], cwd=tmp_path / "missing", timeout=30)
    assert result.start_error is not None and "working directory" in result.start_error
    assert run_process([], cwd=tmp_path, timeout=30).start_error == "empty command"


def test_nul_in_an_argument_is_a_start_error(tmp_path: Path) -> None:
    result = run_process([sys.executable, "-c", "pass", "a\0b"], cwd=tmp_path, timeout=30)
    assert result.exit_code is None and result.start_error


GRANDCHILD = """
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    print(child.pid, flush=True)
    {rest}
"""


def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    argv = script(tmp_path, GRANDCHILD.format(rest="time.sleep(120)"))
    start = time.monotonic()
    result = run_process(argv, cwd=tmp_path, timeout=3.0)  # room for a slow start on a busy machine
    grandchild = int(result.stdout.split()[0])
    try:
        assert result.timed_out and result.exit_code == -signal.SIGTERM
        assert time.monotonic() - start < 10
        assert wait_gone(grandchild)
    finally:
        kill_if_alive(grandchild)


def test_sigterm_ignored_then_sigkill(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        """
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ready", flush=True)
        time.sleep(120)
    """,
    )
    start = time.monotonic()
    # Silence after "ready" ends it, so SIGTERM cannot arrive before SIGTERM is ignored.
    result = run_process(argv, cwd=tmp_path, timeout=60, inactivity_timeout=2.0)
    assert result.timed_out and result.exit_code == -signal.SIGKILL and result.stdout == "ready\n"
    assert time.monotonic() - start < 10


def test_inactivity_timeout(tmp_path: Path) -> None:
    argv = script(tmp_path, "import time; print('started', flush=True); time.sleep(120)")
    start = time.monotonic()
    result = run_process(argv, cwd=tmp_path, timeout=60, inactivity_timeout=0.5)
    assert result.timed_out and result.stdout == "started\n"
    assert time.monotonic() - start < 10


def test_steady_output_on_either_stream_is_activity(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        """
        import sys, time
        for i in range(30):
            print(i, file=sys.stderr if i % 2 else sys.stdout, flush=True)
            time.sleep(0.1)
    """,
    )
    result = run_process(argv, cwd=tmp_path, timeout=60, inactivity_timeout=2.0)
    assert not result.timed_out and result.exit_code == 0


def test_leftovers_are_stopped_when_the_command_exits(tmp_path: Path) -> None:
    # The grandchild keeps the pipes open; the run must not wait for it, nor leave it behind.
    argv = script(tmp_path, GRANDCHILD.format(rest="sys.exit(0)"))
    start = time.monotonic()
    result = run_process(argv, cwd=tmp_path, timeout=60)
    grandchild = int(result.stdout.split()[0])
    try:
        assert result.exit_code == 0 and not result.timed_out
        assert time.monotonic() - start < 10
        assert wait_gone(grandchild)
    finally:
        kill_if_alive(grandchild)


def test_a_process_that_left_the_group_does_not_hold_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # without the reaper (as on macOS) the escaped process is left holding the pipes; under it, it ends
    # with the run (tests/e2e/test_faults_procs_reaper.py)
    monkeypatch.setattr(process, "_reaper_argv", lambda: ())
    argv = script(
        tmp_path,
        """
        import subprocess, sys
        code = "import time; time.sleep(60)"
        child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        print(child.pid, flush=True)
    """,
    )
    start = time.monotonic()
    result = run_process(argv, cwd=tmp_path, timeout=60)
    escaped = int(result.stdout.split()[0])
    kill_if_alive(escaped)
    assert result.exit_code == 0 and time.monotonic() - start < 10
    assert "stopped reading" in result.stdout


def test_output_cap_keeps_the_head(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        """
        import sys
        sys.stdout.write("HEAD" + "x" * 1_000_000)
        sys.stderr.write("e" * 10)
    """,
    )
    result = run_process(argv, cwd=tmp_path, timeout=60, max_output_bytes=1000)
    head, _, note = result.stdout.partition("\n")
    assert head == "HEAD" + "x" * 996
    assert "cut at 1000 bytes; 999004 more bytes dropped" in note
    assert result.stderr == "e" * 10


def test_invalid_utf8_and_binary_output(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        r"""
        import sys
        sys.stdout.buffer.write(b"ok \xff\xfe bin\x00ary \xe2\x82")
        sys.stderr.buffer.write("é €\n".encode())
    """,
    )
    result = run_process(argv, cwd=tmp_path, timeout=30)
    assert result.stdout == "ok \ufffd\ufffd bin\x00ary \ufffd"
    assert result.stderr == "é €\n"


def test_huge_output_on_both_streams_does_not_deadlock(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        """
        import sys
        block = b"y" * 65536
        for _ in range(400):  # 25 MiB to each stream, interleaved
            sys.stdout.buffer.write(block)
            sys.stderr.buffer.write(block)
    """,
    )
    result = run_process(argv, cwd=tmp_path, timeout=120, max_output_bytes=2_000_000)
    assert result.exit_code == 0 and not result.timed_out
    assert result.stdout.startswith("y" * 2_000_000) and "more bytes dropped" in result.stdout


def test_full_output_is_kept_below_the_cap(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        """
        import sys
        for i in range(100_000):
            print(i)
            print(i, file=sys.stderr)
    """,
    )
    result = run_process(argv, cwd=tmp_path, timeout=120)
    expected = "".join(f"{i}\n" for i in range(100_000))
    assert result.stdout == expected and result.stderr == expected


def test_outputs_are_kept_raw_with_the_secrets_to_redact_them(tmp_path: Path) -> None:
    # parsing comes first (vaultops.run.outcome), redaction second: the result carries what to redact
    argv = script(
        tmp_path,
        """
        import sys
        print("key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345 and hunter2-pw")
        print("DB_PASSWORD=hunter2-pw", file=sys.stderr)
    """,
    )
    result = run_process(argv, cwd=tmp_path, timeout=30, extra_secrets=["hunter2-pw"])
    assert result.stdout == "key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345 and hunter2-pw\n"
    assert result.stderr == "DB_PASSWORD=hunter2-pw\n"
    assert result.secrets == ("hunter2-pw",) and "secrets=" not in repr(result)
    assert redact(result.stdout, result.secrets) == "key [REDACTED:anthropic] and [REDACTED:secret]\n"


ESCAPER = r"""
import os, subprocess, sys, time
# a grandchild in a session of its own, as Claude Code's Bash tool starts its commands
pid = subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(120)"]).pid
open(sys.argv[1], "w").write(str(pid))
# alive until the runner has seen the grandchild (the test's hook on its tree says so with a file)
deadline = time.monotonic() + 30
while not os.path.exists(sys.argv[1] + ".seen") and time.monotonic() < deadline:
    time.sleep(0.01)
if sys.argv[2] == "hang":
    time.sleep(120)
"""


@pytest.mark.parametrize("how", ["hang", "exit"])
def test_descendants_in_their_own_session_do_not_outlive_the_run(
    tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression for agent CLIs that run tools with setsid: killing the group alone left them running."""
    script = tmp_path / "escaper.py"
    script.write_text(ESCAPER)
    pid_file = tmp_path / "grandchild.pid"
    sample = process._Tree.sample

    def sample_and_say(tree: process._Tree) -> None:
        """The runner's own look at the tree, then the handshake: once it knows the grandchild, the
        escaper may go on (it waited a fixed 0.8 s, which a busy machine can outlast)."""
        sample(tree)
        with contextlib.suppress(OSError, ValueError):
            if int(pid_file.read_text()) in tree.known:
                pid_file.with_name(pid_file.name + ".seen").touch()

    monkeypatch.setattr(process._Tree, "sample", sample_and_say)
    result = run_process([sys.executable, str(script), str(pid_file), how], cwd=tmp_path, timeout=2)
    assert result.timed_out == (how == "hang")
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{grandchild}").exists():
        state = Path(f"/proc/{grandchild}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state in ("Z", "X"):
            break
        time.sleep(0.05)
    gone = not Path(f"/proc/{grandchild}").exists() or Path(f"/proc/{grandchild}/stat").read_text().rsplit(
        ")", 1
    )[1].split()[0] in ("Z", "X")
    assert gone, f"the grandchild {grandchild} is still running"
