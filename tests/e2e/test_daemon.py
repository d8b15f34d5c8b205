"""The daemon with real processes and real file events."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.daemon_helpers import (
    Daemon,
    block,
    daemon_vault,
    requests,
    save_by_rename,
    save_in_place,
)
from tests.support.helpers import git, inbox_path, vaultops
from tests.support.waiting import wait_for


def done_states(vault: Path) -> dict[str, str]:
    return {rid: r.state.value for rid, r in requests(vault).items()}


def test_saves_in_place_and_by_rename_are_each_claimed_once(tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    vault = daemon_vault(tmp_path / "v")
    daemon = Daemon(vault, {"FAKE_AGENT_LOG": str(log)})
    try:
        daemon.wait_ready()
        path = inbox_path(vault)
        for i in range(3):
            save_in_place(path, path.read_text() + block(f"REQ-place-{i}", f"Summarise part {i}."))
            save_by_rename(path, path.read_text() + block(f"REQ-rename-{i}", f"Summarise chapter {i}."))
            time.sleep(0.05)
        ids = [f"REQ-place-{i}" for i in range(3)] + [f"REQ-rename-{i}" for i in range(3)]
        assert wait_for(lambda: all(done_states(vault).get(i) == "done" for i in ids)), daemon.explain()
    finally:
        assert daemon.stop() == 0, daemon.errors()
    assert sorted(log.read_text().splitlines()) == sorted(ids)
    assert "vaultops:" in git(vault, "log", "-1", "--format=%s")


def test_a_request_being_typed_waits_for_the_settle_time(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    vault = daemon_vault(tmp_path / "v", settle=1.0)
    daemon = Daemon(vault, {"FAKE_AGENT_PROMPTS": str(prompts)})
    try:
        daemon.wait_ready()
        path = inbox_path(vault)
        base = path.read_text() + "\n## REQ-typed\n- type: research\nSummarise"
        for word in (
            " the",
            " notes",
            " of",
            " this",
            " week.",
        ):  # saves 0.4 s apart, like Obsidian's autosave
            base += word
            save_in_place(path, base + "\n")
            time.sleep(0.4)
            assert requests(vault)["REQ-typed"].state.value == "open", "claimed while still being typed"
        assert wait_for(lambda: done_states(vault).get("REQ-typed") == "done", timeout=10)
    finally:
        daemon.stop()
    [prompt] = [p.read_text() for p in prompts.iterdir()]
    assert prompt.startswith("Summarise the notes of this week.")


WRITER = r"""
import json, os, random, sys, time
path, out, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
rng = random.Random(7)
written = []          # every line this writer put in the note
ready = []            # the ready requests it added
end = time.monotonic() + seconds
n = 0
def save(text):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
while time.monotonic() < end:
    time.sleep(rng.uniform(0.01, 0.05))
    # read, change, and write only if nobody wrote in between: an editor that reloads external changes
    for _ in range(20):
        before = open(path, encoding="utf-8").read()
        lines = before.split("\n")
        kind = rng.random()
        added = None
        if kind < 0.3:
            n += 1
            added = f"REQ-w{n:03d}"
            new = [f"## {added}", "- type: research", "- ready: yes", f"Summarise note {n}."]
            lines += ["", *new]
        elif kind < 0.7:
            new = [f"Notes typed while the daemon works, line {n}-{rng.randrange(10**6)}."]
            at = 2 if len(lines) > 2 else len(lines)
            lines[at:at] = new
        else:
            new = [f"A drafting line {n}-{rng.randrange(10**6)} under the heading."]
            heads = [i for i, l in enumerate(lines) if l.startswith("## REQ-w")]
            at = (heads[-1] + 4) if heads else len(lines)
            lines[at:at] = new
        text = "\n".join(lines)
        if open(path, encoding="utf-8").read() == before:
            save(text)
            written += new
            if added:
                ready.append(added)
            break
