"""Answers from chat into the notes: each answer (typed in Telegram or Zulip, or a Telegram button)
becomes a ``- decision:`` line under its request (in the inbox, or in the plan note a ``PLAN-…`` id
names), committed (and pushed) before anything is claimed.  The channels are told the answers were read
only once they are all in the notes, and only then is each press answered where it was made, and each
typed answer replied to where it was typed: the line written and where, or why nothing was."""

from __future__ import annotations

from vaultops.engine.context import Context
from vaultops.engine.halt import from_chat
from vaultops.engine.heard import PressHeard, TypedHeard, hear
from vaultops.engine.tell import TelegramSource
from vaultops.model import PassOutcome
from vaultops.notify.replies import ChatAnswer
from vaultops.scan.plan import plan_id


def take_replies(ctx: Context, read_telegram: TelegramSource | None = None, *, ask: bool = True) -> None:
    """``read_telegram``: where Telegram's updates come from (the daemon's listener); None: asked here.
    ``ask``: ask the chat services (without it, only what ``read_telegram`` has)."""
    listened = ctx.teller.listen(read_telegram, ask=ask)
    answers = [a for a in listened.answers if a.request_id]
    whole = from_chat(ctx, [a for a in listened.answers if not a.request_id])  # /halt, /resume
    plans = {plan_id(rel): rel for rel in ctx.vault.plan_notes()} if answers else {}
    by_note: dict[str, list[ChatAnswer]] = {}
    for answer in answers:
        by_note.setdefault(plans.get(answer.request_id, ctx.inbox), []).append(answer)
    answered: list[PassOutcome] = []
    written: list[str] = []
    presses: list[PressHeard] = []
    typed: list[TypedHeard] = []
    landed: set[int] = set()
    for rel, group in by_note.items():
        note = ctx.read(rel, full=True)
        if note is None:
            whole = False
            continue
        heard = hear(note, group, ctx.clock(), ctx.config.notify.answer_within)
        ctx.report.warnings.extend(heard.said)
        presses += heard.presses
        typed += heard.typed
        _, applied = ctx.write(rel, heard.inserts)
        if len(applied.landed) + len(applied.dropped) < len(heard.inserts):
            whole = False  # the note could not be written: the answers are read again next time
            continue
        landed |= {id(i) for i in applied.landed}
        answered += [PassOutcome(i.target.request_id, "answered", "from chat") for i in applied.landed]
        written += [rel] if applied.landed else []
    if answered and ctx.publisher.git.is_repo():
        ctx.publisher.commit(written, answered, ctx.report.warnings)
        ctx.report.written = [w for w in ctx.report.written if w not in written]
    if not whole:
        return  # read again next time, and each press answered then
    for ack in listened.acks:
        ack()
    ctx.teller.tell_presses(presses, landed, listened.refused)
    ctx.teller.tell_typed(typed, landed)
