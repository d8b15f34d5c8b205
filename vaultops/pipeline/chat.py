"""Answers from chat into the notes: each Telegram reply becomes a ``- decision:`` line under its request
(in the inbox, or in the plan note a ``PLAN-…`` id names), committed (and pushed) before anything is
claimed; the bot is told they were read only once they are all in the notes."""

from __future__ import annotations

from vaultops.model import PassOutcome
from vaultops.notify.telegram import Reply
from vaultops.pipeline.context import Context
from vaultops.pipeline.tell import reply_inserts
from vaultops.scan.plan import plan_id


def take_replies(ctx: Context) -> None:
    replies, offset = ctx.teller.replies()
    plans = {plan_id(rel): rel for rel in ctx.vault.plan_notes()} if replies else {}
    by_note: dict[str, list[Reply]] = {}
    for reply in replies:
        by_note.setdefault(plans.get(reply.request_id, ctx.inbox), []).append(reply)
    whole = True
    answered: list[PassOutcome] = []
    written: list[str] = []
    for rel, group in by_note.items():
        note = ctx.read(rel)
        if note is None:
            whole = False
            continue
        inserts, refused = reply_inserts(note, group)
        ctx.report.warnings.extend(refused)
        _, applied = ctx.write(rel, inserts)
        if len(applied.landed) + len(applied.dropped) < len(inserts):
            whole = False  # the note could not be written: the replies are read again next time
            continue
        answered += [PassOutcome(i.target.request_id, "answered", "via Telegram") for i in applied.landed]
        written += [rel] if applied.landed else []
    if answered and ctx.publisher.git.is_repo():
        ctx.publisher.commit(written, answered, ctx.report.warnings)
        ctx.report.written = [w for w in ctx.report.written if w not in written]
    if whole and offset is not None:
        ctx.teller.acknowledge(offset)
