"""After a crash: this machine's claims that never finished, and the processes they left behind."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from datetime import datetime

from vaultops.engine.context import Context
from vaultops.engine.follow import runs_on
from vaultops.model import Lock, Request, State, Target, targets_of
from vaultops.render import results
from vaultops.run.carry import interrupted
from vaultops.run.process import process_start_time
from vaultops.scan.note import ParsedNote
from vaultops.store.inserts import Insert
from vaultops.store.state import StateDB

UNFINISHED = frozenset({State.RUNNING, State.LOCKED})


def stale_claims(note: ParsedNote, mine: Callable[[Lock], bool]) -> list[tuple[Target, Request]]:
    """This clone's claims that have no final status.  The caller holds the vault lock, so whoever made
    them has stopped."""
    return targets_of(note.requests, lambda r: r.state in UNFINISHED and r.lock is not None and mine(r.lock))


AGAIN = "a light check runs again by itself, other work only after `- retry: yes`"


def interrupted_lines(request: Request, now: datetime) -> list[str]:
    claim = request.lock.claim if request.lock else "?"
    why = f"the pass that claimed it (claim {claim}) stopped before it finished; {AGAIN}"
    return results.status_only(State.INTERRUPTED, now, why)


def stop_leftovers(state: StateDB, host: str) -> list[str]:
    """Job processes of this host that a crashed pass left running (same pid and start time): stopped.
    Their runs are closed as interrupted."""
    said = []
    for run in state.unfinished_runs(host):
        pid, started = run["job_pid"], run["job_start"]
        if pid and started and process_start_time(pid) == started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            said.append(f"stopped {run['request_id']} (pid {pid}), left running by a pass that stopped")
        state.run_ended(int(run["id"]), "interrupted", None, 0.0)
        if run["attempt"]:  # an agent's attempt: the next one, after `- retry: yes`, is told it was cut short
            interrupted(state, run["file"], run["request_id"], run["claim"], run["handler"])
    return said


def never_started_lines(request: Request, now: datetime) -> list[str]:
    claim = request.lock.claim if request.lock else "?"
    why = f"claimed (claim {claim}), but its job never started: nothing ran; {AGAIN}"
    return results.status_only(State.INTERRUPTED, now, why)


def recover(ctx: Context) -> None:
    """Claims this machine made and never finished (the process that made them is gone: the caller holds
    the vault lock) become ``interrupted``; what they started is stopped."""
    ctx.report.warnings.extend(stop_leftovers(ctx.state, ctx.vault.host))
    close_claims(ctx, frozenset(), interrupted_lines, "its pass stopped before it finished")


def release_unstarted(ctx: Context, live: frozenset[str]) -> None:
    """The daemon's claims that no job of its own runs (a pass failed between the claim and the job's
    start) are closed at once, never left ``running`` until a restart.  ``live``: the claims whose jobs
    run or whose results wait to be recorded."""
    close_claims(ctx, live, never_started_lines, "its job never started")


def close_claims(
    ctx: Context, live: frozenset[str], lines: Callable[[Request, datetime], list[str]], said: str
) -> None:
    for rel in ctx.notes():
        note = ctx.read(rel)
        if note is None:
            continue
        stale = [
            (t, r)
            for t, r in stale_claims(note, ctx.mine)
            if r.lock is not None and r.lock.claim not in live and not runs_on(ctx.state, r)
        ]
        if not stale:
            continue
        now = ctx.clock()
        ctx.write(rel, [Insert(t, tuple(lines(r, now)), frozenset({r.state})) for t, r in stale])
        for _, r in stale:
            ctx.report.said(r.id, State.INTERRUPTED.value, said)
            ctx.state.event("interrupted", r.file, r.id, claim=r.lock.claim if r.lock else "")
