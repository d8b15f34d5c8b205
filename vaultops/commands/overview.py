"""``vaultops status``: the rows of ``vaultops.commands.status`` (requests, profiles, workers, failing
notifiers, machines) as one report: a table each, or one JSON document."""

from __future__ import annotations

from vaultops.commands.halted import halt_line, halt_row
from vaultops.commands.output import Output
from vaultops.commands.status import (
    channel_rows,
    format_channels,
    format_machines,
    format_profiles,
    format_table,
    format_workers,
    machine_rows,
    profile_rows,
    request_rows,
    worker_rows,
)
from vaultops.vault import Vault


def status(vault: Vault, *, as_json: bool = False) -> Output:
    """The report ``vaultops status`` prints.  ``as_json``: only the document (the tables of a 10,000-request
    inbox cost a good part of a cold status, and ``--json`` prints none of them)."""
    rows, warnings = request_rows(vault)
    profiles = profile_rows(vault)
    workers = worker_rows(vault)
    channels = channel_rows(vault)
    machines, unreadable = machine_rows(vault)
    warnings += unreadable
    halt = halt_row(vault)
    doc: dict[str, object] = {
        "requests": rows, "profiles": profiles, "workers": workers, "notifiers": channels,
        "machines": machines,
    }  # fmt: skip
    if halt is not None:  # only while the fleet is halted: the usual document keeps its shape
        doc["halt"] = halt
    if as_json:
        return Output([], doc, warnings)
    lines = [halt_line(halt, vault.dashboard_rel or ""), ""] if halt is not None else []
    lines += [format_table(rows)]
    if profiles:
        lines += ["", format_profiles(profiles)]
    if workers:
        lines += ["", format_workers(workers)]
    if channels:
        lines += ["", format_channels(channels)]
    if machines:
        lines += ["", format_machines(machines)]
    return Output(lines, doc, warnings)
