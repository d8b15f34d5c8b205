"""``vaultops worker spawn|list|inject|terminate|logs``: a thin shell over ``vaultops.workers.control``,
each action a ``Report``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from vaultops.commands.output import Report
from vaultops.vault import Vault
from vaultops.workers import control


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    if seconds < 172800:
        return f"{seconds / 3600:.0f}h"
    return f"{seconds / 86400:.0f}d"


def format_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no workers"
    head = ("NAME", "STATE", "PID", "PARENT", "AGE", "DIR", "COMMIT")
    body = []
    for r in rows:
        state = r["state"] + (f" ({r['exit_code']})" if r["exit_code"] is not None else "")
        pid = "" if r["pid"] is None else str(r["pid"])
        body.append((r["name"], state, pid, r["parent"], _age(r["age"]), r["dir"], r["commit"] or ""))
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [head, *body]
    )


def spawn(vault: Vault, name: str, command: Sequence[str], **options: Any) -> Report:
    """Start worker ``name`` (``vaultops.workers.control.spawn``, which takes the same options)."""
    worker = control.spawn(vault, name, command, **options)
    doc = {"name": worker.name, "state": worker.state, "pid": worker.pid, "dir": worker.dir}
    return Report([f"worker {worker.name} {worker.state} (pid {worker.pid}) in {worker.dir}"], doc)


def list_workers(vault: Vault) -> Report:
    rows = control.list_workers(vault, time.time())
    return Report([format_table(rows)], {"workers": rows})


def inject(vault: Vault, name: str, text: str, *, stream_json: bool | None = None) -> Report:
    control.inject(vault, name, text, stream_json=stream_json)
    return Report([])


def terminate(vault: Vault, name: str, grace: float | None = None) -> Report:
    _, said = control.terminate(vault, name, grace)
    return Report([said])


def logs(vault: Vault, name: str, lines: int = 50, *, raw: bool = False) -> Report:
    return Report(control.worker_logs(vault, name, lines, raw=raw))
