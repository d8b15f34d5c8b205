"""``vaultops tick``: one pass (``vaultops.pipeline.tick``), said as lines."""

from __future__ import annotations

from vaultops.commands.output import Report
from vaultops.notify.heartbeat import ping
from vaultops.pipeline.tick import tick as one_pass
from vaultops.vault import Vault


def tick(vault: Vault, *, wait_settle: bool = True) -> Report:
    """A line per request acted on, one per request still settling, the commit; warnings apart."""
    url = vault.config.daemon.heartbeat_url.get_secret_value()
    try:
        report = one_pass(vault, wait_settle=wait_settle)
    except Exception:
        if url:
            ping(url, ok=False)
        raise
    if url and (why := ping(url, ok=not _failed(report.warnings))):
        report.warnings.append(why)
    lines = [f"{rid}: {state}" + (f" — {detail}" if detail else "") for rid, state, detail in report.outcomes]
    lines += [f"waiting: {line}" for line in report.settling]
    if report.commit:
        lines.append(f"committed {report.commit[:10]}")
    if not report.outcomes and not report.settling:
        lines.append("nothing to do")
    return Report(lines, warnings=list(report.warnings))


def _failed(warnings: list[str]) -> bool:
    """A pass whose work could not reach git: the monitor hears it as a failure."""
    return any(w.startswith(("could not commit", "could not push")) for w in warnings)
