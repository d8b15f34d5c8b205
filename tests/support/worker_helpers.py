"""Workers in tests: a vault whose worker processes are all killed when the test ends, and the CLI."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import REPO, make_vault, vaultops
from vaultops.run.process import process_start_time
from vaultops.store.state import StateDB
from vaultops.workers.registry import Registry

FAKE_WORKER = str(REPO / "fixtures" / "bin" / "fake-worker")
def gone(pid: int) -> bool:
    """No such process, or only its zombie (whoever inherited it has not reaped it yet)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except OSError:
        return True


def _kill_all(root: Path) -> None:
    db = root / ".vaultops" / "state" / "state.db"
    if not db.exists():
        return
    state = StateDB(db)
    try:
        for worker in Registry(state).all():
            pid, start = worker.sup_pid, worker.sup_start
            if pid and pid != os.getpid() and start and process_start_time(pid) == start:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
            if (
                worker.pid
                and worker.pid != os.getpid()
                and process_start_time(worker.pid) == worker.pid_start
            ):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(worker.pid, signal.SIGKILL)
    finally:
        state.close()


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    made: list[Path] = []

    def _make(config: str = "") -> Path:
        root = make_vault(tmp_path / f"vault{len(made)}", config=config)
        made.append(root)
        return root

    yield _make
    for root in made:
        _kill_all(root)


def cli(vault: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    environ = {"VAULTOPS_WORKER": "", **(env or {})}  # the test may itself run inside a worker
    return vaultops("--vault", str(vault), "worker", *args, cwd=vault, env=environ)


def listed(vault: Path) -> dict[str, dict[str, Any]]:
    proc = cli(vault, "list", "--json")
    assert proc.returncode == 0, proc.stderr
    return {row["name"]: row for row in json.loads(proc.stdout)["workers"]}


def logs(vault: Path, name: str, lines: int = 200) -> list[str]:
    proc = cli(vault, "logs", name, "--lines", str(lines))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def in_log(vault: Path, name: str, text: str) -> bool:
    return any(text in line for line in logs(vault, name))


def reported(vault: Path, name: str, tag: str) -> bool:
    """Whether worker ``name`` has reported a line starting with ``tag`` (its supervisor wrote the event)."""
    state = StateDB(vault / ".vaultops" / "state" / "state.db")
    try:
        return any(
            e["detail"].get("worker") == name and e["detail"].get("line", "").startswith(tag)
            for e in state.events("worker_report")
        )
    finally:
        state.close()
