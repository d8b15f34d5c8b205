"""Every process a job starts ends with the job, also one that left its process group or session
(issue 25, Deliver 6).  Real shell scripts, real processes; each escaped process writes its own pid, and the
job waits for those files before it exits (a handshake: the job never ends before they exist)."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.helpers import REPO, inbox_text, routed, vault_with, vaultops
from tests.support.waiting import wait_for
from tests.support.worker_helpers import FAKE_WORKER, cli, listed
from vaultops.run import process
from vaultops.run.process import ProcessResult, run_process

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is Linux's")

# sh -c "$MARK" FILE: the process writes its pid to FILE (whole, by a rename), then becomes `sleep 1000`
MARK = 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 1000'

DAEMON = """
import os, sys, time
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
os.chdir("/")
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(1000)
"""

# How an agent's tool may leave the job: each line starts one process that writes $d/NAME.pid
ESCAPES = {
    "setsid": f"setsid sh -c '{MARK}' \"$d/setsid.pid\" &",
    "setsid-f": f"setsid -f sh -c '{MARK}' \"$d/setsid-f.pid\"",
    "double-fork": f"( sh -c '{MARK}' \"$d/double-fork.pid\" & )",
    "nohup": f"nohup sh -c '{MARK}' \"$d/nohup.pid\" >/dev/null 2>&1 &",
    "env-i": f"env -i PATH=/usr/bin:/bin setsid sh -c '{MARK}' \"$d/env-i.pid\" &",
    "daemon": f'"{sys.executable}" "$d/daemon.py" "$d/daemon.pid"',
    "plain": f"sh -c '{MARK}' \"$d/plain.pid\" &",
}


def job_script(folder: Path, escapes: list[str], then: str = "exit 0") -> list[str]:
    """A job that starts the ``escapes``, waits until each has written its pid, then does ``then``."""
    (folder / "daemon.py").write_text(DAEMON)
    waits = "\n".join(f'while [ ! -s "$d/{name}.pid" ]; do sleep 0.01; done' for name in escapes)
    body = "\n".join(ESCAPES[name] for name in escapes)
    path = folder / "job.sh"
    path.write_text(f'#!/bin/sh\nd="{folder}"\n{body}\n{waits}\n{then}\n')
    path.chmod(0o755)
    return [str(path)]


def running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def pids(folder: Path, names: list[str]) -> dict[str, int]:
    return {name: int((folder / f"{name}.pid").read_text()) for name in names}


def kill_all(found: dict[str, int]) -> None:
    """What a failing test left: each process, and its group where it leads one."""
    for pid in found.values():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)


def assert_gone(found: dict[str, int]) -> None:
    left = {name: pid for name, pid in found.items() if not wait_for(lambda p=pid: not running(p), 10)}
    assert not left, f"outlived the job: {left}"


@pytest.mark.parametrize("escape", sorted(ESCAPES))
def test_what_a_quick_job_started_ends_with_it(tmp_path: Path, escape: str) -> None:
    result = run_process(job_script(tmp_path, [escape]), cwd=tmp_path, timeout=30)
    found = pids(tmp_path, [escape])
    try:
        assert result.exit_code == 0 and not result.timed_out, result
        assert_gone(found)
    finally:
        kill_all(found)


def test_all_at_once_and_the_run_is_not_held_by_them(tmp_path: Path) -> None:
    names = sorted(ESCAPES)
    result = run_process(job_script(tmp_path, names), cwd=tmp_path, timeout=30)
    found = pids(tmp_path, names)
    try:
        assert result.exit_code == 0 and not result.timed_out
        assert "stopped reading" not in result.stdout + result.stderr  # nothing held the pipes
        assert_gone(found)
    finally:
        kill_all(found)


def test_a_job_that_times_out_takes_them_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "TERM_GRACE", 1.0)
    names = sorted(ESCAPES)
    argv = job_script(tmp_path, names, then=f'touch "{tmp_path}/ready"; exec sleep 1000')
    timeout = 4.0  # room for a busy machine to start them all first
    result = run_process(argv, cwd=tmp_path, timeout=timeout)
    try:
        assert (tmp_path / "ready").exists(), "the job timed out before it started them: a slow machine"
        found = pids(tmp_path, names)
        assert result.timed_out and result.limit == "timeout"
        assert_gone(found)
    finally:
        with contextlib.suppress(FileNotFoundError, ValueError):
            kill_all(pids(tmp_path, names))


def test_a_job_whose_processes_ignore_sigterm_is_killed_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "TERM_GRACE", 0.5)
    stubborn = MARK.replace("echo", "trap '' TERM; echo").replace("exec sleep 1000", "sleep 1000")
    folder = tmp_path
    script = folder / "job.sh"
    script.write_text(f"#!/bin/sh\nd=\"{folder}\"\nsetsid sh -c '{stubborn}' \"$d/s.pid\" &\n"
                      'while [ ! -s "$d/s.pid" ]; do sleep 0.01; done\n')  # fmt: skip
    script.chmod(0o755)
    result = run_process([str(script)], cwd=folder, timeout=30)
    found = pids(folder, ["s"])
    try:
        assert result.exit_code == 0
        assert_gone(found)
    finally:
        kill_all(found)


def test_two_jobs_at_once_one_ends_the_other_keeps_its_processes(tmp_path: Path) -> None:
    """Two jobs of one daemon (max_concurrent): the end of one stops its own processes only, and
    nothing the caller started beside them (as the daemon's worker supervisors or git)."""
    bystander = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    folders = {name: tmp_path / name for name in ("a", "b")}
    results: dict[str, ProcessResult] = {}
    threads = []
    for name, folder in folders.items():
        folder.mkdir()
        argv = job_script(
            folder, ["setsid", "double-fork"], then=f'while [ ! -e "{folder}/go" ]; do sleep 0.01; done'
        )
        thread = threading.Thread(
            target=lambda n=name, a=argv, f=folder: results.__setitem__(n, run_process(a, cwd=f, timeout=60))
        )
        thread.start()
        threads.append(thread)
    found: dict[str, dict[str, int]] = {}
    try:
        for name, folder in folders.items():
            assert wait_for(lambda f=folder: (f / "setsid.pid").exists() and (f / "double-fork.pid").exists())
            found[name] = pids(folder, ["setsid", "double-fork"])
        (folders["a"] / "go").touch()
        threads[0].join(30)
        assert results["a"].exit_code == 0
        assert_gone(found["a"])
        assert all(running(pid) for pid in found["b"].values()), "the other job's processes were stopped"
        assert running(bystander.pid), "a process the caller started was stopped"
        (folders["b"] / "go").touch()
        threads[1].join(30)
        assert results["b"].exit_code == 0
        assert_gone(found["b"])
    finally:
        for folder in folders.values():
            (folder / "go").touch()
        for thread in threads:
            thread.join(30)
        for each in found.values():
            kill_all(each)
        bystander.kill()
        bystander.wait()


def test_the_command_is_the_pid_given_and_the_environment_is_as_given(tmp_path: Path) -> None:
    """The reaper in between changes nothing the command sees: its pid (recorded for crash recovery)
    leads its own session and group, and its environment is exactly the one given (no LC_CTYPE added
    by the interpreter under a C locale)."""
    given: list[int] = []
    code = "import os; print(os.getpid(), os.getsid(0), os.getpgid(0))"
    result = run_process([sys.executable, "-c", code], cwd=tmp_path, timeout=30, on_start=given.append)
    pid, sid, pgid = result.stdout.split()
    assert given == [int(pid)] and pid == sid == pgid
    env = {"PATH": os.environ.get("PATH", ""), "LANG": "C", "ONLY": "this"}
    shown = run_process(["env"], cwd=tmp_path, env=env, timeout=30).stdout  # not Python: it adds LC_CTYPE
    assert sorted(shown.splitlines()) == sorted(f"{k}={v}" for k, v in env.items())
    # the signals it ignores or blocks are those a direct start gives (posix_spawn left glibc's ignored)
    signals = ["grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"]
    direct = subprocess.run(signals, capture_output=True, text=True, start_new_session=True, check=True)
    assert run_process(signals, cwd=tmp_path, timeout=30).stdout == direct.stdout


def test_a_job_run_by_tick_leaves_nothing_behind(tmp_path: Path) -> None:
    """The same through `vaultops tick`: a profile's command that starts a setsid'd and a double-forked
    process and exits at once."""
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    argv = job_script(pid_dir, ["setsid", "double-fork", "daemon"], then="echo started them; exit 0")
    profile = (
        f'[profiles.worker-code]\ncommand = ["{argv[0]}"]\noutput = "text"\ntimeout = 30\n'
        'health = []\ngate = "none"\n\n'
    )
    inbox = "# Inbox\n\n## REQ-escape\n- type: code\n- ready: yes\nStart a helper.\n"
    vault = vault_with(tmp_path / "v", inbox, routed(profile, 'code = ["worker-code"]', "[0.05]"))
    proc = vaultops("--vault", str(vault), "tick")
    found = pids(pid_dir, ["setsid", "double-fork", "daemon"])
    try:
        assert "REQ-escape: done" in proc.stdout, proc.stdout + proc.stderr
        assert "started them" in inbox_text(vault)
        assert_gone(found)
    finally:
        kill_all(found)


DAEMON_RUNS_A_JOB = """
import sys
from pathlib import Path
from vaultops.run.process import run_process
folder = Path(sys.argv[1])
say = lambda pid: (folder / "job.pid").write_text(str(pid))
run_process([sys.argv[2]], cwd=folder, timeout=120, on_start=say)
"""


def test_after_a_crash_recovery_stopping_the_recorded_pid_stops_what_escaped(tmp_path: Path) -> None:
    """The daemon is killed (-9) while its job runs; a restarted daemon stops the job by its recorded pid,
    as vaultops.engine.recover does (its group, SIGKILL): what left that group ends too."""
    [job] = job_script(tmp_path, ["setsid"], then="exec sleep 1000")
    daemon = subprocess.Popen([sys.executable, "-c", DAEMON_RUNS_A_JOB, str(tmp_path), job])
    found: dict[str, int] = {}
    try:
        assert wait_for(lambda: (tmp_path / "job.pid").exists() and (tmp_path / "setsid.pid").exists())
        found = pids(tmp_path, ["job", "setsid"])
        daemon.kill()
        daemon.wait()
        # the job's reaper dies with the daemon (PR_SET_PDEATHSIG) and may stop it first: either way,
        # the recorded pid's group, killed as recovery does, leaves nothing running
        with contextlib.suppress(ProcessLookupError):
            os.killpg(found["job"], signal.SIGKILL)
        assert_gone(found)
    finally:
        daemon.kill()
        daemon.wait()
        kill_all(found)


def test_a_reaper_that_cannot_run_is_a_start_error_that_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing ran, and the run says why, instead of an exit code of a command that never started."""
    broken = (sys.executable, "-I", "-S", "-c", "import sys; sys.exit('no prctl here')")
    monkeypatch.setattr(process, "_reaper_argv", lambda: broken)
    result = run_process(["true"], cwd=tmp_path, timeout=30)
    assert result.exit_code is None and result.start_error is not None
    assert result.start_error.startswith("could not start true: vaultops's process reaper"), (
        result.start_error
    )
    assert "no prctl here" in result.stderr


def test_a_term_for_the_reaper_is_a_term_for_the_whole_job(tmp_path: Path) -> None:
    """A service manager that stops every process of the unit (KillMode=control-group) signals the reaper
    too: it passes the TERM on to the command and to what escaped it, and the run ends with them."""
    [job] = job_script(tmp_path, ["setsid"], then=f'touch "{tmp_path}/ready"; exec sleep 1000')
    given: list[int] = []
    results: list[ProcessResult] = []
    thread = threading.Thread(
        target=lambda: results.append(run_process([job], cwd=tmp_path, timeout=60, on_start=given.append))
    )
    thread.start()
    found: dict[str, int] = {}
    try:
        assert wait_for(lambda: (tmp_path / "ready").exists() and bool(given))
        found = pids(tmp_path, ["setsid"])
        reaper = int(Path(f"/proc/{given[0]}/stat").read_text().rsplit(")", 1)[1].split()[1])
        assert reaper != os.getpid()
        os.kill(reaper, signal.SIGTERM)
        thread.join(30)
        assert results and results[0].exit_code == -signal.SIGTERM and not results[0].timed_out
        assert_gone(found)
    finally:
        kill_all({**found, **({"job": given[0]} if given else {})})
        thread.join(30)


def test_a_worker_a_job_spawned_lives_on_and_what_else_it_started_does_not(
    tmp_path: Path, make: Callable[..., Path]
) -> None:
    """`vaultops worker spawn` inside a job starts a long-lived session that vaultops records and stops
    itself (`worker terminate`): the job's end leaves it, and stops the rest of what the job started."""
    vault = make()
    spawn = [
        sys.executable,
        "-m",
        "vaultops",
        "--vault",
        str(vault),
        "worker",
        "spawn",
        "w1",
        "--dir",
        str(vault),
    ]
    argv = job_script(tmp_path, ["setsid"], then=shlex.join([*spawn, "--", FAKE_WORKER]))
    env = {**os.environ, "VAULTOPS_WORKER": ""}  # the test may itself run inside a worker
    result = run_process(argv, cwd=REPO, env=env, timeout=60)
    found = pids(tmp_path, ["setsid"])
    try:
        assert result.exit_code == 0, result.stdout + result.stderr
        assert_gone(found)
        row = listed(vault)["w1"]
        assert row["state"] == "running" and running(row["pid"]), row
        assert cli(vault, "terminate", "w1").returncode == 0
        assert wait_for(lambda: not running(row["pid"]))
    finally:
        kill_all(found)
