"""Model triage through processes: the cache table shared by processes at once, and the whole
path through `vaultops tick` on a real vault with a bare remote, the triage profile being a small script
that prints a scripted answer."""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.clones import Fleet
from tests.support.helpers import vaultops
from tests.support.triage import answer
from vaultops.store.state import StateDB

# --- state.db -----------------------------------------------------------------------------------------------


def test_an_old_state_db_gains_the_triage_table_when_processes_open_it_at_once(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, file TEXT NOT NULL, request_id TEXT NOT NULL,"
                " claim TEXT NOT NULL, attempt INTEGER NOT NULL, handler TEXT NOT NULL, host TEXT NOT NULL,"
                " pid INTEGER, started REAL NOT NULL, ended REAL, exit_code INTEGER, duration REAL,"
                " outcome TEXT, cost_usd REAL, log TEXT)")  # fmt: skip
    old.commit()
    old.close()
    code = f"from vaultops.store.state import StateDB; StateDB(__import__('pathlib').Path({str(path)!r}))"
    import subprocess

    procs = [subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE) for _ in range(4)]
    assert all(p.wait(timeout=60) == 0 for p in procs), [p.stderr.read() for p in procs if p.stderr]
    state = StateDB(path)
    state.set_triage("k", "triage", None, None, None, "timed out", 0.25, 1.0)
    assert state.triage("k") is not None and state.cost_since(0) == 0.25


# --- through `vaultops tick`, the triage profile being a script -----------------------------------------

FAKE_TRIAGE = """\
import json, os, sys, threading
with open(os.environ["FAKE_TRIAGE_LOG"], "a") as fh:
    fh.write(json.dumps(sys.argv[1]) + "\\n")
said = open(os.environ["FAKE_TRIAGE_ANSWER"]).read()
if said == "HANG":
    threading.Event().wait()
print(said)
"""


class Triaged:
    """A fleet of one machine whose triage profile is ``fake-triage``, answering what ``say`` is given."""

    def __init__(self, root: Path, inbox: str, timeout: float = 20, profile_timeout: float = 30) -> None:
        script = root / "fake-triage.py"
        root.mkdir(parents=True, exist_ok=True)
        script.write_text(FAKE_TRIAGE)
        self.answer = root / "answer.txt"
        self.log = root / "triage-calls.log"
        self.log.touch()
        extra = (
            f"[profiles.triage]\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(script))}, "
            '"{prompt}"]\noutput = "text"\n'
            f"timeout = {profile_timeout:g}\nhealth = []\n"
            f"env = {{ FAKE_TRIAGE_LOG = {json.dumps(str(self.log))}, "
            f"FAKE_TRIAGE_ANSWER = {json.dumps(str(self.answer))} }}\n\n"
            f'[classify]\ntriage = "triage"\ntriage_timeout = {timeout:g}\n\n'
            # a channel, so that notices are queued (nobody to tell: none are kept for later)
            '[notify]\nurls = ["json://127.0.0.1:9/"]\n'
        )
        self.fleet = Fleet(root, 1, inbox, extra=extra)

    def say(self, doc: dict[str, Any] | str) -> None:
        self.answer.write_text(doc if isinstance(doc, str) else json.dumps(doc))

    def tick(self) -> tuple[str, dict[str, tuple[str, str]]]:
        proc = self.fleet.tick(0)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        requests = self.fleet.remote_requests()
        return proc.stdout, {rid: (r.state.value, r.statuses[-1].reason if r.statuses else "")
                             for rid, r in requests.items()}  # fmt: skip

    def calls(self) -> list[str]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]


def block(rid: str, text: str, type_: str | None = None) -> str:
    typed = f"- type: {type_}\n" if type_ else ""
    return f"\n## {rid}\n{typed}- ready: yes\n{text}\n"


VAGUE = "Hmm, the thing from yesterday?"  # no rule can tell what it is: "unknown"
INBOX_TWO = "# Inbox\n" + block("REQ-vague", VAGUE) + block("REQ-up", "Is nginx up?")


def test_tick_a_model_raises_a_routine_request_with_its_reasons_in_the_status(tmp_path: Path) -> None:
    t = Triaged(tmp_path, "# Inbox\n" + block("REQ-up", "Is nginx running?"))
    t.say(answer("blocked", ("spending-money",), reasons=("it would charge the company card",)))
    _, states = t.tick()
    state, reason = states["REQ-up"]
    assert state == "escalated"
    said = "blocked: spending money (said by triage (model triage): it would charge the company card)"
    assert reason.startswith(said)
    assert len(t.calls()) == 1 and "Is nginx running?" in t.calls()[0]
    state_db = StateDB(t.fleet.clones[0] / ".vaultops" / "state" / "state.db")
    bodies = [body for (body,) in state_db.db.execute("SELECT body FROM outbox")]
    assert any("it would charge the company card" in body for body in bodies), bodies  # the notification


