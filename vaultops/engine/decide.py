"""Gathering what the gate reads besides the note: the I/O in front of ``decide.gate``.

Everything here is read (or, for first-seen times, stamped once) before the gate decides, so the gate
itself stays a function of values.  The model's second opinion is asked only for the requests the gate
says need one, and the gate is then asked again with the answers.

Another machine's claim is timed on the clock that does not jump (``base.steady``): the gate judges its
lease by ``now - first_seen``, so it is handed a first-seen time that is ``now`` less the seconds this
machine has truly seen the claim for.  A jump of the wall clock (or of the pass's clock) then moves both
alike and never ends a lease early.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from vaultops.base import steady
from vaultops.decide.gate import HELD, Agenda, Facts, LiveWorker, agenda_for, candidates, sightings
from vaultops.decide.startable import cleanup_asked, retry_asked
from vaultops.engine.context import Context
from vaultops.engine.quota import holds
from vaultops.model import index_by_id
from vaultops.run import triage
from vaultops.run.worktrees import repo_problem
from vaultops.scan.note import ParsedNote
from vaultops.scan.plan import workdir_path, workdir_problem
from vaultops.store.state import StateDB
from vaultops.vault import inside_any
from vaultops.workers.registry import Registry

CLAIM = "claim:"  # the gate's first-seen key of another machine's claim (``decide.gate.sightings``)


def gather(
    ctx: Context,
    note: ParsedNote,
    *,
    busy_files: Sequence[tuple[str, ...]] = (),
    starting: Sequence[str] = (),
    slots: int | None = None,
) -> Facts:
    """The facts for ``note`` now.  ``busy_files`` and ``starting``: the files: and worker names of plan
    jobs running or claimed earlier in this pass; ``slots``: how many more jobs this clone may start."""
    wall = time.time()
    try:
        mtime = ctx.vault.resolve(note.rel).stat().st_mtime
    except FileNotFoundError:  # rewritten by git's checkout since it was read: as good as just saved
        mtime = wall
    # the gate asks whose claim a lock is only of requests held now
    # ...and of a request whose worktree the person asked to clean up: only its machine has it
    locks = [r.lock for r in note.requests if (r.state in HELD or cleanup_asked(r)) and r.lock is not None]
    now = ctx.clock()
    base = Facts(now=now, wall=wall, mtime=mtime, clone=ctx.clone(*locks), budget=ctx.budget())
    clock = steady.now()
    seen = {}
    for s in sightings(note, base):
        if s.key.startswith(CLAIM):
            held = held_for(ctx.state, note.rel, s.request_id, s.key, clock)
            seen[(s.request_id, s.key)] = now.timestamp() - held
        else:
            stamp = wall if s.wall else now.timestamp()
            seen[(s.request_id, s.key)] = ctx.state.first_seen(note.rel, s.request_id, s.key, stamp)
    heavy = {}
    problems = {}
    repos: dict[str, str] = {}
    starters = candidates(note)
    for _, r in starters:
        if r.lock is None and not retry_asked(r):
            ran = ctx.state.last_heavy_run(note.rel, r.id)
            if ran is not None:
                heavy[r.id] = str(ran["claim"])
        if why := workdir_problem(r.fields.get("workdir"), ctx.vault.root, ctx.vault.allowed_roots):
            problems[r.id] = why
        elif raw := r.fields.get("repo", "").strip():
            found = repo_of(ctx, raw, bool(r.fields.get("workdir")))
            if isinstance(found, Path):
                repos[r.id] = str(found)
            else:
                problems[r.id] = found
    # a takeover needs a fresh view of the remote: judged from a stale one, it could run work twice
    fresh = not ctx.publisher.shared or ctx.publisher.through_remote
    live = Registry(ctx.state).live() if starters else []  # only a request that may start needs them
    workers = tuple(LiveWorker(w.name, w.files) for w in live)
    return replace(
        base, first_seen=seen, heavy_runs=heavy, workdir_problems=problems, repos=repos, fresh=fresh,
        busy_files=tuple(busy_files), workers=workers, starting=tuple(starting), slots=slots,
        quota=holds(ctx) if starters else {},
    )  # fmt: skip


def held_for(state: StateDB, rel: str, request_id: str, key: str, clock: steady.Reading) -> float:
    """Seconds this machine has seen another machine's claim (``key``), on the clock that does not jump.
    The stamp is kept per boot (the boot is part of its key in state.db): after a reboot the count starts
    again, from 0, so a lease is never judged to have ended early; a stamp from before this clock was
    used (a wall-clock time, under the bare key) is not read either."""
    first = state.first_seen(rel, request_id, f"{key}@{clock.boot}", clock.seconds)
    return max(0.0, clock.seconds - first)


def repo_of(ctx: Context, raw: str, has_workdir: bool) -> Path | str:
    """A request's ``repo:`` as the real folder of a git repository inside the allowed roots, or why
    it cannot hold the request's worktree."""
    if has_workdir:
        return "a code job runs in a worktree of its repo: remove `workdir:` or `repo:`"
    path = workdir_path(raw, ctx.vault.root)
    real = Path(os.path.realpath(path))
    if not inside_any(path, ctx.vault.allowed_roots):
        return (
            f"repo {raw} resolves to {real}, outside [limits] allowed_roots; add its folder there or "
            "name another repository"
        )
    if real == ctx.vault.root or ctx.vault.root in real.parents:  # its worktrees would land in the vault
        if not os.path.isabs(os.path.expanduser(raw)) and not real.exists():
            return f"repo {raw} is a relative path, read from the vault; write it as an absolute or ~/ path"
        return f"repo {raw} is the vault or inside it; name a repository outside the vault"
    return repo_problem(real) or real


def agenda(ctx: Context, note: ParsedNote, facts: Facts) -> Agenda:
    """The gate's agenda for ``note``, with the model's second opinion asked where the gate wants one."""
    first = agenda_for(note, facts, ctx.config)
    if not first.asks:
        return first
    index = index_by_id(note.requests)
    opinions = dict(facts.opinions)
    budgets = dict(facts.budget_after)
    budget = facts.budget
    for target in first.asks:  # one at a time: each answer's cost counts before the next is asked
        request = target.find(index)
        assert request is not None
        spent = budget.exhausted
        opinions[target] = triage.for_request(ctx.vault, ctx.state, note.rel, request, budget_spent=spent)
        budget = budgets[target] = ctx.budget()
    return agenda_for(note, replace(facts, opinions=opinions, budget_after=budgets), ctx.config)
