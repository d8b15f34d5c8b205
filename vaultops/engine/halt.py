"""The halt stage: the fleet's kill switch as the dashboard note says it after the pull (``decide.halt``).

Every pass looks, right after it followed the remote and before it reads any request: while the note says
``halt: yes`` the pass claims nothing, so no schedule fires and no job starts, on every machine that has
fetched the commit that set it.  The daemon also stops its running jobs and closes their gates
(``daemon.loop``).  This machine remembers the halt it is under in state.db, so that it tells of a halt
once and of the resume once (each machine says it itself: the person sees every machine answer), and so
that a dashboard that cannot be read for a moment leaves the fleet as it was, never resumed by accident.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import replace

from vaultops.base.errors import VaultopsError
from vaultops.decide.halt import (
    Halted,
    HaltMark,
    chat_lines,
    marked,
    note_text,
    person_changed,
    read_halt,
    with_lines,
)
from vaultops.engine.context import Context
from vaultops.model import PassOutcome, State
from vaultops.notify.message import Notice, obsidian_link
from vaultops.notify.replies import ChatAnswer
from vaultops.render import results
from vaultops.render.results import RunResult
from vaultops.run.jobs import Job
from vaultops.run.stop import BY_HALT
from vaultops.sync.git import AUTHOR_PREFIX
from vaultops.workers.control import WorkerError, terminate
from vaultops.workers.registry import Registry

HALT_KEY = "halt"  # state.db kv: the halt this machine is under ({"reason", "by", "since"}); absent: none
DRAW_TRIES = 5  # the dashboard changed under the pass again and again: drawn on the next pass
RESUME_HINT = "set `halt: no` in the dashboard note's properties (or send /resume to the bot) to resume"


def look(ctx: Context) -> Halted | None:
    """The halt the fleet is under now, said once when it begins and once when it ends; a warning each pass
    while it stands (the daemon says it once per incident)."""
    now = _halt_now(ctx)
    was = standing(ctx)
    if now is None:  # a note cannot be read now: the fleet stays as it was
        return was
    rel, mark, raw, here = now
    if not mark.halted:
        if was is not None:
            _resumed(ctx, was)
            _commit_typed(ctx, "resumed")
        return None
    if was is not None and was.reason == mark.reason:
        halt = was
    else:
        halt = Halted(mark.reason, mark.by or (_who(ctx, rel, raw, mark.line) if here else "the person"))
        since = str(_seen(ctx).get("since") or results.iso(ctx.clock()))
        ctx.state.set(HALT_KEY, json.dumps({"reason": halt.reason, "by": halt.by, "since": since}))
        if was is None:
            _halted(ctx, halt, since)
            _commit_typed(ctx, "halted")
    ctx.warn(f"{halt.sentence()}; nothing is claimed and no job starts until the halt is lifted")
    return halt


def mark_now(ctx: Context) -> HaltMark | None:
    """What the dashboard note says now; None when it cannot be read (said by the dashboard stage)."""
    rel = ctx.vault.dashboard_rel
    read = _read(ctx, rel) if rel is not None else (HaltMark(False), b"")
    return read[0] if read is not None else None


def _halt_now(ctx: Context) -> tuple[str, HaltMark, bytes, bool] | None:
    """The halt as the notes say it now: the dashboard note's properties, or the inbox's (a vault with no
    dashboard; a person who writes it there: the inbox is theirs, vaultops never rewrites it).  Either
    one halts.  None while one of them cannot be read.  The last element: read here (False: on the
    remote's tip).

    Lines typed on this machine (not committed) are the newest word.  Else the remote's tip as fetched
    counts too: a clone that cannot follow the remote for now (a conflict, a rebase under way, notes it
    holds for a later commit) still halts within one fetch; it resumes once it follows."""
    git, remote = ctx.publisher.git, ctx.publisher.remote
    head = tip = None
    if remote is not None:  # git is asked only with a remote: two refs a pass, the notes' blobs rarely
        head, tip = remote.head(), remote.tip()
    for rel in (ctx.vault.dashboard_rel, ctx.inbox):
        read = _read(ctx, rel) if rel is not None else (HaltMark(False), b"")
        if read is None:
            return None
        if rel is None:
            continue
        if read[0].halted:
            return rel, read[0], read[1], True
        if tip is None or tip == head or person_changed(git.blob(head, rel), read[1]):
            continue  # followed (or nothing fetched), or the person's own lines typed here: those count
        there = marked(git.blob(tip, rel))
        if there.halted:
            return rel, there, b"", False
    return ctx.inbox, HaltMark(False), b"", True


def _commit_typed(ctx: Context, said: str) -> None:
    """A halt (or its lift) typed in Obsidian on this machine, not committed yet, is committed and pushed
    now: the other machines must not wait for this clone's next commit of its notes."""
    git = ctx.publisher.git
    if not git.is_repo():
        return
    head = git.rev("HEAD")
    typed = []
    for rel in (ctx.vault.dashboard_rel, ctx.inbox):
        read = _read(ctx, rel) if rel is not None else None
        if rel is not None and read is not None and person_changed(git.blob(head, rel), read[1]):
            typed.append(rel)
    if typed:
        outcome = PassOutcome("fleet", said, f"typed on {ctx.vault.host}")
        ctx.publisher.commit(typed, [outcome], ctx.report.warnings)
        if not ctx.publisher.through_remote:  # the typed lines were what kept this clone from following
            ctx.pull()  # now it follows (the halt carried onto the remote's redraw) and pushes


def _read(ctx: Context, rel: str) -> tuple[HaltMark, bytes] | None:
    try:
        note = ctx.writer.read(rel, requests=False)
    except VaultopsError:
        return None
    if note is None:
        return HaltMark(False), b""
    return marked(note.raw), note.raw


def standing(ctx: Context) -> Halted | None:
    """The halt this machine last saw, from state.db."""
    seen = _seen(ctx)
    if "reason" not in seen:
        return None
    return Halted(str(seen.get("reason") or ""), str(seen.get("by") or "the person"))


def author_shown(who: str, host: str) -> str:
    """A commit's author as a person reads it: the name without the address.  vaultops's own commit (a halt
    typed in Obsidian on a machine, committed there by its vaultops) names that machine's agent."""
    name = who.split(" <", 1)[0].strip()
    if name.startswith(AUTHOR_PREFIX) and name.endswith(")"):
        return f"the person, on {name[len(AUTHOR_PREFIX) : -1]}'s machine"
    return name or f"the person, on {host}"


def _seen(ctx: Context) -> dict[str, object]:
    return remembered(ctx.state.get(HALT_KEY))


def remembered(raw: str | None) -> dict[str, object]:
    """The halt this machine remembers, as state.db keeps it under ``HALT_KEY``: {} when none."""
    try:
        seen = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return seen if isinstance(seen, dict) else {}


def _who(ctx: Context, rel: str, raw: bytes, line: int | None) -> str:
    """The author of the commit that brought the halt line in (``git blame``); a line no commit has yet
    was typed on this machine."""
    if line is None:
        return f"the person, on {ctx.vault.host}"
    try:
        blamed = ctx.publisher.git.blame(rel, raw, [line]).get(line)
    except (OSError, VaultopsError):
        blamed = None
    return author_shown(blamed.who if blamed is not None else "", ctx.vault.host)


def _halted(ctx: Context, halt: Halted, since: str) -> None:
    host = ctx.vault.host
    ctx.state.event("halt", by=halt.by, reason=halt.reason)
    _stop_workers(ctx, halt)
    body = (
        f"{host} saw the halt: it claims nothing, fires no schedule and starts no job; its running jobs are "
        f"stopped, their work kept (each becomes `interrupted`; `- retry: yes` runs it again). To resume, "
        f"{RESUME_HINT}."
    )
    _tell(ctx, f"halt#{host}#{since}", f"{ctx.teller.vault_name}: {host} {halt.sentence()}", body)


def _resumed(ctx: Context, was: Halted) -> None:
    host = ctx.vault.host
    since = str(_seen(ctx).get("since") or "")
    ctx.state.set(HALT_KEY, "")
    ctx.state.event("resume", by=was.by, reason=was.reason)
    ctx.warn(f"resumed: the halt ({was.reason or 'no reason given'}) is lifted; nothing restarts by itself")
    body = (
        f"{host} claims and starts new work again. Nothing stopped by the halt restarts by itself: write "
        "`- retry: yes` under each interrupted request you want run again."
    )
    _tell(ctx, f"resume#{host}#{since}", f"{ctx.teller.vault_name}: {host} resumed", body)


def _tell(ctx: Context, key: str, title: str, body: str) -> None:
    rel = ctx.vault.dashboard_rel or ""
    link = obsidian_link(ctx.teller.vault_name, rel) if rel else ""
    ctx.teller.outbox.queue(Notice(key=key, title=title, body="\n".join(p for p in (body, link) if p)))


def from_chat(ctx: Context, switches: Sequence[ChatAnswer]) -> bool:
    """``/halt <reason>`` or ``/resume`` from chat (the last one counts) written into the dashboard note's
    properties and committed (and pushed) before anything is claimed, so that it reaches every machine as
    the phone's edit would; this pass sees it at once.  False when the note could not be written (the
    answers are read again on the next pass)."""
    rel = ctx.vault.dashboard_rel
    if not switches or rel is None:
        return True
    last = max(switches, key=lambda a: a.date)
    who = f"{last.who} ({last.via})"
    lines = chat_lines(last.verdict == "halt", last.comment, who)
    try:
        note = ctx.writer.read(rel, requests=False)
        text = note_text(note.raw if note is not None else None)
        if read_halt(text).kept == lines:
            return True  # said already
        ctx.writer.own(rel, with_lines(text, lines).encode("utf-8", "surrogateescape"))
    except (OSError, VaultopsError) as exc:
        ctx.warn(f"{rel}: the {last.verdict} from chat could not be written ({exc}); it is read again")
        return False
    said = "halted" if last.verdict == "halt" else "resumed"
    outcome = PassOutcome("fleet", said, f"from chat, by {who}")
    if ctx.publisher.git.is_repo():
        ctx.publisher.commit([rel], [outcome], ctx.report.warnings)
    else:
        ctx.report.written.append(rel)
    return True


def session_key(job: Job) -> str:
    return f"stopped-session:{job.file}:{job.request_id}"


def keep_session(ctx: Context, job: Job, result: RunResult, lock: threading.Lock) -> None:
    """A job the halt stopped keeps the session it announced: the person's ``- retry: yes`` goes on in it
    (``after_halt``)."""
    if result.state is State.INTERRUPTED and result.session and result.reason.startswith(BY_HALT):
        with lock:
            ctx.state.set(session_key(job), result.session)


def after_halt(ctx: Context, job: Job, lock: threading.Lock) -> Job:
    """A retried request that the halt stopped goes on in its session, told why it stopped; when Claude
    Code no longer has the session, ``engine.quota.run`` starts it again with the work so far.  The
    session is read once."""
    with lock:
        session = ctx.state.get(session_key(job))
        if not session:
            return job
        ctx.state.set(session_key(job), "")
    if job.resume or job.tasks:  # an approval, a review or a quota's reset has its own session
        return job
    return replace(job, resume=session, waited="a halt of the fleet, which the person lifted")


def _stop_workers(ctx: Context, halt: Halted) -> None:
    """This machine's long-lived workers are agents too: each is stopped (TERM, then KILL after ``[workers]
    grace``), its folder and its commits kept; its plan note says so once the halt is lifted."""
    for worker in Registry(ctx.state).live():
        try:
            _, how = terminate(ctx.vault, worker.name)
        except WorkerError as exc:
            ctx.warn(f"worker {worker.name} could not be stopped for the halt: {exc.message}")
            continue
        ctx.warn(f"{how}: {halt.sentence()}")


def drawn_keeping_halt(ctx: Context, rel: str, drawn: bytes) -> bool:
    """The dashboard as drawn, with the halt lines the note holds at the moment it is replaced: a halt (or
    a resume) the person saved while the pass drew it is never written over.  False when it held that
    already."""
    for _ in range(DRAW_TRIES):
        note = ctx.writer.read(rel, requests=False)
        raw = note.raw if note is not None else None
        new = with_lines(note_text(drawn), marked(raw).kept).encode("utf-8", "surrogateescape")
        if raw == new:
            return False
        if ctx.writer.replace(rel, raw, new):
            return True
    raise VaultopsError(f"{rel} kept changing while it was drawn; it is drawn again on the next pass")
