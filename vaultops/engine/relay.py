"""Notices from any machine: one machine of the fleet tells the person of every request that waits for
them, whichever machine wrote it.

Issue 29 found a fleet where only the machine with the bot token was heard: escalations written by the
other machine never reached the chat.  Each machine's note says whether it can tell the person
(``MachineFacts.tells``: it has a channel); of those that are not quiet, the first by host name is the
fleet's teller.  It tells what it writes itself, as before, and what it reads in the notes that it has
not told of (another machine wrote it, or this one while another was the teller): an escalation, a review,
a failure, each once (the outbox keeps one notice per key, and the key is the status line's own time), and
only while it is still unanswered (its last status is that state).  The other machines tell nothing of
requests, so the person hears each once across the fleet.  Turning a channel on never sends what was
decided: an answered request no longer waits; an escalation or review still waiting is sent, however old,
as it still asks; a failure only if it came after this machine became the teller.
"""

from __future__ import annotations

from datetime import datetime

from vaultops.decide.answers import ruling_of
from vaultops.engine.context import Context
from vaultops.engine.dashboard import machines_of
from vaultops.lines import line_time
from vaultops.model import State
from vaultops.notify.message import waiting_key
from vaultops.render import results

TELLING_SINCE = "telling-since"  # state.db: when this machine became the fleet's teller (ISO), or ""
RELAYED = frozenset({State.ESCALATED, State.REVIEW, State.INTERRUPTED, State.ERROR})
ASKING = frozenset({State.ESCALATED, State.REVIEW})  # still asking the person, however old
REVIEW = "Accept it, or send it back with what to change"  # as engine.record says it


def fleet_teller(ctx: Context, now: datetime) -> str:
    """The host of the machine that tells the person of requests, "" when none can."""
    hosts = {ctx.vault.host} if ctx.teller.anyone() else set()
    for m in machines_of(ctx)[0]:
        last = line_time(m.last_pass)
        awake = last is not None and (now - last).total_seconds() <= m.quiet_after
        if m.tells and awake and m.host != ctx.vault.host:
            hosts.add(m.host)
    return min(hosts, default="")


def is_teller(ctx: Context) -> bool:
    """This machine is the fleet's teller (``Teller.choose``, asked once per pass)."""
    return fleet_teller(ctx, ctx.clock()) == ctx.vault.host


def relay(ctx: Context) -> None:
    """This pass's part: decide who tells; as the teller, tell what other machines wrote."""
    now = ctx.clock()
    if not ctx.teller.tells:
        if ctx.state.get(TELLING_SINCE):
            ctx.state.set(TELLING_SINCE, "")
        return
    since = line_time(ctx.state.get(TELLING_SINCE) or "")
    if since is None:
        ctx.state.set(TELLING_SINCE, results.iso(now))
        return  # from the next pass on: what stands now was told by whoever told it, or was decided
    for rel in ctx.notes():
        _relay_note(ctx, rel, since)


def _relay_note(ctx: Context, rel: str, since: datetime) -> None:
    note = ctx.read(rel)
    if note is None:
        return
    waiting = [r for r in note.requests if r.state in RELAYED and r.statuses]
    fresh = []
    for request in waiting:
        status = request.statuses[-1]
        at = line_time(status.at)
        # told already: by this machine when it wrote the line, or by an earlier relay.  Not "written
        # here": two machines deciding one request in one second write the same line, and the one whose
        # push lost remembers a line it never wrote
        if at is None or ctx.teller.outbox.entry(waiting_key(rel, request.id, request.state, status.at)):
            continue
        if request.state not in ASKING and at < since:
            continue  # a failure from before this machine told anyone: news then, history now
        fresh.append(request.id)
    if not fresh:
        return
    whole = ctx.read(rel, full=True)  # the text of each, for its notice
    for request in whole.requests if whole is not None else ():
        if request.id not in fresh or request.state not in RELAYED or not request.statuses:
            continue
        status = request.statuses[-1]
        ctx.teller.waiting(
            request,
            request.state,
            line_time(status.at) or ctx.clock(),
            status.reason or request.state.value,
            ruling_of(request, ctx.config),
            proposed=REVIEW if request.state is State.REVIEW else None,
            escalated_at=status.at,
        )
