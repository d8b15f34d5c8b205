"""This machine's own problems reach the person through the notifiers: once when one begins, once when it
is over.  Today that is its remote (it cannot be reached, or refuses this machine's pushes), which the
publisher keeps in state.db as one incident; the log, ``status``, ``tick`` and the dashboard say it too."""

from __future__ import annotations

from datetime import datetime

from vaultops.pipeline.context import Context
from vaultops.pipeline.publish import remote_problem
from vaultops.record import render

TOLD_KEY = "problem-told"  # state.db: the incident told last ("since|sentence"), "" when none is under way


def tell_problems(ctx: Context) -> None:
    problem = remote_problem(ctx.state)
    told = ctx.state.get(TOLD_KEY) or ""
    since = render.iso(datetime.fromtimestamp(problem.since, ctx.clock().tzinfo)) if problem else ""
    now = f"{since}|{problem.sentence}" if problem else ""
    if now == told:
        return
    if told:  # the one told is over (or became another): say so, then the new one
        ctx.teller.problem("", since=told.split("|", 1)[0], over=True)
    if problem is not None:
        ctx.teller.problem(problem.sentence, since=since, over=False)
    ctx.state.set(TOLD_KEY, now)
