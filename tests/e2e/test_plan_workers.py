"""Plan notes run by long-lived workers (``worker:`` in the frontmatter), with real worker processes.

The worker is ``fixtures/bin/fake-worker``: it echoes its stdin, and ``say TEXT`` makes it print TEXT, so a
test speaks for it with ``vaultops worker inject NAME "say [DONE:…] …"``.  Passes run in-process (``tick``)
or in the real daemon.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from tests.support.claude_cli import requires_claude
from tests.support.helpers import git, with_plans
from tests.support.waiting import wait_for
from tests.support.worker_helpers import FAKE_WORKER, cli, in_log, listed, reported
from vaultops.engine.tick import tick
from vaultops.model import State
from vaultops.store.notes import NoteWriter
from vaultops.store.state import StateDB
from vaultops.vault import Vault

QUEUE = "executor-queue"
PROFILE = (
    f'[profiles.worker-research]\ncommand = ["{FAKE_WORKER}"]\noutput = "text"\ntimeout = 600\nhealth = []\n'
)


def worker_vault(make: Callable[..., Path], plans: dict[str, str], extra: str = "") -> Path:
    vault = make()
    (vault / ".vaultops" / "local.toml").write_text(PROFILE + extra)
    return with_plans(vault, plans)


def plan(front: str, body: str = "Summarise the open threads in this vault.") -> str:
    return f"---\ntype: research\n{front}---\n{body}\n"


def run_tick(vault: Path) -> None:
    tick(Vault.open(vault), wait_settle=False)


def say(vault: Path, name: str, line: str) -> None:
    proc = cli(vault, "inject", name, f"say {line}")
    assert proc.returncode == 0, proc.stderr
    tag = line.split("]")[0] + "]"
    assert wait_for(lambda: reported(vault, name, tag)), f"{name} reporting {tag}"


def last_status(path: Path) -> str:
    return [line for line in path.read_text().splitlines() if line.startswith("- status: ")][-1]


def reason(path: Path) -> str:
    """The reason on the note's last status line (after the state and its time)."""
    return last_status(path).split(" — ", 1)[1]


def plan_state(vault: Path, rel: str) -> State:
    v = Vault.open(vault)
    note = NoteWriter(v).read(rel)
    assert note is not None
    (request,) = note.requests
    return request.state


def test_done_completes_the_plan_note_and_stops_the_worker(make: Callable[..., Path]) -> None:
    vault = worker_vault(make, {"tabs.md": plan("worker: coder\nfiles: [src/tabs/**]\n")})
    path = vault / QUEUE / "tabs.md"
    run_tick(vault)
    status = last_status(path)
    assert status.startswith("- status: running") and "worker coder (pid " in status, status
    row = listed(vault)["coder"]
    assert row["state"] == "running" and row["parent"] == Vault.open(vault).agent
    assert row["plan"] == f"{QUEUE}/tabs.md" and row["files"] == ["src/tabs/**"]
    # the worker writes its log on its own time: wait for it, as the other tests here do
    assert wait_for(lambda: in_log(vault, "coder", "echo: Summarise the open threads in this vault.")), (
        "the prompt is its input"
    )

    run_tick(vault)  # a pass while it works (a tick recovers first): the claim is not interrupted
    assert plan_state(vault, f"{QUEUE}/tabs.md") is State.RUNNING
    assert path.read_text().count("- locked-by:") == 1

    say(vault, "coder", "[STATUS:investigation] reading the notes")
    say(vault, "coder", "[DONE:summary_ready] three open threads, none urgent")
    run_tick(vault)
    text = path.read_text()
    assert "### Result" in text and "· worker coder ·" in text
    assert "[STATUS:investigation] reading the notes" in text
    assert "[DONE:summary_ready] three open threads, none urgent" in text
    assert last_status(path).startswith("- status: done")
    assert text.startswith(plan("worker: coder\nfiles: [src/tabs/**]\n").rstrip("\n")), "the person's part"
    assert wait_for(lambda: listed(vault)["coder"]["state"] == "exited")
    assert "PLAN-tabs" in git(vault, "log", "--format=%s")

    run_tick(vault)
    assert path.read_text() == text, "a done note stays done"


