"""The ``workers`` table of state.db: its SQL, and ``Worker``, one row of it (a long-lived worker's record).

Whether a recorded process is still the worker (pid and start time) is ``vaultops.workers.registry``'s; this
module stores and reads what the registry decided, at the times it hands in.  A row's command, notifiers
and files are JSON lists in their columns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from vaultops.store.state import StateDB

WorkerState = Literal["starting", "running", "exited", "failed", "lost"]


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


class WorkersTable:
    """The workers' rows in one state.db."""

    def __init__(self, state: StateDB) -> None:
        self.db = state.db

    def _workers(self, sql: str, args: tuple[Any, ...] = ()) -> list[Worker]:
        cur = self.db.execute(sql, args)
        names = [c[0] for c in cur.description]
        return [Worker.from_row(dict(zip(names, row, strict=True))) for row in cur.fetchall()]

    def get(self, name: str) -> Worker | None:
        found = self._workers("SELECT * FROM workers WHERE name = ?", (name,))
        return found[0] if found else None

    def all(self) -> list[Worker]:
        return self._workers("SELECT * FROM workers ORDER BY started, name")

    def for_claim(self, claim: str) -> Worker | None:
        found = self._workers("SELECT * FROM workers WHERE claim = ?", (claim,))
        return found[0] if found else None

    def any(self) -> bool:
        """Whether any worker has ever been recorded here (cheaper than reading them)."""
        return self.db.execute("SELECT 1 FROM workers LIMIT 1").fetchone() is not None

    def add(self, worker: Worker) -> None:
        """A new row for ``worker``, replacing an older row of that name; what comes of a start (pids,
        lines, the end, a stop) is recorded as it happens, never here."""
        self.db.execute(
            "INSERT OR REPLACE INTO workers (name, state, parent, dir, command, persona, notify, files,"
            " input, started, plan, claim, reports_after)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                worker.name,
                worker.state,
                worker.parent,
                worker.dir,
                _json(worker.command),
                worker.persona,
                _json(worker.notify),
                _json(worker.files),
                worker.input,
                worker.started,
                worker.plan,
                worker.claim,
                worker.reports_after,
            ),
        )

    def reports_handled(self, name: str, event_id: int) -> None:
        self.db.execute(
            "UPDATE workers SET reports_after = MAX(reports_after, ?) WHERE name = ?", (event_id, name)
        )

    def supervisor_started(self, name: str, pid: int, start: int | None) -> None:
        self.db.execute("UPDATE workers SET sup_pid = ?, sup_start = ? WHERE name = ?", (pid, start, name))

    def running(self, name: str, pid: int, start: int | None) -> None:
        """A worker still starting is running, as ``pid`` (a row in any other state stays as it is)."""
        self.db.execute(
            "UPDATE workers SET state = 'running', pid = ?, pid_start = ?"
            " WHERE name = ? AND state = 'starting'",
            (pid, start, name),
        )

    def touched(self, name: str, at: float) -> None:
        self.db.execute("UPDATE workers SET last_line_at = ? WHERE name = ?", (at, name))

    def stop_requested(self, name: str, at: float) -> None:
        self.db.execute("UPDATE workers SET stop_requested = ? WHERE name = ?", (at, name))

    def ended(self, name: str, state: WorkerState, exit_code: int | None, at: float) -> None:
        """Only a row still starting or running ends: one that ended keeps its first ending."""
        self.db.execute(
            "UPDATE workers SET state = ?, exit_code = COALESCE(?, exit_code), ended = ?"
            " WHERE name = ? AND state IN ('starting', 'running')",
            (state, exit_code, at, name),
        )

    def forget(self, name: str) -> None:
        self.db.execute("DELETE FROM workers WHERE name = ?", (name,))


def _json(values: Sequence[str]) -> str:
    return json.dumps(list(values))