json.dump({"written": written, "ready": ready}, open(out, "w"))
"""


@pytest.mark.slow
def test_a_person_editing_all_the_time_loses_nothing_and_nothing_runs_twice(tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    vault = daemon_vault(tmp_path / "v", "# Inbox\n\nIntro text.\n")
    daemon = Daemon(vault, {"FAKE_AGENT_LOG": str(log)})
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    out = tmp_path / "writer.json"
    try:
        daemon.wait_ready()
        subprocess.run(
            ["python3", str(script), str(inbox_path(vault)), str(out), "30"], check=True, timeout=90
        )
        record = json.loads(out.read_text())
        # a bound on catching up, not a speed claim: a loaded machine (tests run side by side) is slower
        caught_up = wait_for(lambda: all(done_states(vault).get(r) == "done" for r in record["ready"]), 300)
        assert caught_up, "every ready request ran"
    finally:
        assert daemon.stop() == 0, daemon.errors()
    final = inbox_path(vault).read_text().split("\n")
    missing = [line for line in record["written"] if line not in final]
    assert missing == [], f"{len(missing)} lines the person wrote are gone, e.g. {missing[:3]}"
    runs = log.read_text().splitlines()
    assert sorted(runs) == sorted(record["ready"]), "every ready request ran exactly once"
    assert len(record["ready"]) > 50


@pytest.mark.slow
def test_kill_nine_mid_job_fifty_times(tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    vault = daemon_vault(tmp_path / "v")
    env = {"FAKE_AGENT_LOG": str(log), "FAKE_AGENT_SLEEP": "0.3"}
    path = inbox_path(vault)
    added = []
    for i in range(50):
        rid = f"REQ-k{i:02d}"
        save_in_place(path, path.read_text() + block(rid, f"Summarise part {i}."))
        added.append(rid)
        daemon = Daemon(vault, env)
        daemon.wait_ready()
        time.sleep(0.05 + (i % 7) * 0.06)  # somewhere in the claim, the job, the record or the commit
        daemon.kill()
    daemon = Daemon(vault, env)
    daemon.wait_ready()
    final = {"done", "interrupted", "error"}
    assert wait_for(lambda: all(done_states(vault).get(r) in final for r in added), timeout=30), done_states(
        vault
    )
    assert daemon.stop() == 0, daemon.errors()
    runs = log.read_text().splitlines()
    assert len(runs) == len(set(runs)), "a request ran twice"
    states = done_states(vault)
    assert all(states[r] in final for r in added)
    assert any(states[r] == "interrupted" for r in added), "some kills landed mid-job"
    fsck = subprocess.run(["git", "fsck", "--no-progress"], cwd=vault, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    assert not list(path.parent.glob("*.vaultops.tmp"))


def test_interrupted_light_checks_run_again_and_heavy_work_waits_for_retry(tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    text = block("REQ-heavy", "Summarise slowly.") + block("REQ-light", "Is git installed?", "env-check")
    vault = daemon_vault(tmp_path / "v", "# Inbox\n" + text)
    # a claim of this machine with no end, as a killed daemon leaves them
    host = vault_host(vault)
    lines = (
        inbox_path(vault)
        .read_text()
        .replace(
            "Summarise slowly.\n",
            f"Summarise slowly.\n- locked-by: hermes-coo @ 2026-01-01T00:00:00+00:00 ({host}, claim aaaaaa)\n"
            "- status: running @ 2026-01-01T00:00:00+00:00\n",
        )
        .replace(
            "Is git installed?\n",
            f"Is git installed?\n- locked-by: hermes-coo @ 2026-01-01T00:00:00+00:00 ({host}, claim bbbbbb)\n"
            "- status: running @ 2026-01-01T00:00:00+00:00\n",
        )
    )
    inbox_path(vault).write_text(lines)
    daemon = Daemon(vault, {"FAKE_AGENT_LOG": str(log)})
    try:
        daemon.wait_ready()
        assert wait_for(lambda: done_states(vault).get("REQ-light") == "done")
        assert done_states(vault)["REQ-heavy"] == "interrupted"
        assert not log.exists()
        text = inbox_path(vault).read_text()
        at = text.index("\n", text.index("claim aaaaaa) stopped")) + 1  # under the heavy request's status
        save_in_place(inbox_path(vault), text[:at] + "- retry: yes\n" + text[at:])
        assert wait_for(lambda: done_states(vault).get("REQ-heavy") == "done")
    finally:
        daemon.stop()
    assert log.read_text().splitlines() == ["REQ-heavy"]


def vault_host(vault: Path) -> str:
    from vaultops.vault import Vault

    return Vault.open(vault).host


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_stop_signal_lets_a_running_job_finish(tmp_path: Path, stop_signal: signal.Signals) -> None:
    vault = daemon_vault(tmp_path / "v")
    daemon = Daemon(vault, {"FAKE_AGENT_SLEEP": "1.5"})
    daemon.wait_ready()
    save_in_place(inbox_path(vault), inbox_path(vault).read_text() + block("REQ-slow", "Summarise."))
    assert wait_for(lambda: done_states(vault).get("REQ-slow") == "running")
    assert daemon.stop(stop_signal) == 0
    assert done_states(vault)["REQ-slow"] == "done"
    assert git(vault, "status", "--porcelain", "--", "_System/COO-Inbox.md") == "", "committed"


def test_past_the_grace_period_jobs_are_stopped_and_marked_interrupted(tmp_path: Path) -> None:
    vault = daemon_vault(tmp_path / "v", extra="")
    local = vault / ".vaultops" / "local.toml"
    local.write_text(local.read_text().replace("grace = 10", "grace = 0.5"))
    daemon = Daemon(vault, {"FAKE_AGENT_SLEEP": "60"})
    daemon.wait_ready()
    save_in_place(inbox_path(vault), inbox_path(vault).read_text() + block("REQ-long", "Summarise."))
    assert wait_for(lambda: done_states(vault).get("REQ-long") == "running")
    start = time.monotonic()
    assert daemon.stop() == 0
    assert time.monotonic() - start < 10
    r = requests(vault)["REQ-long"]
    assert r.state.value == "interrupted"
    assert "shut down" in r.statuses[-1].reason


def test_a_second_signal_stops_at_once_and_leaves_the_note_whole(tmp_path: Path) -> None:
    vault = daemon_vault(tmp_path / "v")
    daemon = Daemon(vault, {"FAKE_AGENT_SLEEP": "60"})
    daemon.wait_ready()
    save_in_place(inbox_path(vault), inbox_path(vault).read_text() + block("REQ-long", "Summarise."))
    assert wait_for(lambda: done_states(vault).get("REQ-long") == "running")
    daemon.proc.send_signal(signal.SIGTERM)
    # the first signal taken: the daemon says it is stopping (a fixed 0.3 s guessed how long that takes)
    assert wait_for(lambda: '"event": "stopping"' in daemon.log.read_text()), daemon.errors()
    start = time.monotonic()
    assert daemon.stop(signal.SIGINT) == 0
    assert time.monotonic() - start < 8
    assert requests(vault)["REQ-long"].state.value == "interrupted"


def test_one_daemon_per_vault(tmp_path: Path) -> None:
    vault = daemon_vault(tmp_path / "v")
    first = Daemon(vault)
    try:
        first.wait_ready()
        second = vaultops("--vault", str(vault), "run", env={"VAULTOPS_LIMITS_LOCK_WAIT": "0.5"}, timeout=30)
        assert second.returncode == 75
        assert f"pid {first.proc.pid}" in second.stderr and "vaultops run" in second.stderr
        assert "the vaultops daemon holds this vault" in second.stderr and "stop it first" in second.stderr
        tick = vaultops("--vault", str(vault), "tick", "--no-wait", env={"VAULTOPS_LIMITS_LOCK_WAIT": "0.5"})
        assert tick.returncode == 75 and "the vaultops daemon holds this vault" in tick.stderr
    finally:
        first.stop()


def _notify_socket(tmp_path: Path) -> tuple[socket.socket, str]:
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(0.2)
    return sock, path


def _messages(sock: socket.socket, seconds: float) -> list[tuple[float, str]]:
    out = []
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        try:
            out.append((time.monotonic() - start, sock.recv(4096).decode()))
        except TimeoutError:
            continue
    return out


def test_ready_and_watchdog_pings_reach_the_notify_socket_and_stop_when_the_loop_freezes(
    tmp_path: Path,
) -> None:
    vault = daemon_vault(tmp_path / "v")
    sock, path = _notify_socket(tmp_path)
    env = {
        "NOTIFY_SOCKET": path,
        "WATCHDOG_USEC": "400000",  # a ping every 0.2 s
        "VAULTOPS_FAULT": "daemon.loop:hang@10",  # the loop stops on its 10th round; the process lives on
    }
    daemon = Daemon(vault, env)
    try:
        got = _messages(sock, 8.0)
        assert daemon.proc.poll() is None, "frozen, not dead: systemd's watchdog is what restarts it"
    finally:
        daemon.kill()
        sock.close()
    ready = [t for t, m in got if m.startswith("READY=1")]
    pings = [t for t, m in got if "WATCHDOG=1" in m]
    assert ready, got
    assert len(pings) >= 5, got
    assert all(p >= ready[0] for p in pings), "no ping before READY"
    assert 8.0 - pings[-1] > 2.0, f"pings went on after the loop froze: {pings}"
    assert "NOTIFY_SOCKET" not in os.environ