def test_an_escalation_waits_for_the_person_whose_answer_reaches_the_worker(
    make: Callable[..., Path],
) -> None:
    # a channel, so that the notice is queued: a vault nobody can be told from keeps no backlog to send
    # the day a channel is set up (issue 29: turning Telegram on sent escalations decided long before)
    channel = '[notify]\nurls = ["json://127.0.0.1:9/"]\n'
    vault = worker_vault(make, {"tabs.md": plan("worker: coder\n")}, channel)
    path = vault / QUEUE / "tabs.md"
    run_tick(vault)
    say(vault, "coder", "[ESCALATE:scope_expansion] Found an unrelated issue in TabBar.swift")
    run_tick(vault)
    status = last_status(path)
    assert status.startswith("- status: escalated")
    assert "[ESCALATE:scope_expansion] Found an unrelated issue in TabBar.swift" in status
    state = StateDB(vault / ".vaultops" / "state" / "state.db")
    try:
        keys = [row[0] for row in state.db.execute("SELECT key FROM outbox")]
    finally:
        state.close()
    assert any("PLAN-tabs" in key for key in keys), keys
    assert listed(vault)["coder"]["state"] == "running", "the worker waits for the answer"

    run_tick(vault)
    assert last_status(path) == status, "said once"

    with path.open("a") as fh:
        fh.write("- decision: approve — fix that too\n")
    run_tick(vault)
    assert last_status(path).startswith("- status: running")
    assert reason(path).startswith("the person answered approve to scope_expansion")
    assert wait_for(
        lambda: in_log(
            vault, "coder", "echo: [ANSWER:scope_expansion] approve — the person answered: fix that too"
        )
    )
    say(vault, "coder", "[DONE:fixed] both fixed")
    run_tick(vault)
    assert last_status(path).startswith("- status: done")


def test_a_denied_escalation_is_written_to_the_worker_too(make: Callable[..., Path]) -> None:
    vault = worker_vault(make, {"tabs.md": plan("worker: coder\n")})
    path = vault / QUEUE / "tabs.md"
    run_tick(vault)
    say(vault, "coder", "[REQUEST:merge_pr] pr=12")  # the policy escalates every merge
    run_tick(vault)
    assert last_status(path).startswith("- status: escalated") and "[REQUEST:merge_pr]" in last_status(path)
    with path.open("a") as fh:
        fh.write("- decision: deny\n")
    run_tick(vault)
    assert wait_for(lambda: in_log(vault, "coder", "echo: [ANSWER:merge_pr] deny — the person answered"))
    assert plan_state(vault, f"{QUEUE}/tabs.md") is State.RUNNING


def test_a_worker_that_ends_without_done_is_an_error_and_retry_starts_a_new_one(
    make: Callable[..., Path],
) -> None:
    vault = worker_vault(make, {"tabs.md": plan("worker: yes\n")})
    path = vault / QUEUE / "tabs.md"
    run_tick(vault)
    assert listed(vault)["tabs"]["state"] == "running", "worker: yes names it after the note"
    first_pid = listed(vault)["tabs"]["pid"]
    assert cli(vault, "inject", "tabs", "exit 3").returncode == 0
    assert wait_for(lambda: listed(vault)["tabs"]["state"] == "failed"), "tabs shown failed"
    run_tick(vault)
    status = last_status(path)
    assert (
        status.startswith("- status: error")
        and "worker tabs ended (exit code 3) without a [DONE:…] line" in status
    )

    with path.open("a") as fh:
        fh.write("- retry: yes\n")
    run_tick(vault)
    row = listed(vault)["tabs"]
    assert row["state"] == "running" and row["pid"] != first_pid
    say(vault, "tabs", "[DONE:ok] second time lucky")
    run_tick(vault)
    assert last_status(path).startswith("- status: done")
    assert path.read_text().count("[DONE:ok]") == 1


def test_cancel_stops_the_worker(make: Callable[..., Path]) -> None:
    vault = worker_vault(make, {"tabs.md": plan("worker: coder\n")})
    path = vault / QUEUE / "tabs.md"
    run_tick(vault)
    with path.open("a") as fh:
        fh.write("- cancel: yes\n")
    run_tick(vault)
    assert last_status(path).startswith("- status: cancelled")
    assert reason(path) == "cancelled by the person; worker coder was stopped"
    assert listed(vault)["coder"]["state"] == "exited"


