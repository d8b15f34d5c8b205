"""The bus between processes: readers in processes at once on one state.db, and the real command
line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.bus import Clock, open_bus
from tests.support.helpers import REPO, make_vault, vaultops

# The tests decide who they are; a VAULTOPS_WORKER in the runner's own environment must not leak in.
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("VAULTOPS_WORKER", "VAULTOPS_PARENT")}


def run_cli(vault: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "vaultops", "--vault", str(vault), "bus", *args],
        capture_output=True,
        text=True,
        env={**CLEAN_ENV, **(env or {})},
        timeout=60,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


# --- concurrency: real processes ---------------------------------------------------------------------

READER = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, sys.argv[2])
    from pathlib import Path
    from vaultops.bus import Bus
    from vaultops.store.state import StateDB

    bus = Bus(StateDB(Path(sys.argv[1])))
    got = []
    print("ready", flush=True)
    sys.stdin.readline()  # start together
    while batch := bus.inbox("w1", limit=1):
        got += [m.id for m in batch]
        time.sleep(0.001)  # a real reader acts on what it read; without a pause one process starves the rest
    print(json.dumps(got), flush=True)
    """
)


def test_processes_draining_one_inbox_never_share_a_message(tmp_path: Path) -> None:
    """Four processes race over one inbox, one message per round: each message goes to exactly one."""
    db = tmp_path / "state.db"
    state, bus = open_bus(db, Clock(1.0))  # sent long ago by the real clock: no redelivery can interfere
    sent = {bus.send("person", "w1", f"m{i}").id for i in range(400)}
    state.close()
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, str(db), str(REPO)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=CLEAN_ENV,
        )
        for _ in range(4)
    ]
    for reader in readers:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "ready"
    for reader in readers:
        assert reader.stdin is not None
        reader.stdin.write("go\n")
        reader.stdin.flush()
    got = [json.loads(reader.communicate(timeout=120)[0]) for reader in readers]
    everything = [i for batch in got for i in batch]
    assert sorted(everything) == sorted(sent)  # none lost, none twice
    assert sum(1 for batch in got if batch) >= 2  # the race was real: more than one reader got some


READ_ARGS = ("--as", "w1", "--json", "--limit", "7")


def test_two_cli_readers_at_once_never_both_get_a_message(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", fake_profiles=False)
    state, bus = open_bus(vault / ".vaultops" / "state" / "state.db", Clock(1.0))
    sent = {bus.send("person", "w1", f"m{i}").id for i in range(30)}
    state.close()
    rounds = []
    for _ in range(3):
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "vaultops", "--vault", str(vault), "bus", "inbox", *READ_ARGS],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=CLEAN_ENV,
            )
            for _ in range(2)
        ]
        outs = [p.communicate(timeout=60) for p in procs]
        assert all(p.returncode == 0 for p in procs), outs
        batches = [[m["id"] for m in json.loads(out)["messages"]] for out, _ in outs]
        assert not set(batches[0]) & set(batches[1])
        rounds += batches
    delivered = [i for batch in rounds for i in batch]
    assert len(delivered) == len(set(delivered)) == 30 and set(delivered) == sent


# --- the command line --------------------------------------------------------------------------------


def test_cli_send_inbox_ack_log_with_json(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", fake_profiles=False)
    proc = run_cli(vault, "send", "w1", "check the build", "--priority", "high", "--json")
    assert proc.returncode == 0, proc.stderr
    sent = json.loads(proc.stdout)["message"]
    assert (sent["sender"], sent["to"], sent["priority"], sent["deliveries"]) == ("person", "w1", "high", 0)

    # a worker knows its own name from its environment
    worker = {"VAULTOPS_WORKER": "w1", "VAULTOPS_PARENT": "person"}
    proc = run_cli(vault, "inbox", "--json", env=worker)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["name"] == "w1" and [m["id"] for m in doc["messages"]] == [sent["id"]]
    assert doc["messages"][0]["text"] == "check the build" and doc["messages"][0]["deliveries"] == 1
    assert json.loads(run_cli(vault, "inbox", "--json", env=worker).stdout)["messages"] == []

    proc = run_cli(vault, "send", "person", "done: build is green", "--json", env=worker)
    reply = json.loads(proc.stdout)["message"]
    assert reply["sender"] == "w1" and reply["to"] == "person"

    proc = run_cli(vault, "inbox", "--ack", str(sent["id"]), "--json", env=worker)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"name": "w1", "acked": [sent["id"]], "already_acked": []}
    proc = run_cli(vault, "inbox", "--ack", str(sent["id"]), "--json", env=worker)
    assert proc.returncode == 0 and json.loads(proc.stdout)["already_acked"] == [sent["id"]]

    proc = run_cli(vault, "log", "--json")
    log = json.loads(proc.stdout)["messages"]
    assert [m["id"] for m in log] == [reply["id"], sent["id"]]
    assert log[1]["acked_at"] is not None and log[1]["deliveries"] == 1
    assert log[0]["acked_at"] is None

    # human output
    proc = run_cli(vault, "inbox", "--as", "person")
    assert "done: build is green" in proc.stdout and "from w1" in proc.stdout
    proc = run_cli(vault, "log")
    assert proc.returncode == 0 and "person -> w1 high" in proc.stdout and "w1 -> person" in proc.stdout


def test_cli_errors_are_one_sentence_and_non_zero(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", fake_profiles=False)
    proc = run_cli(vault, "send", "w1", "x", "--priority", "critical")
    assert proc.returncode != 0 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert "low, normal, high, urgent" in line

    sent = json.loads(run_cli(vault, "send", "w1", "x", "--json").stdout)["message"]
    proc = run_cli(vault, "inbox", "--ack", str(sent["id"]), "--as", "w2")
    assert proc.returncode != 0
    (line,) = proc.stderr.splitlines()
    assert "only its recipient" in line
    proc = run_cli(vault, "inbox", "--ack", "4242", "--as", "w1")
    assert proc.returncode != 0 and "no message #4242" in proc.stderr
    assert json.loads(run_cli(vault, "log", "--json").stdout)["messages"][0]["acked_at"] is None

    proc = vaultops("--vault", str(tmp_path / "missing"), "bus", "log", env=CLEAN_ENV)
    assert proc.returncode != 0 and len(proc.stderr.splitlines()) == 1


def test_cli_send_reads_stdin(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", fake_profiles=False)
    proc = subprocess.run(
        [sys.executable, "-m", "vaultops", "--vault", str(vault), "bus", "send", "w1", "-", "--json"],
        input="line one\nline two\n",
        capture_output=True,
        text=True,
        env=CLEAN_ENV,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["message"]["text"] == "line one\nline two\n"


def test_the_cli_finds_state_db_where_the_rest_of_vaultops_keeps_it(tmp_path: Path) -> None:
    from vaultops.base.layout import STATE_DIR
    from vaultops.commands.bus import STATE_DB

    assert Path(STATE_DIR) / "state.db" == STATE_DB
    vault = make_vault(tmp_path / "v", fake_profiles=False)
    assert run_cli(vault, "send", "w1", "hello").returncode == 0
    state, bus = open_bus(vault / STATE_DIR / "state.db")
    assert [m.text for m in bus.log()] == ["hello"]
    state.close()


def test_a_folder_that_is_not_a_vault_gets_no_state_db(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "send", "w1", "hello")
    assert proc.returncode != 0 and len(proc.stderr.splitlines()) == 1 and "vaultops init" in proc.stderr
    assert not (tmp_path / ".vaultops").exists()
