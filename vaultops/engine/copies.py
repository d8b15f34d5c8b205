"""Telling the person of sync tools' conflict copies of the queue's notes and of the inbox.

``Vault.plan_notes`` leaves the copies out, so they never run (``base.copies`` tells them by name); this
says once per copy that they are there and what to do, not on every pass: the copies told of are kept in
state.db, and a copy that is gone is forgotten, so one made again later is told of again.
"""

from __future__ import annotations

import json

from vaultops.base.copies import Copy
from vaultops.engine.context import Context

SAID = "conflict-copies"  # state.db key: the copies already told of, as a JSON list of vault paths


def copy_message(copy: Copy, inbox: str) -> str:
    """One sentence on a conflict copy: what it is, that it is not run, and what to do."""
    name = copy.original.rpartition("/")[2]
    if not copy.present:
        return (
            f"{copy.name} looks like a sync tool's conflict copy of {copy.original}, which is not there; "
            f"vaultops does not run it: rename it to {name} if it is the version to keep"
        )
    what = "reads only the inbox, never the copy" if copy.original == inbox else "does not run it"
    return (
        f"{copy.name} looks like a sync tool's conflict copy of {copy.original}; vaultops {what}: "
        f"compare the two, merge what differs into {name} by hand, then delete the copy "
        "(or rename it, if it is a note of its own)"
    )


def tell_copies(ctx: Context) -> None:
    """Warn of each conflict copy not told of before."""
    copies = ctx.vault.conflict_copies()
    try:
        said = set(json.loads(ctx.state.get(SAID) or "[]"))
    except (ValueError, TypeError):
        said = set()
    for copy in copies:
        if copy.name not in said:
            ctx.warn(copy_message(copy, ctx.inbox))
    now = sorted(copy.name for copy in copies)
    if set(now) != said:
        ctx.state.set(SAID, json.dumps(now))
