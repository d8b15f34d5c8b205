"""``vaultops service install|uninstall|status``: the daemon as a systemd user unit or a launchd agent
(``vaultops.service.install``)."""

from __future__ import annotations

from pathlib import Path

from vaultops.commands.output import Output
from vaultops.service import install as unit


def service(root: Path, action: str, *, dry_run: bool = False) -> Output:
    """What was done (or, with ``dry_run``, would be); ``status`` exits 3 when the service is not running,
    as ``systemctl is-active`` and LSB say "not running"."""
    if action == "status":
        state, lines = unit.service_status(root)
        return Output(lines, exit_code=0 if state == "active" else 3)
    act = unit.install if action == "install" else unit.uninstall
    return Output(act(root, dry_run=dry_run))
