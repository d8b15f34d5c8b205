"""The kill switch on a real fleet: two daemons on two clones of a bare remote, and the person's phone (a
third clone that commits and pushes, as obsidian-git does).  The halt written on the phone stops the job
running on each machine within one fetch, each recorded as interrupted saying it was the halt; while it
stands nothing is claimed and no schedule fires; ``halt: no`` resumes, and restarts nothing by itself.

The time from the phone's push to every job stopped (recorded as interrupted on the remote) is printed:
``pytest -s tests/e2e/test_halt_fleet.py``."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from tests.support.clones import Fleet, person_push, request_block
from tests.support.daemon_helpers import Daemon
from tests.support.halt import DASHBOARD, set_halt, with_props
from tests.support.helpers import INBOX, git, vaultops
from tests.support.waiting import wait_for
from vaultops.decide.halt import read_halt
from vaultops.scan.note import parse_note

PLAN = "executor-queue/sweep.md"
FETCH = 0.5  # seconds between each daemon's fetches: "within one fetch" is within this, plus a pass
EXTRA = f"[daemon]\nfetch = {FETCH}\nreconcile = 2\ngrace = 10\n\n[limits]\nmax_concurrent = 1\n"


def phone_push(phone: Path, rel: str, edit: Callable[[str], str]) -> str:
    """The phone's edit of ``rel``, committed and pushed (``clones.person_push``): the commit that landed."""
    person_push(phone, edit, rel=rel, attempts=100)
    return git(phone, "rev-parse", "HEAD").strip()


def has(clone: Path, commit: str) -> bool:
    proc = subprocess.run(
        ["git", "merge-base", "--is-ancestor", commit, "HEAD"], cwd=clone, capture_output=True
    )
    return proc.returncode == 0


def fetched(clone: Path) -> int:
    stamp = clone / ".git" / "FETCH_HEAD"
    return stamp.stat().st_mtime_ns if stamp.exists() else 0


def passed_since(fleet: Fleet, commit: str) -> None:
    """Every machine made a whole pass with ``commit``: its HEAD has it, and it fetched again after that
    (a daemon's passes run one after another, so the pass that brought the commit, claims and all, ended)."""
    for clone in fleet.clones:
        assert wait_for(partial(has, clone, commit)), f"{clone.name} never pulled {commit[:8]}"
        assert wait_for(partial(fetched_after, clone, fetched(clone))), f"{clone.name} stopped fetching"


def fetched_after(clone: Path, then: int) -> bool:
    return fetched(clone) > then


def dashboard(clone: Path) -> str:
    return (clone / DASHBOARD).read_text(encoding="utf-8")


def banner_on(clone: Path, shown: bool) -> bool:
    return ("[!danger] HALTED by Person: runaway agent" in dashboard(clone)) is shown


def add_c(text: str) -> str:
    return text + request_block("REQ-c", "Summarise C.")


def schedule(_: str) -> str:
    return "---\ntype: research\nschedule: every 1h\n---\nSummarise the open threads in this vault.\n"


def stopped_somewhere(fleet: Fleet, rid: str, why: str) -> bool:
    for clone in fleet.clones:
        request = parse_note(INBOX, (clone / INBOX).read_bytes()).request(rid)
        if (
            request is not None
            and request.state.value == "interrupted"
            and why in request.statuses[-1].reason
        ):
            return True
    return False


def halted_twice(d: Daemon) -> bool:
    return d.log.read_text().count('"event": "halted"') == 2


def resumed(d: Daemon) -> bool:
    return '"event": "resumed"' in d.log.read_text()


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    inbox = (
        "# Inbox\n"
        + request_block("REQ-a", "Summarise the notes on A.")
        + request_block("REQ-b", "Summarise the notes on B.")
    )
    return Fleet(tmp_path, 2, inbox, extra=EXTRA)


