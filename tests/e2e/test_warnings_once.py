"""Warnings said once per incident, counted in a real daemon's log (issue 29 saw them 3-4 times).

A channel that is down (an apprise URL to a port nothing listens on): each try of the escalation's message
said "not delivered, retried in 10 s", then "20 s", then "40 s", one line each, before the one line saying
the channel is failing.  Now the first try is said, and the tries after it are the same incident."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.support.clones import Fleet, person_push
from tests.support.daemon_helpers import Daemon
from tests.support.helpers import ROTATE
from tests.support.waiting import wait_for
from vaultops.store.state import StateDB


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def warnings(daemon: Daemon) -> list[str]:
    lines = [json.loads(ln) for ln in daemon.log.read_text().splitlines()] if daemon.log.exists() else []
    return [str(ln.get("message")) for ln in lines if ln.get("level") == "warning"]


def tries(vault: Path) -> int:
    """The escalation's failed tries so far, as the outbox in state.db counts them."""
    state = StateDB(vault / ".vaultops" / "state" / "state.db")
    try:
        rows = state.db.execute(
            "SELECT attempts FROM outbox WHERE key LIKE '%REQ-rotate#escalated%'"
        ).fetchall()
    finally:
        state.close()
    return max((int(r[0]) for r in rows), default=0)


def test_a_channel_that_is_down_is_said_once_not_at_each_try(tmp_path: Path) -> None:
    fast = "[daemon]\nreconcile = 1\nfetch = 0.5\ngrace = 10\n"
    down = f'[notify]\nurls = ["json://127.0.0.1:{closed_port()}/"]\n'
    fleet = Fleet(tmp_path, 1, "# Inbox\n", extra=fast + down)
    machine, phone = fleet.clones[0], fleet.person()
    daemon = Daemon(machine, fleet.env)
    try:
        daemon.wait_ready()
        person_push(phone, lambda text: text + "\n" + ROTATE)
        # the first try, then the second after its 10 s wait: two tries of one message to one channel
        assert wait_for(lambda: tries(machine) >= 2, timeout=40), daemon.explain()
    finally:
        assert daemon.stop() == 0, daemon.errors()
    said = [w for w in warnings(daemon) if "not delivered" in w]
    assert len(said) == 1, said
    assert "retried in 10 s" in said[0] and "REQ-rotate" in said[0]
