"""Finished jobs' results, kept on disk from the job's end until they are in their note.

A daemon or tick killed between a job's end and its record (kill -9, a power cut, a disk that filled)
finds them when it starts again and writes them under their requests, instead of calling the requests
interrupted and losing what the agent did.  One file per claim under ``.vaultops/state/kept/``, written
whole and renamed (``store.kept``); a damaged one reads as empty and the request is interrupted, as before.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from vaultops.engine.context import Context
from vaultops.engine.journal import DailyWriter
from vaultops.engine.record import Done, insert_of
from vaultops.model import State, Target, index_by_id
from vaultops.store import kept
from vaultops.store.inserts import Insert

PURPOSE = "finished"
HELD = frozenset({State.RUNNING, State.LOCKED})  # a kept result lands only while its claim still holds


def _path(ctx: Context, claim: str) -> Path:
    return kept.path_for(ctx.vault.state_dir, PURPOSE, claim)


def keep(ctx: Context, done: Done) -> None:
    """Keep ``done``'s lines until ``forget``; a state folder that cannot be written keeps nothing."""
    try:
        insert = insert_of(ctx, done)
    except Exception:  # a safety net only: the record stage says what is wrong with this result
        return
    job, result = done.claimed.job, done.result
    kept.save(_path(ctx, job.claim), {
        "file": job.file, "id": insert.target.request_id, "occurrence": insert.target.occurrence,
        "claim": job.claim, "lines": list(insert.lines), "seen": insert.seen, "state": result.state.value,
        "started": result.started.isoformat(), "summary": f"{result.state.value} · {job.type} · recovered",
    })  # fmt: skip


def forget(ctx: Context, claim: str) -> None:
    _path(ctx, claim).unlink(missing_ok=True)


def place_kept(ctx: Context, daily: DailyWriter) -> None:
    """Write every kept result under its request (while the request is still held by its claim), tell
    the daily note, and forget it."""
    folder = ctx.vault.state_dir / "kept"
    for path in sorted(folder.glob(f"{PURPOSE}-*.bin")) if folder.is_dir() else []:
        value = kept.load(path)
        try:
            target = Target(str(value["id"]), int(value["occurrence"]))
            insert = Insert(target, tuple(value["lines"]), HELD, claim=value["claim"], seen=value["seen"])
            rel, started = str(value["file"]), datetime.fromisoformat(value["started"])
        except (KeyError, TypeError, ValueError):  # damaged: the request is closed as interrupted
            path.unlink(missing_ok=True)
            continue
        _, applied = ctx.write(rel, [insert])
        note = ctx.read(rel) if applied.written() else None
        request = target.find(index_by_id(note.requests)) if note is not None else None
        if request is not None:
            ctx.report.said(target.request_id, str(value["state"]), "recorded after a restart")
            daily.add(request, started, str(value["summary"]))
        path.unlink(missing_ok=True)
