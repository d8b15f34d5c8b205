"""A worker's persona: the name its messages go out under, through notifier URLs of its own (its own bot),
so that in chat the person sees which worker is talking.

Pure: which reports are worth a message, and the message.  Sending is the supervisor's (it holds the URLs).
"""

from __future__ import annotations

import hashlib

from vaultops.notify.message import Notice
from vaultops.workers.reports import Report


def persona_notice(worker: str, persona: str | None, report: Report) -> Notice | None:
    """The message for a report the person should see, under the worker's persona (default: its name):
    a ``[DONE:…]``, the worker's own ``[ESCALATE:…]``, and any request the policy did not approve.
    STATUS lines and approved requests are the worker's business, not the person's."""
    if report.kind == "DONE":
        what = "done"
    elif report.kind == "ESCALATE" or report.verdict.kind != "approve":
        what = "escalated" if report.verdict.kind == "escalate" else "denied"
    else:
        return None
    speaker = persona or worker
    digest = hashlib.sha256(report.line.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    body = report.line if report.answer is None else f"{report.line}\n{report.answer}"
    # Its own topic (where the channel has topics): the person reads one worker's story in one place.
    return Notice(f"worker:{worker}:{digest}", f"{speaker}: {what} — {report.label}", body, topic=speaker)
