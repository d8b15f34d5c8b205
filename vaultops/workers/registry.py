"""The worker registry: the ``workers`` table of state.db.  Records only; no process is started here.

A worker is identified by its name.  Its pid is trusted only together with the process start time read
from /proc when it was recorded (``vaultops.run.process.process_start_time``, the same test crash recovery
uses), so a pid the kernel handed to another program is never taken for the worker.  Being just rows in the
vault's state.db, the registry outlives any daemon or CLI process.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from vaultops.run.process import _group_alive, process_start_time
from vaultops.store.state import StateDB

# A worker is one row of the workers table, so it is defined with that table's SQL (the store cannot import
# workers); it is the registry's type, named here as ever.
from vaultops.store.workers_table import Worker as Worker
from vaultops.store.workers_table import WorkersTable
from vaultops.store.workers_table import WorkerState as WorkerState

LIVE: frozenset[str] = frozenset({"starting", "running"})  # states that claim a process is there


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
    """The ``workers`` rows of one state.db (their SQL is the ledger's: ``store.workers_table``)."""

    def __init__(self, state: StateDB) -> None:
        self.state = state
        self._table = WorkersTable(state)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """One writer at a time across processes: the cap and the overlap check see every spawn that
        committed before, and two spawns cannot both take the last place."""
        with self.state.immediate():
            yield

    def get(self, name: str) -> Worker | None:
        return self._table.get(name)

    def all(self) -> list[Worker]:
        return self._table.all()

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
        self._table.add(
            Worker(
                name=name,
                state="starting",
                pid=None,
                pid_start=None,
                sup_pid=None,
                sup_start=None,
                parent=parent,
                dir=dir,
                command=command,
                persona=persona,
                notify=notify,
                files=files,
                input=input,
                started=time.time(),
                last_line_at=None,
                ended=None,
                exit_code=None,
                stop_requested=None,
                plan=plan,
                claim=claim,
                reports_after=self.state.last_event_id(),
            )
        )

    def for_claim(self, claim: str) -> Worker | None:
        """The worker started for a plan note's claim."""
        return self._table.for_claim(claim)

    def reports_handled(self, name: str, event_id: int) -> None:
        self._table.reports_handled(name, event_id)

    def supervisor_started(self, name: str, pid: int, start: int | None) -> None:
        self._table.supervisor_started(name, pid, start)

    def running(self, name: str, pid: int, start: int | None) -> None:
        self._table.running(name, pid, start)

    def touched(self, name: str, at: float) -> None:
        """Liveness: the time of the worker's latest line of its own."""
        self._table.touched(name, at)

    def stop_requested(self, name: str) -> None:
        self._table.stop_requested(name, time.time())

    def ended(self, name: str, state: WorkerState, exit_code: int | None) -> None:
        """The end of a worker, recorded once: a row that already ended keeps its first ending."""
        self._table.ended(name, state, exit_code, time.time())

    def forget(self, name: str) -> None:
        self._table.forget(name)