def test_a_worker_past_its_time_is_stopped_and_the_note_says_so(make: Callable[..., Path]) -> None:
    plans = {
        "tabs.md": plan("worker: coder\ntimeout: 1\nfiles: [src/**]\n"),
        "long.md": plan("worker: long\ntimeout: 4h\nfiles: [docs/**]\n"),  # longer than a profile allows
        "longer.md": plan("worker: longer\ntimeout: 5h\nfiles: [assets/**]\n"),
    }
    vault = worker_vault(make, plans)
    path = vault / QUEUE / "tabs.md"
    run_tick(vault)
    assert "[workers] timeout allows (14400 s)" in last_status(vault / QUEUE / "longer.md")
    assert listed(vault)["long"]["state"] == "running"
    time.sleep(1.5)
    run_tick(vault)
    status = last_status(path)
    assert (
        status.startswith("- status: error")
        and "gave no [DONE:…] within its time (1 s) and was stopped" in status
    )
    assert listed(vault)["coder"]["state"] == "exited"
    assert listed(vault)["long"]["state"] == "running"


def test_worker_plans_wait_for_overlapping_files_and_free_places(make: Callable[..., Path]) -> None:
    plans = {
        "a.md": plan("worker: wa\nfiles: [src/tabs/**]\n"),
        "b.md": plan("worker: wb\nfiles: [src/tabs/x.ts]\n"),
        "c.md": plan("worker: wc\nfiles: [docs/**]\n"),
        "d.md": plan("worker: wd\nfiles: [assets/**]\n"),
    }
    vault = worker_vault(make, plans, "[workers]\nmax = 2\n")
    run_tick(vault)
    assert sorted(listed(vault)) == ["wa", "wc"], "b overlaps a; d finds no free place"
    for rel in ("b.md", "d.md"):
        assert plan_state(vault, f"{QUEUE}/{rel}") is State.OPEN, "it waits, unclaimed"
    say(vault, "wa", "[DONE:ok] done")
    run_tick(vault)
    assert "wb" in listed(vault) and "wd" not in listed(vault)


def test_worker_plans_without_files_take_every_file_and_run_one_at_a_time(make: Callable[..., Path]) -> None:
    vault = worker_vault(make, {"a.md": plan("worker: wa\n"), "b.md": plan("worker: wb\n")})
    run_tick(vault)
    assert sorted(listed(vault)) == ["wa"]
    assert plan_state(vault, f"{QUEUE}/b.md") is State.OPEN, "it waits, with no error"
    say(vault, "wa", "[DONE:ok] done")
    run_tick(vault)
    assert sorted(listed(vault)) == ["wa", "wb"]


def test_a_plan_cannot_be_both_tasks_and_a_worker(make: Callable[..., Path]) -> None:
    vault = worker_vault(
        make, {"both.md": plan("worker: coder\ntasks: [a, b]\n"), "bad.md": plan("worker: a b\n")}
    )
    run_tick(vault)
    assert "runs either as `tasks:` or as one `worker:`" in last_status(vault / QUEUE / "both.md")
    assert "not a usable worker name" in last_status(vault / QUEUE / "bad.md")
    assert listed(vault) == {}


def test_the_daemon_starts_the_worker_and_writes_its_done_at_once(make: Callable[..., Path]) -> None:
    """The daemon is woken by the worker's news, not by a file event; a restart while the worker runs
    leaves the worker and the claim alone."""
    from tests.support.daemon_helpers import Daemon

    vault = worker_vault(make, {}, "[inbox]\nsettle = 0\n[daemon]\nreconcile = 600\ngrace = 10\n")
    path = vault / QUEUE / "tabs.md"
    daemon = Daemon(vault, {"VAULTOPS_WORKER": ""})
    try:
        daemon.wait_ready()
        path.write_text(plan("worker: coder\n"))
        assert wait_for(lambda: "worker coder (pid" in path.read_text()), daemon.errors()
        assert daemon.stop() == 0
        daemon = Daemon(vault, {"VAULTOPS_WORKER": ""})
        daemon.wait_ready()
        assert listed(vault)["coder"]["state"] == "running", "the worker outlives the daemon"
        assert "interrupted" not in path.read_text()
        proc = cli(vault, "inject", "coder", "say [DONE:ok] all good")
        assert proc.returncode == 0
        started = time.monotonic()
        assert wait_for(lambda: "- status: done" in path.read_text(), timeout=10), daemon.errors()
        took = time.monotonic() - started
    finally:
        assert daemon.stop() == 0
    assert took < 5, f"the daemon took {took:.1f} s to write the worker's DONE"
    assert path.read_text().count("- locked-by:") == 1


