"""The notify stage: what the person must hear about goes into the outbox as it is written to the note,
and leaves after the pass has committed; their replies from chat come back as answers in the note.

A notice is queued by the machine that wrote the status line, never by one that only read it, so two
machines on one vault do not both send it.  The vault stays the record: a Telegram reply becomes a
``- decision:`` line under the request, signed with the chat's name, and is acted on like one typed there.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from vaultops.model import Decision, Request, State, Target, index_by_id
from vaultops.notify.message import auth_failure_notice, budget_notice, escalation_notice
from vaultops.notify.outbox import Outbox
from vaultops.notify.send import deliver
from vaultops.notify.telegram import Reply, Telegram, TelegramError
from vaultops.record import render
from vaultops.scan.note import ParsedNote
from vaultops.store.inserts import Insert
from vaultops.store.state import StateDB
from vaultops.vault import Vault


class _Warnings:
    """The notifier's log, as a pass reports: problems become the pass's warnings."""

    def __init__(self, warnings: list[str]) -> None:
        self.warnings = warnings

    def info(self, event: str, **fields: Any) -> None:
        if event == "telegram-ignored":  # the person may be looking for their chat id here
            self.warnings.append(
                f"Telegram: ignored a message from chat {fields.get('chat_id')} ({fields.get('who')}): "
                f"{fields.get('why')}"
            )

    def warn(self, message: str) -> None:
        self.warnings.append(message)


class Teller:
    def __init__(self, vault: Vault, state: StateDB, warnings: list[str]) -> None:
        self.vault = vault
        self.state = state
        self.log = _Warnings(warnings)
        self.outbox = Outbox(state)

    @property
    def vault_name(self) -> str:
        return self.vault.root.name  # Obsidian names a vault after its folder

    def waiting(
        self,
        request: Request,
        state: State,
        at: datetime,
        reason: str,
        decision: Decision,
        proposed: str | None = None,
    ) -> None:
        """A request now waits for the person (escalated, or heavy work interrupted).  ``proposed``: what
        an answer does, when it is not the usual (a worker's question: the answer goes to the worker)."""
        if proposed is not None:
            proposed = f"{reason}. {proposed}"
        elif state is State.ESCALATED:
            proposed = f"{reason}. Approve to run it once" + (
                f" on {decision.route[0]}" if decision.route else " on the profile you name"
            )
        else:
            proposed = f"{reason}. Write `- retry: yes` under it to run it again"
        self.outbox.queue(
            escalation_notice(
                vault_name=self.vault_name,
                rel=request.file,
                request_id=request.id,
                state=state.value,
                asked=request.text or request.title,
                safety_class=decision.safety_class,
                reasons=decision.reasons,
                proposed=proposed,
                occasion=render.iso(at),
            )
        )
        if state is State.ESCALATED and reason.startswith("auth:"):
            profile = reason.split()[1] if len(reason.split()) > 1 else "?"
            self.outbox.queue(
                auth_failure_notice(
                    vault_name=self.vault_name, profile=profile, detail=reason, since=at.strftime("%Y-%m-%d")
                )
            )

    def budget(self, at: datetime, spent: float, limit: float) -> None:
        self.outbox.queue(
            budget_notice(
                vault_name=self.vault_name, day=at.strftime("%Y-%m-%d"), spent_usd=spent, budget_usd=limit
            )
        )

    def deliver(self) -> None:
        notify = self.vault.config.notify
        telegram = notify.telegram if notify.telegram.enabled else None
        deliver(self.state, notify.urls, self.log, telegram=telegram)

    # --- replies from chat ----------------------------------------------------------------------

    def replies(self) -> tuple[list[Reply], int | None]:
        """Replies waiting at the bot (without waiting for more), and the offset that acknowledges them."""
        telegram = self.vault.config.notify.telegram
        if not (telegram.token.get_secret_value() and telegram.chat_ids):
            return [], None
        try:
            batch = Telegram(telegram, self.state, self.log).fetch(timeout=0)
        except TelegramError as exc:
            self.log.warn(f"Telegram replies not read: {exc}; tried again on the next pass")
            return [], None
        return list(batch.replies), batch.next_offset

    def acknowledge(self, next_offset: int | None) -> None:
        telegram = self.vault.config.notify.telegram
        Telegram(telegram, self.state, self.log).ack(next_offset)


def reply_inserts(note: ParsedNote, replies: Sequence[Reply]) -> tuple[list[Insert], list[str]]:
    """A reply as the person's answer under its request: only for an escalated request, and only when it
    was written after the escalation.  Returns the inserts and one sentence per reply that was not taken.
    Pure."""
    index = index_by_id(note.requests)
    inserts: list[Insert] = []
    said: list[str] = []
    for reply in replies:
        found = index.get(reply.request_id, [])
        if not found:
            said.append(f"Telegram: {reply.who} answered {reply.request_id}, which is not in {note.rel}")
            continue
        request = found[0]
        last = request.statuses[-1] if request.statuses else None
        if request.state is not State.ESCALATED or last is None:
            said.append(
                f"Telegram: {reply.who} answered {reply.request_id}, which is {request.state.value}, "
                "not waiting for a decision"
            )
            continue
        if reply.date and reply.date < _timestamp(last.at):
            said.append(f"Telegram: {reply.who}'s answer to {reply.request_id} predates its escalation")
            continue
        comment = f" — via Telegram ({reply.who})" + (f": {reply.comment}" if reply.comment else "")
        line = f"- decision: {reply.verdict}{comment}"
        inserts.append(Insert(Target(reply.request_id), (line,), frozenset({State.ESCALATED})))
    return inserts, said


def _timestamp(at: str) -> float:
    try:
        return datetime.fromisoformat(at).timestamp()
    except ValueError:
        return 0.0
