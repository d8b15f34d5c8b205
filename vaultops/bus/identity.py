"""Who is calling: a worker's name comes from its environment, everyone else is the person.

The worker helper starts each worker with ``VAULTOPS_WORKER`` (its own name) and ``VAULTOPS_PARENT`` (who
spawned it), so a worker's ``vaultops bus inbox`` reads its own inbox without being told who it is.
"""

from __future__ import annotations

from collections.abc import Mapping

from vaultops.bus.message import check_name

PERSON = "person"  # the name of whoever runs vaultops at a terminal
WORKER_VAR = "VAULTOPS_WORKER"  # set in a worker's environment: its own name
PARENT_VAR = "VAULTOPS_PARENT"  # who spawned it: a parent's name, or "person"


def whoami(environ: Mapping[str, str], as_name: str | None = None) -> str:
    """The caller's name on the bus: ``as_name`` (``--as NAME``) when given, else the worker's own name
    from the environment, else ``"person"``."""
    if as_name is not None:
        return check_name(as_name, "--as name")
    worker = environ.get(WORKER_VAR, "").strip()
    return check_name(worker, WORKER_VAR) if worker else PERSON


def parent(environ: Mapping[str, str]) -> str | None:
    """The name of whoever spawned this worker (where its reports go), or None outside a worker."""
    name = environ.get(PARENT_VAR, "").strip()
    return check_name(name, PARENT_VAR) if name else None
