"""A request's title as vaultops shows it anywhere but in the request itself.  Pure.

A title is what the person typed after the request's id, and it may hold a secret (``## REQ-1 Rotate
hvs.…``).  Every place that writes a title outward (the daily note, the dashboard, a notice, a commit, the
output of ``status``) takes it from here: redacted first, before anything else is done to it, since what is
done next (Markdown escapes, a link's anchor that drops ``:``, ``%`` and ``#``) could hide a secret from the
redactor and leave it raw.  A heading that holds a secret is not linked to (``linkable``): the link would
have to carry it.
"""

from __future__ import annotations

from vaultops.base.obsidian import request_heading
from vaultops.base.redact import redact


def title_shown(title: str) -> str:
    """``title`` on one line, its secrets redacted."""
    return " ".join(redact(title).split())


def linkable(heading: str) -> str:
    """``heading`` as a link may name it: "" (the whole note) when it holds a secret."""
    return heading if redact(heading) == heading else ""


def heading_shown(request_id: str, title: str) -> str:
    """The heading a link to the request names (``request_heading``), unless it holds a secret."""
    return linkable(request_heading(request_id, title))
