"""``vaultops worker spawn|list|inject|terminate|logs``: a thin shell over ``vaultops.workers.control``,
each action a ``Output``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from vaultops.commands.output import Output
from vaultops.commands.status import format_workers
from vaultops.vault import Vault
from vaultops.workers import control


def spawn(vault: Vault, name: str, command: Sequence[str], **options: Any) -> Output:
    """Start worker ``name`` (``vaultops.workers.control.spawn``, which takes the same options)."""
    worker = control.spawn(vault, name, command, **options)
    doc = {"name": worker.name, "state": worker.state, "pid": worker.pid, "dir": worker.dir}
    return Output([f"worker {worker.name} {worker.state} (pid {worker.pid}) in {worker.dir}"], doc)


def list_workers(vault: Vault) -> Output:
    rows = control.list_workers(vault, time.time())
    return Output([format_workers(rows)], {"workers": rows})


def inject(vault: Vault, name: str, text: str, *, stream_json: bool | None = None) -> Output:
    control.inject(vault, name, text, stream_json=stream_json)
    return Output([])


def terminate(vault: Vault, name: str, grace: float | None = None) -> Output:
    _, said = control.terminate(vault, name, grace)
    return Output([said])


def logs(vault: Vault, name: str, lines: int = 50, *, raw: bool = False) -> Output:
    return Output(control.worker_logs(vault, name, lines, raw=raw))
