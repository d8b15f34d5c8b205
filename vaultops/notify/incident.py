"""The message for a job its gate did not see every call of (``vaultops.run.proof``).  Pure.

It is not a question: the job is already stopped and failed closed.  It tells the person that a tool of
their agent ran, or could have, without the policy judging it, so that they look at what it did (the run's
log names every call) and at the agent CLI, which no longer calls vaultops's hook.
"""

from __future__ import annotations

from vaultops.base.redact import redact
from vaultops.notify.message import Notice, obsidian_link, one_line, shorten


def gate_incident_notice(
    *,
    vault_name: str,
    rel: str,
    request_id: str,
    reason: str,
    occasion: str,
    log: str = "",
    heading: str = "",
) -> Notice:
    """One per request and run: ``occasion`` (when the run started) names it."""
    lines = [
        f"{request_id} was stopped: {shorten(one_line(redact(reason)), 400)}.",
        "A tool of its agent ran, or could have, without vaultops's policy judging it. vaultops failed the "
        "request and will not retry it. Check what the agent did (its log names every call), and whether "
        "its CLI still runs the hooks it is given, before `- retry: yes`.",
    ]
    if log:
        lines.append(f"Its log: {log}")
    lines.append(obsidian_link(vault_name, rel, heading))
    return Notice(
        key=f"{rel}#{request_id}#gate-incident#{occasion}",
        title=f"{vault_name}: {request_id} stopped, the gate did not see a call",
        body="\n".join(lines),
    )
