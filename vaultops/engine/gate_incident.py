"""A job its gate did not see every call of (``vaultops.run.proof``) is an incident, not only an error line:
said in the pass's report (the daemon's log), kept in state.db's events, and told on every channel."""

from __future__ import annotations

from vaultops.engine.context import Context
from vaultops.model import Request
from vaultops.notify.incident import gate_incident_notice
from vaultops.render import results
from vaultops.render.results import RunResult
from vaultops.render.shown import heading_shown
from vaultops.run.proof import GATE_INCIDENT


def tell_gate_incident(ctx: Context, request: Request, result: RunResult) -> None:
    ctx.warn(f"{request.id} ({request.file}): {result.incident}")
    ctx.state.event(GATE_INCIDENT, request.file, request.id, reason=result.incident, log=result.log)
    ctx.teller.outbox.queue(
        gate_incident_notice(
            vault_name=ctx.teller.vault_name, rel=request.file, request_id=request.id,
            reason=result.incident, occasion=results.iso(result.started), log=result.log,
            heading=heading_shown(request.id, request.title),
        )
    )  # fmt: skip
