"""Long-lived workers (docs/architecture.md), with real child processes.

The worker is ``fixtures/bin/fake-worker``: it prints its arguments as lines, then echoes its stdin.  Every
test's vault is torn down by killing whatever worker groups it still has, so no process outlives a test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.fake_servers import JsonSink
from tests.support.helpers import FAKE_AGENT, vaultops
from tests.support.waiting import WAIT, wait_for
from tests.support.worker_helpers import FAKE_WORKER, cli, gone, in_log, listed, logs
from vaultops.run.process import process_start_time
from vaultops.store.state import StateDB
from vaultops.vault import Vault
from vaultops.workers import control
from vaultops.workers.registry import Registry


def spawn(
    vault: Path, name: str, *extra: str, args: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> Any:
    return cli(vault, "spawn", name, *extra, "--", FAKE_WORKER, *args, env=env)


def one_line_error(proc: Any) -> str:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.splitlines()
    return str(line)


# --- end to end through the CLI ----------------------------------------------------------------------------


def test_spawn_list_inject_logs_terminate(make: Callable[..., Path]) -> None:
    vault = make()
    proc = spawn(vault, "w1", "--dir", str(vault), "--files", "src/*", args=("[STATUS:start] hello",))
    assert proc.returncode == 0, proc.stderr
    assert "running" in proc.stdout
    row = listed(vault)["w1"]
    assert row["state"] == "running" and row["parent"] == "person" and row["dir"] == str(vault)
    assert row["pid"] and process_start_time(row["pid"]) is not None
    assert row["commit"].endswith(" start")  # the latest commit in its folder
    table = cli(vault, "list").stdout
    assert table.splitlines()[0].split() == ["NAME", "STATE", "PID", "PARENT", "AGE", "DIR", "COMMIT"]
    assert "w1" in table and "running" in table

    assert cli(vault, "inject", "w1", "hello there").returncode == 0
    assert wait_for(lambda: in_log(vault, "w1", "echo: hello there")), "the injected line echoed"
    assert cli(vault, "inject", "w1", "env").returncode == 0
    assert wait_for(lambda: in_log(vault, "w1", "VAULTOPS_VAULT=")), "the environment printed"
    lines = logs(vault, "w1")
    assert "VAULTOPS_WORKER=w1" in lines and "VAULTOPS_PARENT=person" in lines
    assert f"VAULTOPS_VAULT={vault}" in lines
    assert "[STATUS:start] hello" in lines and "[stderr] ready" in lines
    assert logs(vault, "w1", 1) == [lines[-1]]

    done = cli(vault, "terminate", "w1")
    assert done.returncode == 0, done.stderr
    assert "stopped with TERM" in done.stdout
    row = listed(vault)["w1"]
    assert row["state"] == "exited" and row["exit_code"] == -signal.SIGTERM
    assert gone(row["pid"])
    assert "not running" in one_line_error(cli(vault, "inject", "w1", "anyone?"))
    assert "already ended" in cli(vault, "terminate", "w1").stdout


def test_a_worker_outlives_the_cli_and_is_killed_when_it_ignores_term(make: Callable[..., Path]) -> None:
    vault = make()
    assert spawn(vault, "stubborn", env={"FAKE_WORKER_IGNORE_TERM": "1"}).returncode == 0
    pid = listed(vault)["stubborn"]["pid"]
    # every call is a new process: the one that spawned it is long gone, as after a daemon restart
    for n in range(3):
        assert listed(vault)["stubborn"]["state"] == "running"
        assert cli(vault, "inject", "stubborn", f"ping {n}").returncode == 0
        assert wait_for(lambda n=n: in_log(vault, "stubborn", f"echo: ping {n}")), f"ping {n}"
    done = cli(vault, "terminate", "stubborn", "--grace", "0.5")
    assert done.returncode == 0 and "killed after 0.5 s" in done.stdout
    assert listed(vault)["stubborn"]["state"] == "exited"
    assert gone(pid)


def test_terminate_reaches_what_the_worker_started_in_a_session_of_its_own(make: Callable[..., Path]) -> None:
    vault = make()
    assert spawn(vault, "parent").returncode == 0
    assert cli(vault, "inject", "parent", "detach").returncode == 0
    line = wait_for(lambda: next((x for x in logs(vault, "parent") if x.startswith("detached ")), None))
    assert line, "the detached child's pid printed"
    child = int(line.split()[1])
    assert not gone(child)
    try:
        assert cli(vault, "terminate", "parent").returncode == 0
        assert wait_for(lambda: gone(child)), "the detached child stopped"
    finally:
        if not gone(child):
            os.kill(child, signal.SIGKILL)


def test_a_worker_that_exits_leaves_nothing_behind(make: Callable[..., Path]) -> None:
    vault = make()
    assert spawn(vault, "quitter").returncode == 0
    assert cli(vault, "inject", "quitter", "detach").returncode == 0
    line = wait_for(lambda: next((x for x in logs(vault, "quitter") if x.startswith("detached ")), None))
    assert line, "the detached child's pid printed"
    child = int(line.split()[1])
    try:
        time.sleep(3)  # not an assertion: gives the supervisor's tree sampling (every 1 s) time to see it
        assert cli(vault, "inject", "quitter", "exit 3").returncode == 0
        assert wait_for(lambda: listed(vault)["quitter"]["state"] == "failed"), "failed with its code"
        assert listed(vault)["quitter"]["exit_code"] == 3
        assert wait_for(lambda: gone(child)), "the detached child stopped"
    finally:
        if not gone(child):
            os.kill(child, signal.SIGKILL)


def test_a_reused_pid_is_not_the_worker(make: Callable[..., Path]) -> None:
    vault = make()
    assert spawn(vault, "gone").returncode == 0
    state = StateDB(vault / ".vaultops" / "state" / "state.db")
    registry = Registry(state)
    worker = registry.get("gone")
    assert worker is not None and worker.sup_pid is not None
    os.killpg(worker.sup_pid, signal.SIGKILL)  # nothing is left to record the end
    assert wait_for(lambda: listed(vault)["gone"]["state"] == "lost"), "the dead worker shown lost"
    # the pid now belongs to someone else (this test), started at another time
    me = os.getpid()
    wrong = (process_start_time(me) or 0) + 1
    state.db.execute(
        "UPDATE workers SET state = 'running', pid = ?, pid_start = ?, sup_pid = ?, sup_start = ?"
        " WHERE name = ?",
        (me, wrong, me, wrong, "gone"),
    )
    state.close()
    assert listed(vault)["gone"]["state"] == "lost"
    assert "not running" in one_line_error(cli(vault, "inject", "gone", "hello"))
    done = cli(vault, "terminate", "gone")  # must not signal this test's process
    assert done.returncode == 0 and "lost" in done.stdout
    assert listed(vault)["gone"]["state"] == "lost"


# --- refusals ----------------------------------------------------------------------------------------------


def test_a_worker_may_not_spawn_workers(make: Callable[..., Path]) -> None:
    vault = make()
    line = one_line_error(spawn(vault, "child", env={"VAULTOPS_WORKER": "boss"}))
    assert "a worker may not spawn workers" in line and "VAULTOPS_WORKER=boss" in line
    assert listed(vault) == {}


def test_overlapping_files_are_refused_naming_the_other_worker(make: Callable[..., Path]) -> None:
    vault = make()
    assert spawn(vault, "a", "--files", "src/*.py").returncode == 0
    line = one_line_error(spawn(vault, "b", "--files", "src/app/x.py"))
    assert "overlap" in line and "worker a" in line
    assert "overlap" in one_line_error(spawn(vault, "c"))  # no --files: any file, so every file
    assert spawn(vault, "d", "--files", "docs/*").returncode == 0
    assert sorted(listed(vault)) == ["a", "d"]


def test_the_number_of_workers_is_capped(make: Callable[..., Path]) -> None:
    vault = make("[workers]\nmax = 2\n")
    assert spawn(vault, "one", "--files", "1/*").returncode == 0
    assert spawn(vault, "two", "--files", "2/*").returncode == 0
    line = one_line_error(spawn(vault, "three", "--files", "3/*"))
    assert "as many as [workers] max allows (2)" in line
    assert cli(vault, "terminate", "one").returncode == 0
    assert spawn(vault, "three", "--files", "3/*").returncode == 0


def test_concurrent_spawns_never_pass_the_cap_together(make: Callable[..., Path]) -> None:
    vault = make("[workers]\nmax = 1\n")
    env = {**os.environ, "VAULTOPS_WORKER": ""}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "vaultops",
                "--vault",
                str(vault),
                "worker",
                "spawn",
                f"racer{i}",
                "--files",
                f"{i}/*",
                "--",
                FAKE_WORKER,
            ],
            cwd=vault,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    said = [p.communicate(timeout=WAIT) for p in procs]
    codes = [p.returncode for p in procs]
    assert sorted(codes) == [0, 1, 1, 1], [err for _, err in said]
    assert [row["state"] for row in listed(vault).values()] == ["running"]


def test_other_refusals(make: Callable[..., Path], tmp_path: Path) -> None:
    vault = make()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    assert "allowed_roots" in one_line_error(spawn(vault, "x", "--dir", str(outside)))
    assert "not a usable worker name" in one_line_error(spawn(vault, "../x"))
    assert "did not start" in one_line_error(
        cli(vault, "spawn", "x", "--", str(tmp_path / "no-such-program"))
    )
    assert listed(vault)["x"]["state"] == "failed"
    assert spawn(vault, "x").returncode == 0  # a name that ended may be used again
    assert "already running" in one_line_error(spawn(vault, "x"))
    assert "put the command after --" in one_line_error(cli(vault, "spawn", "y", "--dir", str(vault), "cat"))
    assert cli(vault, "terminate", "x").returncode == 0
    proc = cli(vault, "spawn", "y", "--dir", str(vault), "--prompt", "look")  # the README's form
    assert proc.returncode == 0, proc.stderr
    assert listed(vault)["y"]["command"][0] == str(FAKE_AGENT), "the profile [routing] gives code work"
    with (vault / ".vaultops" / "local.toml").open("a") as fh:
        fh.write("[routing]\ncode = []\ndefault = []\n")
    assert "no command to run" in one_line_error(cli(vault, "spawn", "z", "--dir", str(vault)))
    assert "no profile named nope" in one_line_error(cli(vault, "spawn", "y", "--profile", "nope"))
    assert "no worker named nobody" in one_line_error(cli(vault, "logs", "nobody"))


# --- reports -----------------------------------------------------------------------------------------------


def test_requests_are_answered_on_stdin_and_on_the_bus(make: Callable[..., Path]) -> None:
    vault = make()
    tagged = (
        "[REQUEST:run_tests] scheme=unit",
        "[REQUEST:merge_pr] pr=12",
        "[STATUS:investigating] reading",
        "[DONE:pr_ready] CI green",
    )
    assert spawn(vault, "asker", args=tagged).returncode == 0
    assert wait_for(lambda: in_log(vault, "asker", "echo: [ANSWER:merge_pr]")), "both answers echoed"
    lines = logs(vault, "asker")
    (tests,) = [line for line in lines if line.startswith("echo: [ANSWER:run_tests]")]
    (merge,) = [line for line in lines if line.startswith("echo: [ANSWER:merge_pr]")]
    assert tests.startswith("echo: [ANSWER:run_tests] approve — ")
    assert merge.startswith("echo: [ANSWER:merge_pr] escalate — ")
    assert not any("[ANSWER:investigating]" in line for line in lines)  # STATUS asks for nothing
    # on demand, later: a push to main is escalated like a merge
    assert cli(vault, "inject", "asker", "say [REQUEST:push] branch=main").returncode == 0
    assert wait_for(lambda: in_log(vault, "asker", "echo: [ANSWER:push] escalate")), "the push answered"
    state = StateDB(vault / ".vaultops" / "state" / "state.db")
    events = [e["detail"] for e in state.events("worker_report")]
    state.close()
    assert {"worker": "asker", "tag": "DONE", "label": "pr_ready"}.items() <= events[3].items()
    assert [e["verdict"] for e in events[:2]] == ["approve", "escalate"]
    inbox = vaultops("--vault", str(vault), "bus", "inbox", "--as", "asker", "--json", cwd=vault)
    if inbox.returncode == 0:  # the bus is there: the answers are in the worker's inbox too
        assert "[ANSWER:run_tests] approve" in inbox.stdout and "[ANSWER:merge_pr] escalate" in inbox.stdout
        assert "hermes-coo" in inbox.stdout  # from the vault's agent


def test_a_persona_speaks_through_its_own_notifiers(make: Callable[..., Path]) -> None:
    vault = make()
    with JsonSink() as sink:
        lines = (
            "[STATUS:reading] the code",
            "[REQUEST:run_tests]",
            "[REQUEST:merge_pr] pr=7",
            "[DONE:pr_ready] ok",
        )
        proc = spawn(vault, "tabs", "--persona", "Tab Fixer", "--notify", sink.url(), args=lines)
        assert proc.returncode == 0, proc.stderr
        assert wait_for(lambda: len(sink.received) >= 2), "two notices"
        assert cli(vault, "terminate", "tabs").returncode == 0
        titles = [body.get("title", "") for _, body in sink.received]
    # the person hears of the escalated merge and of DONE, from the persona; not of STATUS or approved tests
    assert sorted(titles) == ["Tab Fixer: done — pr_ready", "Tab Fixer: escalated — merge_pr"]


def test_a_persona_posts_to_its_own_topic_of_the_vaults_zulip_stream(make: Callable[..., Path]) -> None:
    from tests.support.fake_zulip import FakeZulip

    vault = make()
    bot, key = "vaultops-bot@chat.example.com", "zK3m9QpR2vX7tL0aB4nC8dE6fG1hJ5sW"
    with FakeZulip(bot, key) as zulip:
        with (vault / ".vaultops" / "local.toml").open("a") as fh:
            fh.write(f'\n[notify.zulip]\nsite = "{zulip.site}"\nemail = "{bot}"\napi_key = "{key}"\n')
            fh.write('stream = "ops"\n')
        proc = spawn(vault, "exec", "--persona", "Executor", args=("[DONE:pr_ready] ok",))
        assert proc.returncode == 0, proc.stderr
        assert wait_for(lambda: zulip.topics()), "the persona's notice"
        assert cli(vault, "terminate", "exec").returncode == 0
        assert zulip.topics() == ["Executor"]
        assert "Executor: done — pr_ready" in zulip.contents()[0]


def test_a_persona_notice_that_failed_is_retried_through_the_outbox_and_sent_once(
    make: Callable[..., Path],
) -> None:
    vault = make()
    with JsonSink(codes=[500]) as sink:  # the persona's chat server is down at first
        proc = spawn(
            vault, "tabs", "--persona", "Tab Fixer", "--notify", sink.url(), args=("[DONE:pr_ready] ok",)
        )
        assert proc.returncode == 0, proc.stderr
        assert wait_for(lambda: len(sink.received) >= 2), "the retry"
        time.sleep(3)  # a third would be a notice sent twice
        titles = [body.get("title", "") for _, body in sink.received]
    assert titles == ["Tab Fixer: done — pr_ready"] * 2
    assert in_log(vault, "tabs", "not delivered, retried in 10 s")
    assert in_log(vault, "tabs", "notified: worker:tabs:")
    assert not any(sink.url().split("://")[1] in line for line in logs(vault, "tabs")), "no URL in the log"


def test_inject_stream_json_writes_a_claude_code_user_message(make: Callable[..., Path]) -> None:
    vault = make()
    assert spawn(vault, "claude", "--stream-json").returncode == 0
    assert cli(vault, "inject", "claude", "look at the failing test").returncode == 0
    line = wait_for(lambda: next((x for x in logs(vault, "claude") if x.startswith("echo: {")), None))
    assert line, "the message"
    assert json.loads(line.removeprefix("echo: ")) == {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": "look at the failing test"}]},
    }


# --- logs and liveness -------------------------------------------------------------------------------------


def test_logs_rotate_at_the_size_limit(make: Callable[..., Path]) -> None:
    vault = make("[workers]\nlog_max_bytes = 200\nlog_keep = 2\n")
    assert spawn(vault, "chatty").returncode == 0
    assert cli(vault, "inject", "chatty", "spam 60").returncode == 0
    last = ["line 0059 of some output that fills the log"]
    assert wait_for(lambda: logs(vault, "chatty", 1) == last), "spam"
    folder = vault / ".vaultops" / "state" / "workers" / "chatty"
    names = sorted(p.name for p in folder.iterdir() if p.name.startswith("stdout.log"))
    assert names == ["stdout.log", "stdout.log.1", "stdout.log.2"]
    assert all((folder / n).stat().st_size <= 200 for n in names)
    tail = logs(vault, "chatty", 3)
    assert tail == [f"line {i:04d} of some output that fills the log" for i in (57, 58, 59)]


def test_a_silent_worker_is_stale_until_it_speaks(make: Callable[..., Path]) -> None:
    vault = make("[workers]\nstale_after = 1\n")
    assert spawn(vault, "quiet").returncode == 0
    assert wait_for(lambda: listed(vault)["quiet"]["state"] == "stale"), "stale"
    status = vaultops("--vault", str(vault), "status", "--json", cwd=vault)
    assert status.returncode == 0, status.stderr
    assert [(w["name"], w["state"]) for w in json.loads(status.stdout)["workers"]] == [("quiet", "stale")]
    shown = vaultops("--vault", str(vault), "status", cwd=vault).stdout
    assert "quiet" in shown and "stale" in shown
    assert cli(vault, "inject", "quiet", "wake up").returncode == 0  # an inject is not liveness; the echo is
    assert wait_for(lambda: listed(vault)["quiet"]["state"] == "running"), "running again"


def test_a_prompt_is_the_first_line_and_a_profile_gives_the_command(make: Callable[..., Path]) -> None:
    vault = make()
    (vault / ".vaultops" / "local.toml").write_text(
        f'[profiles.session]\ncommand = ["{FAKE_WORKER}", "asked: {{prompt}}"]\nenv = {{ SESSION = "yes" }}\n'
        f'[profiles.plain]\ncommand = ["{FAKE_WORKER}"]\n'
    )
    assert spawn(vault, "first", "--files", "f/*", "--prompt", "fix the tab bar").returncode == 0
    assert wait_for(lambda: in_log(vault, "first", "echo: fix the tab bar")), "the prompt on stdin"
    proc = cli(vault, "spawn", "prof", "--profile", "session", "--prompt", "look", "--files", "p/*")
    assert proc.returncode == 0, proc.stderr
    assert wait_for(lambda: in_log(vault, "prof", "asked: look")), "the prompt in the profile's command"
    assert listed(vault)["prof"]["dir"] == str(vault)  # a profile without workdir runs in the vault
    proc = cli(vault, "spawn", "plain", "--files", "q/*", "--profile", "plain", "--prompt", "hi")
    assert proc.returncode == 0, proc.stderr
    assert wait_for(lambda: in_log(vault, "plain", "echo: hi")), "no {prompt}: the prompt on stdin"


def test_the_library_is_what_the_cli_calls(make: Callable[..., Path]) -> None:
    vault = Vault.open(make())
    worker = control.spawn(vault, "lib", [FAKE_WORKER], dir=vault.root, environ={}, parent="orchestrator")
    assert worker.state == "running" and worker.parent == "orchestrator"
    assert control.inject(vault, "lib", "hi") == "hi"
    assert wait_for(lambda: "echo: hi" in control.worker_logs(vault, "lib")), "echo"
    (row,) = control.list_workers(vault)
    assert row["name"] == "lib" and row["state"] == "running"
    ended, said = control.terminate(vault, "lib", grace=5)
    assert ended.state == "exited" and "TERM" in said


def test_supervisors_are_reaped_safely_from_the_threads_of_one_pass() -> None:
    # A pass starts its jobs' workers from several threads; each spawn reaps the supervisors that ended.
    # Two reaps at once once removed the same process twice (ValueError), failing a job that had started.
    ended = [subprocess.Popen(["true"]) for _ in range(32)]
    for proc in ended:
        proc.wait()
    failures: list[BaseException] = []

    def reap(barrier: threading.Barrier) -> None:
        barrier.wait()
        try:
            control._reap()
        except BaseException as error:  # the assertion below names it
            failures.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible, so that reaps interleave
    try:
        for _ in range(10):
            control._supervisors.extend(ended)
            barrier = threading.Barrier(8)
            threads = [threading.Thread(target=reap, args=(barrier,)) for _ in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert not any(proc in control._supervisors for proc in ended)
    finally:
        sys.setswitchinterval(interval)
    assert failures == []
