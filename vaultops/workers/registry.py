"""The worker registry: the ``workers`` table of state.db.  Records only; no process is started here.

A worker is identified by its name.  Its pid is trusted only together with the process start time read
from /proc when it was recorded (``vaultops.run.process.process_start_time``, the same test crash recovery
uses), so a pid the kernel handed to another program is never taken for the worker.  Being just rows in the
vault's state.db, the registry outlives any daemon or CLI process.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from vaultops.run.process import _group_alive, process_start_time
from vaultops.store.state import StateDB

WorkerState = Literal["starting", "running", "exited", "failed", "lost"]
LIVE: frozenset[str] = frozenset({"starting", "running"})  # states that claim a process is there


@dataclass(frozen=True)
class Worker:
    name: str
    state: WorkerState
    pid: int | None
    pid_start: int | None
    sup_pid: int | None
    sup_start: int | None
    parent: str
    dir: str
    command: tuple[str, ...]
    persona: str | None
    notify: tuple[str, ...]
    files: tuple[str, ...]
    input: str  # "text" or "stream-json": how inject and answers are written to its stdin
    started: float
    last_line_at: float | None
    ended: float | None
    exit_code: int | None
    stop_requested: float | None
    plan: str | None = None  # the plan note it runs (vault-relative), when the daemon started it for one
    claim: str | None = None  # that plan's claim
    reports_after: int = 0  # its reports up to this event id are in the plan note already

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Worker:
        return cls(
            name=row["name"],
            state=row["state"],
            pid=row["pid"],
            pid_start=row["pid_start"],
            sup_pid=row["sup_pid"],
            sup_start=row["sup_start"],
            parent=row["parent"],
            dir=row["dir"],
            command=tuple(json.loads(row["command"])),
            persona=row["persona"],
            notify=tuple(json.loads(row["notify"])),
            files=tuple(json.loads(row["files"])),
            input=row["input"],
            started=row["started"],
            last_line_at=row["last_line_at"],
            ended=row["ended"],
            exit_code=row["exit_code"],
            stop_requested=row["stop_requested"],
            plan=row.get("plan"),
            claim=row.get("claim"),
            reports_after=row.get("reports_after") or 0,
        )


def process_alive(worker: Worker) -> bool:
    """Whether the recorded process is still the worker: same pid *and* same start time, and its group
    (led by the supervisor) has a member that is not a zombie.  Before the worker command has a pid, the
    supervisor stands for it."""
    if worker.sup_pid is None:
        return False
    # A start time of None was recorded where /proc is missing (macOS): there only the group is checked,
    # which is weaker; on Linux a start time is always recorded and must match.
    pid, start = (
        (worker.pid, worker.pid_start) if worker.pid is not None else (worker.sup_pid, worker.sup_start)
    )
    if start is not None and process_start_time(pid) != start:
        return False
    return _group_alive(worker.sup_pid)


def is_live(worker: Worker) -> bool:
    """A live state, and its process is really there."""
    return worker.state in LIVE and process_alive(worker)


def observed_state(worker: Worker, now: float, stale_after: float) -> str:
    """What ``list`` shows: the recorded state, ``lost`` when a live state's process is gone, ``stale``
    when a running worker has printed nothing of its own for longer than ``stale_after`` seconds."""
    if worker.state in LIVE and not process_alive(worker):
        return "lost"
    if worker.state == "running" and now - (worker.last_line_at or worker.started) > stale_after:
        return "stale"
    return worker.state


class Registry:
    """The ``workers`` rows of one state.db."""

    def __init__(self, state: StateDB) -> None:
        self.state = state
        self.db: sqlite3.Connection = state.db

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        cur = self.db.execute(sql, args)
        names = [c[0] for c in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """One writer at a time across processes: the cap and the overlap check see every spawn that
        committed before, and two spawns cannot both take the last place."""
        with self.state.immediate():
            yield

    def get(self, name: str) -> Worker | None:
        rows = self._rows("SELECT * FROM workers WHERE name = ?", (name,))
        return Worker.from_row(rows[0]) if rows else None

    def all(self) -> list[Worker]:
        return [Worker.from_row(r) for r in self._rows("SELECT * FROM workers ORDER BY started, name")]

    def live(self) -> list[Worker]:
        """Workers whose process is really there (a live state and a matching pid and start time)."""
        return [w for w in self.all() if is_live(w)]

    def add(
        self,
        name: str,
        *,
        parent: str,
        dir: str,
        command: tuple[str, ...],
        persona: str | None = None,
        notify: tuple[str, ...] = (),
        files: tuple[str, ...] = (),
        input: str = "text",
        plan: str | None = None,
        claim: str | None = None,
    ) -> None:
        """A new row in state ``starting``; an older row of that name (no longer live) is replaced.  Its
        reports start after the latest event: an earlier worker's of that name are not its own."""
        self.db.execute(
            "INSERT OR REPLACE INTO workers (name, state, parent, dir, command, persona, notify, files,"
            " input, started, plan, claim, reports_after)"
            " VALUES (?, 'starting', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                name,
                parent,
                dir,
                json.dumps(list(command)),
                persona,
                json.dumps(list(notify)),
                json.dumps(list(files)),
                input,
                time.time(),
                plan,
                claim,
                self.state.last_event_id(),
            ),
        )

    def for_claim(self, claim: str) -> Worker | None:
        """The worker started for a plan note's claim."""
        rows = self._rows("SELECT * FROM workers WHERE claim = ?", (claim,))
        return Worker.from_row(rows[0]) if rows else None

    def reports_handled(self, name: str, event_id: int) -> None:
        self.db.execute(
            "UPDATE workers SET reports_after = MAX(reports_after, ?) WHERE name = ?", (event_id, name)
        )

    def supervisor_started(self, name: str, pid: int, start: int | None) -> None:
        self.db.execute("UPDATE workers SET sup_pid = ?, sup_start = ? WHERE name = ?", (pid, start, name))

    def running(self, name: str, pid: int, start: int | None) -> None:
        self.db.execute(
            "UPDATE workers SET state = 'running', pid = ?, pid_start = ?"
            " WHERE name = ? AND state = 'starting'",
            (pid, start, name),
        )

    def touched(self, name: str, at: float) -> None:
        """Liveness: the time of the worker's latest line of its own."""
        self.db.execute("UPDATE workers SET last_line_at = ? WHERE name = ?", (at, name))

    def stop_requested(self, name: str) -> None:
        self.db.execute("UPDATE workers SET stop_requested = ? WHERE name = ?", (time.time(), name))

    def ended(self, name: str, state: WorkerState, exit_code: int | None) -> None:
        """The end of a worker, recorded once: a row that already ended keeps its first ending."""
        self.db.execute(
            "UPDATE workers SET state = ?, exit_code = COALESCE(?, exit_code), ended = ?"
            " WHERE name = ? AND state IN ('starting', 'running')",
            (state, exit_code, time.time(), name),
        )

    def forget(self, name: str) -> None:
        self.db.execute("DELETE FROM workers WHERE name = ?", (name,))
