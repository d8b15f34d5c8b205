"""After a crash: this machine's claims that never finished, and the processes they left behind."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from datetime import datetime

from vaultops.model import Lock, Request, State
from vaultops.record import render
from vaultops.run.process import process_start_time
from vaultops.scan.note import ParsedNote
from vaultops.store.inserts import Target, targets_of
from vaultops.store.state import StateDB

UNFINISHED = frozenset({State.RUNNING, State.LOCKED})


def stale_claims(note: ParsedNote, mine: Callable[[Lock], bool]) -> list[tuple[Target, Request]]:
    """This clone's claims that have no final status.  The caller holds the vault lock, so whoever made
    them has stopped."""
    return targets_of(
        note.requests, lambda r: r.state in UNFINISHED and r.lock is not None and mine(r.lock)
    )


def interrupted_lines(request: Request, now: datetime) -> list[str]:
    claim = request.lock.claim if request.lock else "?"
    reason = (
        f"the pass that claimed it (claim {claim}) stopped before it finished; a light check runs again by "
        "itself, other work only after `- retry: yes`"
    )
    return render.status_only(State.INTERRUPTED, now, reason)


def stop_leftovers(state: StateDB, host: str) -> list[str]:
    """Job processes of this host that a crashed pass left running (same pid and start time): stopped.
    Their runs are closed as interrupted."""
    said = []
    for run in state.unfinished_runs(host):
        pid, started = run["job_pid"], run["job_start"]
        if pid and started and process_start_time(pid) == started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            said.append(f"stopped a job left running by a stopped pass: {run['request_id']} (pid {pid})")
        state.run_ended(int(run["id"]), "interrupted", None, 0.0)
    return said
