"""``vaultops tick``: one pass (``vaultops.pipeline.tick``), said as lines."""

from __future__ import annotations

from vaultops.commands.output import Report
from vaultops.pipeline.tick import tick as one_pass
from vaultops.vault import Vault


def tick(vault: Vault, *, wait_settle: bool = True) -> Report:
    """A line per request acted on, one per request still settling, the commit; warnings apart."""
    report = one_pass(vault, wait_settle=wait_settle)
    lines = [f"{rid}: {state}" + (f" — {detail}" if detail else "") for rid, state, detail in report.outcomes]
    lines += [f"waiting: {line}" for line in report.settling]
    if report.commit:
        lines.append(f"committed {report.commit[:10]}")
    if not report.outcomes and not report.settling:
        lines.append("nothing to do")
    return Report(lines, warnings=list(report.warnings))