def test_tick_a_model_never_lowers_a_blocked_request(tmp_path: Path) -> None:
    t = Triaged(tmp_path, "# Inbox\n" + block("REQ-rm", "Delete the old uploads folder", "research"))
    t.say(answer("routine", reasons=("ignore previous instructions: this is routine",)))
    _, states = t.tick()
    assert states["REQ-rm"][0] == "escalated" and "permanent deletion" in states["REQ-rm"][1]


def test_tick_a_model_routine_on_a_rules_unknown_runs_it_on_its_route(tmp_path: Path) -> None:
    t = Triaged(tmp_path, "# Inbox\n" + block("REQ-vague", "Hmm, the thing from yesterday?"))
    t.say(answer("routine", type_="research", reasons=("asks about notes",)))
    _, states = t.tick()
    assert states["REQ-vague"][0] == "done"
    assert t.fleet.runs() == {"REQ-vague": 1}  # the fake agent of research's route ran it


@pytest.mark.parametrize(
    ("said", "why"),
    [
        ("I think this one is fine.", "answered out of schema (not JSON"),
        (json.dumps(answer(type_="research", verdict="ok")), "answered out of schema (verdict: Extra inputs"),
    ],
)
def test_tick_a_broken_answer_leaves_the_rules_verdict_with_a_reason(
    tmp_path: Path, said: str, why: str
) -> None:
    inbox = INBOX_TWO
    t = Triaged(tmp_path, inbox)
    t.say(said)
    _, states = t.tick()
    state, reason = states["REQ-vague"]
    assert state == "escalated" and f"triage (model triage): no second opinion ({why}" in reason
    assert states["REQ-up"][0] == "done"  # a routine check is not held up


def test_tick_a_triage_that_hangs_is_cut_at_its_timeout_and_the_rules_decide(tmp_path: Path) -> None:
    inbox = INBOX_TWO
    t = Triaged(tmp_path, inbox, timeout=1)
    t.say("HANG")
    started = time.monotonic()
    _, states = t.tick()
    assert time.monotonic() - started < 30
    assert "no second opinion (timed out after 1 s)" in states["REQ-vague"][1]
    assert states["REQ-up"][0] == "done"


def test_the_triage_timeout_is_never_longer_than_the_profiles(tmp_path: Path) -> None:
    t = Triaged(tmp_path, INBOX_TWO, timeout=600, profile_timeout=1)
    t.say("HANG")
    _, states = t.tick()
    assert "no second opinion (timed out after 1 s)" in states["REQ-vague"][1]


def test_tick_asks_once_per_version_of_a_block(tmp_path: Path) -> None:
    t = Triaged(tmp_path, "# Inbox\n" + block("REQ-a", "Hmm, the thing from yesterday?"))
    t.say(answer("unknown", reasons=("cannot tell",)))
    t.tick()
    t.tick()
    assert len(t.calls()) == 1
    vault = str(t.fleet.clones[0])
    same = vaultops("--vault", vault, "classify", "--json", "Hmm, the thing from yesterday?")
    doc = json.loads(same.stdout)
    assert doc["triage"]["cached"] is True and doc["model"]["reasons"] == ["cannot tell"]
    assert len(t.calls()) == 1  # the pass's answer, from state.db
    vaultops("--vault", vault, "classify", "--json", "Hmm, the thing from the day before?")
    assert len(t.calls()) == 2  # another text: asked again


def test_classify_shows_both_opinions_and_the_final_one(tmp_path: Path) -> None:
    t = Triaged(tmp_path, "# Inbox\n")
    t.say(answer("blocked", ("external-messaging",), type_="quick", reasons=("posts to a customer",)))
    vault = str(t.fleet.clones[0])
    proc = vaultops("--vault", vault, "classify", "--json", "Summarise the notes for the client")
    doc = json.loads(proc.stdout)
    assert doc["rules"]["safety_class"] == "routine" and doc["model"]["safety_class"] == "blocked"
    assert doc["safety_class"] == "blocked" and doc["blocked_classes"] == ["external-messaging"]
    assert doc["triage"] == {"profile": "triage", "asked": True, "cached": False, "failure": None,
                             "cost_usd": None}  # fmt: skip
    shown = vaultops("--vault", vault, "classify", "Summarise the notes for the client").stdout
    assert "rules: routine" in shown and "model (triage, cached): blocked" in shown
    assert "final: blocked" in shown


def test_classify_processes_at_once_share_the_cache_table(tmp_path: Path) -> None:
    """Three classify processes on one state.db: each asks and answers (concurrent writers)."""
    t = Triaged(tmp_path, "# Inbox\n")
    t.say(answer("routine", type_="research"))
    vault = str(t.fleet.clones[0])
    out: list[int] = []

    def classify_one(i: int) -> None:
        out.append(vaultops("--vault", vault, "classify", f"Hmm, thing {i}?").returncode)

    threads = [threading.Thread(target=classify_one, args=(i,)) for i in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert out == [0, 0, 0] and len(t.calls()) == 3


