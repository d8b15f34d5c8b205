"""``vaultops status``: the rows of ``vaultops.commands.status`` (requests, profiles, workers) as one
report: a table each, or one JSON document."""

from __future__ import annotations

from vaultops.commands import worker
from vaultops.commands.output import Report
from vaultops.commands.status import format_profiles, format_table, profile_rows, request_rows, worker_rows
from vaultops.vault import Vault


def status(vault: Vault) -> Report:
    rows, warnings = request_rows(vault)
    profiles = profile_rows(vault)
    workers = worker_rows(vault)
    lines = [format_table(rows)]
    if profiles:
        lines += ["", format_profiles(profiles)]
    if workers:
        lines += ["", worker.format_table(workers)]
    return Report(lines, {"requests": rows, "profiles": profiles, "workers": workers}, warnings)
