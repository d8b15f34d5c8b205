"""Nothing waits in silence: an escalation still open after ``[notify] remind`` is reminded once, and each
day at ``[notify] digest`` the person gets the list of what waits and what went wrong.

Each goes out once, across restarts and machines.  Its line in the daily note (``render.markers``) is
the record: with a remote, a machine sends only after its line reached the remote by a compare-and-swap
push (two machines: one push wins, the other finds the line and sends nothing); without one, state.db
and the note do.  A machine that crashed between its push and the send finds its own line, and sends.
state.db remembers what was settled, so a pass does not read the daily notes again for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, time, timedelta

from vaultops.base.durations import say_duration
from vaultops.base.errors import VaultopsError
from vaultops.decide.answers import escalated_since, ruling_of
from vaultops.engine.context import Context
from vaultops.engine.journal import DailyWriter
from vaultops.lines import line_time
from vaultops.model import Request, State
from vaultops.notify.digest import DigestFacts, Listed, digest_notice, summary
from vaultops.render import results
from vaultops.render.markers import Markers, Reminded, digest_lines, read_markers, reminder_lines
from vaultops.run.health import Health
from vaultops.store.notes import splice
from vaultops.workers.registry import Registry, observed_state

_SETTLED = "notice."  # + a reminder's or digest's key in state.db: sent, or sent by another machine
_LOOKED = "reminders.looked"  # when the notes were last looked through for reminders due


def on_time(ctx: Context, daily: DailyWriter) -> None:
    """Reminders and the digest that are due now.  A daily note that cannot be read or written (conflict
    markers, a symlink out of the vault) puts them off, said, until a later pass: nothing is sent without
    its line."""
    now = ctx.clock()
    notify = ctx.config.notify
    if not ctx.teller.anyone():
        return  # nobody to tell: no line would say a reminder went out that went nowhere
    try:
        if notify.remind > 0:
            _reminders(ctx, daily, now)
        if notify.digest:
            _digest(ctx, daily, now)
    except VaultopsError as exc:
        ctx.warn(f"reminders and the digest wait: {exc.message}")
    except OSError as exc:
        ctx.warn(f"reminders and the digest wait: the daily note cannot be written ({exc.strerror or exc})")


# --- reminders --------------------------------------------------------------------------------------


def _reminders(ctx: Context, daily: DailyWriter, now: datetime) -> None:
    """Looked for every few minutes, not on every pass (a reminder is due hours after its escalation),
    in the notes as this pass read them when it did: a 10,000-request inbox is not parsed again for it."""
    remind = ctx.config.notify.remind
    looked = line_time(ctx.state.get(_LOOKED) or "")
    if looked is not None and looked <= now < looked + timedelta(seconds=min(max(remind / 48, 30), 300)):
        return
    due: list[tuple[str, Request]] = []
    for rel in ctx.notes():
        note = ctx.last_read.get(rel) or ctx.read(rel)
        for request in note.requests if note is not None else ():
            at = escalated_since(request)
            if at is None or now < at + timedelta(seconds=remind):
                continue
            if ctx.state.get(_SETTLED + _reminder_key(request)) is None:
                due.append((rel, request))
    due = _still_escalated(ctx, due)  # the pass may have answered some since it read them
    if not due or _remind_due(ctx, daily, now, due):
        ctx.state.set(_LOOKED, results.iso(now))  # else looked at again on the next pass


def _remind_due(ctx: Context, daily: DailyWriter, now: datetime, due: list[tuple[str, Request]]) -> bool:
    """Send the reminders due that nobody sent; False when their line could not reach the remote yet."""
    first = min(escalated_since(r) or now for _, r in due)
    markers = markers_between(ctx, daily, first, now)
    fresh: list[tuple[str, Request]] = []
    for rel, request in due:
        last = request.statuses[-1]
        host = markers.reminded.get(Reminded(request.id, last.at))
        if host is None:
            fresh.append((rel, request))
        elif host == ctx.vault.host:  # this machine's line: it may have crashed before sending
            _remind(ctx, rel, request, now)
        else:
            ctx.state.set(_SETTLED + _reminder_key(request), host)
    if not fresh:
        return True
    lines: list[str] = []
    for rel, request in fresh:
        heading = f"{request.id} {request.title}".strip()
        said = request.statuses[-1].at
        lines += ["", *reminder_lines(now, ctx.vault.agent, ctx.vault.host, rel, heading, request.id, said)]
    if not mark(ctx, daily, lines[1:], now, f"vaultops: reminded {', '.join(r.id for _, r in fresh)}"):
        return False
    for rel, request in fresh:
        _remind(ctx, rel, request, now)
    return True


def _still_escalated(ctx: Context, due: list[tuple[str, Request]]) -> list[tuple[str, Request]]:
    if not due:
        return due
    now_read = {rel: ctx.read(rel) for rel in {rel for rel, _ in due}}
    kept = []
    for rel, request in due:
        note = now_read[rel]
        same = [r for r in note.requests if r.id == request.id] if note is not None else []
        same_escalation = same and same[0].statuses[-1].at == request.statuses[-1].at
        if same_escalation and escalated_since(same[0]) is not None:
            kept.append((rel, same[0]))
    return kept


def _remind(ctx: Context, rel: str, skeleton: Request, now: datetime) -> None:
    note = ctx.read(rel, full=True)  # the whole request: the reminder's buttons are bound to its text
    found = [r for r in note.requests if r.id == skeleton.id] if note is not None else []
    if not found or found[0].state is not State.ESCALATED:
        return
    request = found[0]
    last = request.statuses[-1]
    waited = say_duration((now - (escalated_since(request) or now)).total_seconds())
    ctx.teller.waiting(
        request, State.ESCALATED, now, last.reason, ruling_of(request, ctx.config),
        escalated_at=last.at, reminder=waited,
    )  # fmt: skip
    ctx.state.set(_SETTLED + _reminder_key(request), ctx.vault.host)


def _reminder_key(request: Request) -> str:
    return f"reminder#{request.file}#{request.id}#{request.statuses[-1].at}"


# --- the digest ---------------------------------------------------------------------------------------


def _digest(ctx: Context, daily: DailyWriter, now: datetime) -> None:
    hour, minute = (int(part) for part in ctx.config.notify.digest.split(":"))
    day = now.strftime("%Y-%m-%d")
    if now.time() < time(hour, minute) or ctx.state.get(_SETTLED + f"digest#{day}") is not None:
        return
    host = markers_between(ctx, daily, now, now).digests.get(day)
    if host is not None and host != ctx.vault.host:
        ctx.state.set(_SETTLED + f"digest#{day}", host)
        return
    facts = digest_facts(ctx, now)
    if host is None:
        lines = digest_lines(now, ctx.vault.agent, ctx.vault.host, summary(facts))
        if not mark(ctx, daily, lines, now, f"vaultops: digest for {day}"):
            return
    ctx.teller.outbox.queue(digest_notice(ctx.teller.vault_name, facts))
    ctx.state.set(_SETTLED + f"digest#{day}", ctx.vault.host)
    ctx.state.set("digest.last", results.iso(now))


def digest_facts(ctx: Context, now: datetime) -> DigestFacts:
    since = line_time(ctx.state.get("digest.last") or "") or now - timedelta(days=1)
    waiting: list[tuple[datetime, Listed]] = []
    failed: list[tuple[datetime, Listed]] = []
    for rel in ctx.notes():
        note = ctx.read(rel)
        for r in note.requests if note is not None else ():
            last = r.statuses[-1] if r.statuses else None
            at = line_time(last.at) if last is not None else None
            if last is None or at is None:
                continue
            listed = Listed(r.id, rel, at.strftime("%Y-%m-%d %H:%M"), last.reason, last.state.value)
            if escalated_since(r) is not None:
                waiting.append((at, listed))
            elif last.state in (State.ERROR, State.INTERRUPTED) and at >= since:
                failed.append((at, listed))
    budget = ctx.budget()
    return DigestFacts(
        day=now.strftime("%Y-%m-%d"),
        host=ctx.vault.host,
        waiting=[item for _, item in sorted(waiting, key=lambda pair: pair[0])],
        failed=[item for _, item in sorted(failed, key=lambda pair: pair[0])],
        spent_usd=budget.spent,
        budget_usd=budget.limit,
        unhealthy=_unhealthy(ctx),
        stale=_stale(ctx, now),
    )


def _unhealthy(ctx: Context) -> list[str]:
    out = []
    for name in ctx.config.profiles:
        health = ctx.state.health(name)
        if health is not None and health[0] in (Health.DEGRADED, Health.OFFLINE):
            out.append(f"{name}: {health[0]}" + (f" ({health[3]})" if health[3] else ""))
    return out


def _stale(ctx: Context, now: datetime) -> list[str]:
    after = ctx.config.workers.stale_after
    return [w.name for w in Registry(ctx.state).all() if observed_state(w, now.timestamp(), after) == "stale"]


# --- the record in the daily note --------------------------------------------------------------------


def markers_between(ctx: Context, daily: DailyWriter, first: datetime, now: datetime) -> Markers:
    """What the daily notes from ``first``'s day to today say was sent."""
    lines: list[str] = []
    day = first
    seen: set[str] = set()
    while day.date() <= now.date():
        rel = daily.path(day)
        if rel is not None and rel not in seen:
            seen.add(rel)
            note = ctx.writer.read(rel, requests=False) if ctx.vault.resolve(rel).is_file() else None
            lines += note.lines if note is not None else []
        day += timedelta(days=1)
    return read_markers(lines)