def test_a_telegram_reply_answers_a_workers_question(make: Callable[..., Path]) -> None:
    from tests.support.fake_servers import FakeBotAPI, JsonSink

    token = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
    with JsonSink() as sink, FakeBotAPI(token) as api:
        chat = (
            f'[notify]\nurls = ["{sink.url()}"]\n\n[notify.telegram]\ntoken = "{token}"\n'
            f'chat_ids = [4242]\napi_base = "{api.base}"\npoll_timeout = 0\n'
        )
        vault = worker_vault(make, {"tabs.md": plan("worker: coder\n")}, chat)
        path = vault / QUEUE / "tabs.md"
        run_tick(vault)
        say(vault, "coder", "[ESCALATE:scope_expansion] TabBar.swift is broken too")
        run_tick(vault)
        [message] = sink.messages()
        assert "PLAN-tabs" in message and "the answer goes to the worker" in message
        api.say(4242, "Approve PLAN-tabs: yes, fix it", first_name="Ann", date=int(time.time()) + 1)
        run_tick(vault)
        assert "- decision: approve — via Telegram (Ann): yes, fix it" in path.read_text()
        assert last_status(path).startswith("- status: running")
        assert wait_for(lambda: in_log(vault, "coder", "echo: [ANSWER:scope_expansion] approve — the person"))


@requires_claude
def test_a_plan_worker_running_the_real_claude_cli_completes_the_note(
    make: Callable[..., Path], tmp_path: Path
) -> None:
    """Claude Code with ``-p {prompt} --output-format json`` prints one result at the end; its tags are
    read from the result's text (with stdin a pipe that never ends, it must not wait for more input)."""
    from tests.support.claude_cli import profile
    from tests.support.fake_anthropic import FakeAnthropic, Text

    with FakeAnthropic() as api:
        api.script(Text("[STATUS:reading] the vault\n[DONE:summary_ready] three open threads"))
        vault = worker_vault(make, {"sum.md": plan("worker: summariser\n")})
        local = vault / ".vaultops" / "local.toml"
        local.write_text(profile("worker-research", api.start(), tmp_path / "cc"))
        path = vault / QUEUE / "sum.md"
        run_tick(vault)
        assert "worker summariser (pid" in last_status(path)
        summariser_ended = lambda: listed(vault)["summariser"]["state"] in ("exited", "failed")  # noqa: E731
        assert wait_for(summariser_ended, timeout=90), "the summariser ended"
        run_tick(vault)
    text = path.read_text()
    assert last_status(path).startswith("- status: done"), text
    assert "[DONE:summary_ready] three open threads" in text and "[STATUS:reading] the vault" in text


@requires_claude
def test_a_plan_worker_in_a_real_claude_code_session_is_answered_and_completes(
    make: Callable[..., Path], tmp_path: Path
) -> None:
    """The template's ``worker_command``: one Claude Code session that stays alive; the prompt, the
    policy's answer and the person's answer reach it as stream-json user messages, each starting a turn."""
    import json

    from tests.support.claude_cli import claude_bin, profile
    from tests.support.fake_anthropic import FakeAnthropic, Text

    session = [
        claude_bin(), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
        "--allowedTools", "{tools}",
    ]  # fmt: skip
    with FakeAnthropic() as api:
        api.script(
            Text("[STATUS:reading] the notes\n[ESCALATE:scope_expansion] TabBar.swift is broken too"),
            Text("[STATUS:waiting] for the person"),  # the policy's answer to the escalation
            Text("[DONE:fixed] both fixed"),  # the person's answer
        )
        vault = worker_vault(make, {"tabs.md": plan("worker: tabs\n")})
        config = profile("worker-research", api.start(), tmp_path / "cc")
        config = config.replace("output = ", f"worker_command = {json.dumps(session)}\noutput = ", 1)
        (vault / ".vaultops" / "local.toml").write_text(config)
        path = vault / QUEUE / "tabs.md"
        run_tick(vault)
        assert wait_for(lambda: reported(vault, "tabs", "[STATUS:waiting]"), timeout=60), "two turns"
        run_tick(vault)
        assert last_status(path).startswith("- status: escalated"), path.read_text()
        assert listed(vault)["tabs"]["state"] == "running", "the session waits for the person"
        with path.open("a") as fh:
            fh.write("- decision: approve — fix TabBar too\n")
        run_tick(vault)
        assert wait_for(lambda: reported(vault, "tabs", "[DONE:fixed]"), timeout=60), "the third turn"
        run_tick(vault)
        asked = [json.dumps(r, ensure_ascii=False) for r in api.requests]
    text = path.read_text()
    assert last_status(path).startswith("- status: done") and "[DONE:fixed] both fixed" in text
    assert "Summarise the open threads" in asked[0], "the note was the first message"
    assert any("[ANSWER:scope_expansion] approve — the person answered: fix TabBar too" in r for r in asked)
    assert wait_for(lambda: listed(vault)["tabs"]["state"] == "exited")
    shown = cli(vault, "logs", "tabs", "--lines", "100").stdout.splitlines()
    assert "[DONE:fixed] both fixed" in shown and "[STATUS:waiting] for the person" in shown
    assert any(line.startswith("[session] ") for line in shown), "stream-json shown as text"
    assert any(line.startswith('{"type"') for line in cli(vault, "logs", "tabs", "--raw").stdout.splitlines())


