"""A machine that goes quiet is said once, and said again once when it is back.

A peer is judged by its own note (``render.machines``), which it rewrites at least every ``[dashboard]
heartbeat``: quiet when the note has said the same last pass for ``[daemon] peer_silent``, as this machine
measures it from when it first saw that last pass, never by comparing the two machines' clocks.  And only
from a fresh view of the remote: a machine that cannot reach it would find every peer quiet.

Said once for the fleet: the daily-note line goes to the remote first, by a compare-and-swap push, as a
reminder's does (``engine.remind.mark``), and a machine that finds the line there sends nothing.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from vaultops.base.durations import say_duration
from vaultops.engine.context import Context
from vaultops.engine.dashboard import machines_of
from vaultops.engine.journal import DailyWriter
from vaultops.engine.remind import mark, markers_between
from vaultops.lines import line_time
from vaultops.render import results
from vaultops.render.machines import MachineFacts, shown_time
from vaultops.render.markers import PeerSaid, peer_lines

_SEEN = "peer."  # + host: what this machine last saw of that peer, and since when


def watch_peers(ctx: Context, daily: DailyWriter) -> None:
    silent = ctx.config.daemon.peer_silent
    publisher = ctx.publisher
    if not silent or ctx.vault.machines_folder is None or not publisher.through_remote:
        return
    now = ctx.clock()
    for peer in machines_of(ctx)[0]:
        if peer.host != ctx.vault.host:
            _look_at(ctx, daily, peer, now, silent)


def _look_at(ctx: Context, daily: DailyWriter, peer: MachineFacts, now: datetime, silent: float) -> None:
    seen = _seen(ctx, peer.host)
    if seen is None or seen["last_pass"] != peer.last_pass:
        was_quiet = seen is not None and seen["quiet"]
        if was_quiet and not _say(ctx, daily, now, PeerSaid(peer.host, "back", peer.last_pass), ""):
            return  # its line could not reach the remote yet: said on a later pass
        _remember(ctx, peer.host, peer.last_pass, results.iso(now), quiet=False)
        return
    since = line_time(str(seen["seen"])) or now
    if seen["quiet"] or now - since < timedelta(seconds=silent):
        return
    quiet_for = say_duration((now - since).total_seconds())
    if _say(ctx, daily, now, PeerSaid(peer.host, "quiet", peer.last_pass), quiet_for):
        _remember(ctx, peer.host, peer.last_pass, seen["seen"], quiet=True)


def _say(ctx: Context, daily: DailyWriter, now: datetime, said: PeerSaid, quiet_for: str) -> bool:
    """Say it unless another machine has; False when its line could not reach the remote yet."""
    back = said.kind == "back"
    shown = shown_time(said.last_pass)
    sentence = f"{said.peer} is back" if back else f"{said.peer} is quiet since {shown}"
    sayer = markers_between(ctx, daily, now - timedelta(days=1), now).peers.get(said)
    if sayer is None:
        lines = peer_lines(now, ctx.vault.agent, ctx.vault.host, said, sentence)
        if not mark(ctx, daily, lines, now, f"vaultops: {sentence}"):
            return False
    elif sayer != ctx.vault.host:
        return True  # another machine said it
    ctx.warn(f"peer: {sentence}" + ("" if back else f" (its note has not changed for {quiet_for})"))
    ctx.teller.peer(said.peer, back=back, last_pass=shown, quiet_for=quiet_for)
    return True


def _seen(ctx: Context, host: str) -> dict[str, object] | None:
    raw = ctx.state.get(_SEEN + host)
    try:
        seen = json.loads(raw) if raw else None
    except ValueError:
        return None
    if not isinstance(seen, dict) or not {"last_pass", "seen", "quiet"} <= seen.keys():
        return None
    return seen


def _remember(ctx: Context, host: str, last_pass: str, seen: object, *, quiet: bool) -> None:
    ctx.state.set(_SEEN + host, json.dumps({"last_pass": last_pass, "seen": seen, "quiet": quiet}))