def mark(ctx: Context, daily: DailyWriter, lines: Sequence[str], now: datetime, message: str) -> bool:
    """Put ``lines`` in today's daily note; True once they are where every machine looks (the remote,
    when there is one: pushed as a compare-and-swap, before anything is sent)."""
    placed = daily.place(lines, now) if ctx.config.record.daily_note else None
    publisher = ctx.publisher
    if placed is None:  # no daily note to say it in: this machine's state.db alone remembers
        return not publisher.shared or publisher.through_remote
    rel, plan = placed
    if publisher.through_remote:
        head, committed = publisher.head_version(rel)
        base = ctx.writer.parse(rel, committed or b"", requests=False)
        pushed = publisher.swap(rel, splice(base.raw, base.text.newline, plan(base)), message, head, "notice")
        if pushed.kind != "pushed":
            if pushed.kind == "behind":
                ctx.pull()  # another machine may have sent it: the next pass looks again
            return False
        ctx.writer.apply(rel, plan, create=True, requests=False)
        publisher.adopt(pushed, head, [rel])
        return True
    if publisher.shared and not ctx.config.git.claim_offline:
        return False  # the remote cannot be asked: another machine may be sending it
    ctx.writer.apply(rel, plan, create=True, requests=False)
    if rel not in ctx.report.written:
        ctx.report.written.append(rel)
    return True
