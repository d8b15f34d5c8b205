"""The dashboard stage: this machine's own note (its heartbeat), then the dashboard, both committed with
the pass.  What they say is rendered by ``render.machines`` and ``render.dashboard`` (pure); this module
gathers what they show and writes them only when their text changes.

Each machine writes only its own note, so two machines never change one file; the dashboard is rendered
from what every machine reads alike, so two renderings agree once they have the same commits.  When two
pushes cross, the remote's dashboard is kept (``sync.remote``) and the next pass renders it again.
"""

from __future__ import annotations

from datetime import datetime

from vaultops import __version__
from vaultops.base.errors import VaultopsError
from vaultops.base.visible import visible
from vaultops.engine.context import Context
from vaultops.engine.halt import drawn_keeping_halt, mark_now, standing
from vaultops.engine.problems import machine_problems
from vaultops.render import results
from vaultops.render.dashboard import Fleet, Scheduled, render_dashboard
from vaultops.render.machines import (
    MachineFacts,
    ProfileFact,
    WorkerFact,
    heartbeat_due,
    machine_rel,
    read_machine,
    render_machine,
)
from vaultops.run.health import Health
from vaultops.scan.note import ParsedNote
from vaultops.scan.plan import last_run
from vaultops.scan.schedule import ScheduleError, next_run, parse_schedule
from vaultops.workers.registry import LIVE, Registry, observed_state


def show(ctx: Context) -> None:
    """Write this machine's note when a heartbeat is due or a fact changed, and the dashboard when what
    it shows changed.  A note that cannot be written is said, and the pass goes on."""
    rel, folder = ctx.vault.dashboard_rel, ctx.vault.machines_folder
    if rel is None or folder is None:
        return
    now = ctx.clock()
    try:
        own = machine_rel(folder, ctx.vault.host)
        mine = my_facts(ctx, now)
        old = _machine(ctx, own)
        known = old if isinstance(old, MachineFacts) else None
        if heartbeat_due(known, mine, ctx.config.dashboard.heartbeat):
            _own(ctx, own, render_machine(mine))
            # the fleet's teller is chosen from these notes (``engine.relay``): a change is pushed at once
            ctx.report.urgent = ctx.report.urgent or mine.tells != (known is not None and known.tells)
        shown = fleet(ctx, now)
        if shown is not None:
            _own(ctx, rel, render_dashboard(shown), halt_lines=True)
    except VaultopsError as exc:
        ctx.warn(f"dashboard not written: {exc.message}")
    except OSError as exc:
        ctx.warn(f"dashboard not written ({exc.strerror or exc}); it is tried again on the next pass")


def fleet(ctx: Context, now: datetime) -> Fleet | None:
    """What the dashboard shows, from the notes and the machines' notes as they are on disk now; None
    while a note cannot be read (too big, conflict markers): a dashboard without it would mislead, so the
    last one stands (the pass has said why)."""
    folder = ctx.vault.machines_folder or ""
    notes = []
    for rel in ctx.notes():
        note = _note(ctx, rel)
        if note is None and (rel != ctx.inbox or ctx.vault.resolve(rel).exists()):
            return None
        notes.append((rel, tuple(note.requests) if note is not None else ()))
    machines, problems = machines_of(ctx)
    mark = mark_now(ctx)  # the person's halt lines, kept as they wrote them
    if mark is None:
        return None
    return Fleet(
        now=now,
        inbox=ctx.inbox,
        machine_folder=folder,
        notes=notes,
        scheduled=_scheduled(ctx, now),
        machines=machines,
        problems=problems,
        halt=standing(ctx) if mark.halted else None,
        kept=mark.kept,
    )


def machines_of(ctx: Context) -> tuple[list[MachineFacts], list[str]]:
    """Every machine's note in the folder, in name order, and a sentence for each that cannot be read."""
    folder = ctx.vault.machines_folder
    if folder is None:
        return [], []
    path = ctx.vault.resolve(folder)
    machines: list[MachineFacts] = []
    problems: list[str] = []
    for entry in sorted(path.glob("*.md")) if path.is_dir() else []:
        read = _machine(ctx, f"{folder}/{entry.name}")
        if isinstance(read, MachineFacts):
            machines.append(read)
        elif read:
            problems.append(read)
    return machines, problems


def my_facts(ctx: Context, now: datetime) -> MachineFacts:
    profiles = []
    for name in ctx.config.profiles:
        health = ctx.state.health(name)
        profiles.append(ProfileFact(name, health[0] if health is not None else Health.UNCHECKED.value))
    after = ctx.config.workers.stale_after
    workers = tuple(
        WorkerFact(w.name, observed_state(w, now.timestamp(), after), _iso(w.started, now))
        for w in Registry(ctx.state).all()
        if w.state in LIVE
    )
    budget = ctx.budget()
    return MachineFacts(
        host=ctx.vault.host,
        agent=ctx.vault.agent,
        version=__version__,
        last_pass=results.iso(now),
        day=now.strftime("%Y-%m-%d"),
        spend_usd=round(budget.spent, 4),
        budget_usd=budget.limit,
        profiles=tuple(profiles),
        workers=workers,
        heartbeat=ctx.config.dashboard.heartbeat,
        problems=tuple(sentence for sentence, _ in machine_problems(ctx).values()),
        tells=ctx.teller.anyone(),
    )


def _iso(timestamp: float, now: datetime) -> str:
    return results.iso(datetime.fromtimestamp(timestamp, now.tzinfo))


# --- reading and writing -------------------------------------------------------------------------------


def _note(ctx: Context, rel: str) -> ParsedNote | None:
    """The note as it is now, its answers vetted (a forged one does not answer an escalation here either);
    what it has to say was said when the pass read it."""
    try:
        note = ctx.writer.read(rel, full=True)  # a finished request with its outcome
    except VaultopsError:
        return None
    if note is None or note.conflict_line is not None:
        return None
    return ctx.vetter.note(note)[0]


def _machine(ctx: Context, rel: str) -> MachineFacts | str | None:
    try:
        note = ctx.writer.read(rel, requests=False)
    except VaultopsError as exc:
        return exc.message
    if note is None:
        return None
    if note.frontmatter_error:
        return f"{rel}: {note.frontmatter_error}"
    return read_machine(rel, note.frontmatter)


def _own(ctx: Context, rel: str, text: str, *, halt_lines: bool = False) -> None:
    """``halt_lines``: the note holds the person's halt lines, kept as they are when it is replaced."""
    # a title may hold a note's undecodable bytes, or control bytes from a file name: never written raw
    # (as the note writer does)
    raw = visible(text).encode("utf-8", "replace")
    wrote = drawn_keeping_halt(ctx, rel, raw) if halt_lines else ctx.writer.own(rel, raw)
    if wrote and rel not in ctx.report.written:
        ctx.report.written.append(rel)


def _scheduled(ctx: Context, now: datetime) -> list[Scheduled]:
    out = []
    for rel in ctx.vault.plan_notes():
        note = _note(ctx, rel)
        if note is None:
            continue
        for request in note.requests:
            said = request.fields.get("schedule")
            if not said:
                continue
            try:
                schedule = parse_schedule(said, now)
            except ScheduleError:
                out.append(Scheduled(rel, request.id, said, "its schedule cannot be read"))
                continue
            ran = last_run(note.lines, now)
            when = next_run(schedule, ran, now) if ran is not None or schedule.kind == "once" else None
            if when is not None:
                shown = f"next {when.strftime('%Y-%m-%d %H:%M')}"
            else:
                shown = "runs on its first pass" if ran is None else "does not run again"
            out.append(Scheduled(rel, request.id, said, shown))
    return out