def test_a_halt_from_the_phone_stops_every_machine_and_the_resume_restarts_nothing(fleet: Fleet) -> None:
    env = {**fleet.env, "FAKE_AGENT_SCRIPT": "hang"}  # each agent runs until it is stopped
    daemons = [Daemon(clone, env) for clone in fleet.clones]
    try:
        for d in daemons:
            d.wait_ready()
        # a job running on each machine (one slot each): both agents started, each claim on the remote
        assert wait_for(lambda: sorted(fleet.runs()) == ["REQ-a", "REQ-b"]), fleet.runs()

        def each_machine_runs_one() -> bool:
            hosts = {r.lock.host for r in fleet.remote_requests().values() if r.lock is not None}
            return hosts == {"host0", "host1"}

        assert wait_for(each_machine_runs_one), daemons[0].explain()
        phone = fleet.person()

        phone_push(phone, DASHBOARD, with_props("halt: yes", "halt_reason: runaway agent"))
        pushed = time.monotonic()

        def stopped() -> bool:
            return all(r.state.value == "interrupted" for r in fleet.remote_requests().values())

        assert wait_for(stopped, timeout=60), daemons[0].explain() + daemons[1].explain()
        took = time.monotonic() - pushed
        print(f"\nhalt pushed from the phone -> every job stopped and recorded on the remote: {took:.2f} s")
        assert took < 15 * FETCH + 10  # within one fetch and a pass, with room for a loaded machine
        for r in fleet.remote_requests().values():
            reason = r.statuses[-1].reason
            assert "halt" in reason and "runaway agent" in reason and "retry: yes" in reason, reason
        assert fleet.runs() == {"REQ-a": 1, "REQ-b": 1}
        for clone in fleet.clones:  # each machine's redraw says it, and keeps the person's line
            assert wait_for(partial(banner_on, clone, True)), dashboard(clone)
            assert read_halt(dashboard(clone)).halted
            shown = vaultops("--vault", str(clone), "status")  # first of all, on every machine
            assert shown.stdout.startswith("HALTED by Person: runaway agent (since "), shown.stdout
            doc = json.loads(vaultops("--vault", str(clone), "status", "--json").stdout)
            assert doc["halt"]["by"] == "Person" and doc["halt"]["reason"] == "runaway agent"

        # while halted: a new request and a new schedule (which runs on its first pass) start nothing
        new = phone_push(phone, INBOX, add_c)
        plan = phone_push(phone, PLAN, schedule)
        passed_since(fleet, new)
        passed_since(fleet, plan)
        assert fleet.runs() == {"REQ-a": 1, "REQ-b": 1}
        assert fleet.remote_requests()["REQ-c"].state.value == "open"  # never claimed
        assert "### Run" not in git(fleet.remote, "show", f"{fleet.branch}:{PLAN}")  # never fired

        # the resume: what the halt stopped stays stopped until the person retries it
        resume = phone_push(phone, DASHBOARD, with_props("halt: no"))
        assert all(wait_for(partial(resumed, d)) for d in daemons)
        passed_since(fleet, resume)
        requests = fleet.remote_requests()
        assert requests["REQ-a"].state.value == requests["REQ-b"].state.value == "interrupted"
        assert fleet.runs()["REQ-a"] == fleet.runs()["REQ-b"] == 1  # nothing restarted by itself
        for clone in fleet.clones:
            assert wait_for(partial(banner_on, clone, False)), dashboard(clone)

        # a halt typed in Obsidian on machine 0 (saved, not committed) reaches machine 1 too, and stops what
        # the resume let start (REQ-c, new work, wherever it runs)
        assert wait_for(lambda: fleet.runs()["REQ-c"] == 1), fleet.runs()
        set_halt(fleet.clones[0], "halt: yes", "halt_reason: typed here")
        assert all(wait_for(partial(halted_twice, d)) for d in daemons), daemons[1].explain()
        # recorded where it ran (that clone pushes it when it can: a clone holding its daily note for a later
        # commit may not follow the remote for a while, and still halts from the remote's tip)
        assert wait_for(partial(stopped_somewhere, fleet, "REQ-c", "typed here")), daemons[1].explain()
    finally:
        for d in daemons:
            if d.proc.poll() is None:
                d.proc.send_signal(signal.SIGTERM)
                d.proc.send_signal(signal.SIGTERM)  # a second signal: running jobs stop at once
        for d in daemons:
            d.stop()