def test_a_worker_whose_plan_another_machine_took_over_is_stopped(make: Callable[..., Path]) -> None:
    vault = worker_vault(make, {"tabs.md": plan("worker: coder\n")})
    path = vault / QUEUE / "tabs.md"
    run_tick(vault)
    assert listed(vault)["coder"]["state"] == "running"
    with path.open("a") as fh:  # what a takeover after the lease writes, pulled from the remote
        fh.write(
            "- locked-by: hermes-vps2 @ 2026-05-04T09:10:00+10:00 (vps2, claim 41be07, lease 600 s)\n"
            "- status: interrupted @ 2026-05-04T09:10:00+10:00 — taken over: claim ? gave no result\n"
        )
    # committed by the other machine's vaultops: lines typed by anyone else would change nothing
    git(vault, "add", str(path.relative_to(vault)))
    git(vault, "commit", "-qm", "took over", "--author", "vaultops (hermes-vps2) <vaultops@vps2>")
    report = tick(Vault.open(vault), wait_settle=False)
    assert any("worker coder was stopped: its claim" in w and "41be07" in w for w in report.warnings), (
        report.warnings
    )
    assert listed(vault)["coder"]["state"] == "exited"
    assert last_status(path).startswith("- status: interrupted"), "the takeover's word stands"


def test_a_worker_on_a_repo_works_in_the_plans_own_worktree(
    make: Callable[..., Path], tmp_path: Path
) -> None:
    code = tmp_path / "code"
    repo = code / "app"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("print('hi')\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-qm", "start")
    roots = f'\n[limits]\nallowed_roots = ["{code}"]\n'
    vault = worker_vault(make, {"tabs.md": plan(f"worker: coder\nrepo: {repo}\nfiles: [src/**]\n")}, roots)
    run_tick(vault)
    tree = code / ".vaultops-worktrees" / "app" / "PLAN-tabs"
    assert listed(vault)["coder"]["dir"] == str(tree)
    assert git(tree, "symbolic-ref", "--short", "HEAD").strip() == "vaultops/PLAN-tabs"
    assert f"- worktree: {tree} · branch vaultops/PLAN-tabs" in (vault / QUEUE / "tabs.md").read_text()
    assert git(repo, "symbolic-ref", "--short", "HEAD").strip() == "main"


def test_a_wall_clock_jump_neither_stops_a_worker_early_nor_lets_it_outlive_its_time(
    make: Callable[..., Path],
) -> None:
    """Its time was judged on the wall clock: a jump forward (NTP after a suspend, a person setting the
    time) stopped a worker at once as past its time."""
    vault = worker_vault(make, {"tabs.md": plan("worker: coder\ntimeout: 1h\nfiles: [src/**]\n")})
    run_tick(vault)
    assert listed(vault)["coder"]["state"] == "running"
    ahead = datetime.now().astimezone() + timedelta(days=1)
    tick(Vault.open(vault), clock=lambda: ahead, wait_settle=False)
    assert listed(vault)["coder"]["state"] == "running", last_status(vault / QUEUE / "tabs.md")
    assert "within its time" not in (vault / QUEUE / "tabs.md").read_text()
    assert cli(vault, "terminate", "coder").returncode == 0
