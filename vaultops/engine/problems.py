"""This machine's own problems reach the person beyond its log: its note and the dashboard list them, and
the notifiers tell each once when it begins and once when it is over.  A problem is its remote (it
cannot be reached, or refuses this machine's pushes: the publisher keeps it in state.db as one incident)
or the disk holding its state (read-only, or nearly full: said before the writes fail), or a shared config
that does not load (the daemon keeps the last one that did: ``CONFIG_KEY``, set by ``daemon.reload``), or
an inbox that is not where the config says (``engine.moved``: the setting to change)."""

from __future__ import annotations

import json
from datetime import datetime

from vaultops.base.room import room_problem
from vaultops.engine.context import Context
from vaultops.engine.publish import remote_problem
from vaultops.render import results

TOLD_KEY = "problems-told"  # state.db: {kind: when the incident told began}, as JSON
CONFIG_KEY = "config-problem"  # state.db: {"sentence": …, "since": epoch seconds} while the config is bad


def machine_problems(ctx: Context) -> dict[str, tuple[str, float | None]]:
    """kind -> (its sentence, when it began where that is known)."""
    found: dict[str, tuple[str, float | None]] = {}
    if (remote := remote_problem(ctx.state)) is not None:
        found["remote"] = (remote.sentence, remote.since)
    if (room := room_problem(ctx.vault.state_dir)) is not None:
        found["disk"] = (room, None)
    if (config := config_problem(ctx.state.get(CONFIG_KEY))) is not None:
        found["config"] = config
    if (gone := ctx.inbox_gone) is not None:
        found["inbox"] = (gone.sentence(), None)
    return found


def config_problem(raw: str | None) -> tuple[str, float | None] | None:
    """The config problem a daemon keeps in state.db, as (its sentence, when it began)."""
    try:
        found = json.loads(raw) if raw else None
        return (str(found["sentence"]), float(found["since"])) if found else None
    except (ValueError, TypeError, KeyError):  # damaged: the daemon writes it again on its next check
        return None


def tell_problems(ctx: Context) -> None:
    try:
        told = {str(k): str(v) for k, v in json.loads(ctx.state.get(TOLD_KEY) or "{}").items()}
    except (ValueError, AttributeError):  # damaged: told again, which is better than never
        told = {}
    now = ctx.clock()
    current: dict[str, str] = {}
    for kind, (sentence, began) in machine_problems(ctx).items():
        since = (
            results.iso(datetime.fromtimestamp(began, now.tzinfo))
            if began
            else told.get(kind, results.iso(now))
        )
        current[kind] = since
        if told.get(kind) != since:
            if kind in told:  # the incident told is over, and another has begun
                ctx.teller.problem(kind, "", since=told[kind], over=True)
            ctx.teller.problem(kind, sentence, since=since, over=False)
    for kind, since in told.items():
        if kind not in current:
            ctx.teller.problem(kind, "", since=since, over=True)
    if current != told:
        ctx.state.set(TOLD_KEY, json.dumps(current, sort_keys=True))
