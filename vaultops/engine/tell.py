"""The notify stage: what the person must hear about goes into the outbox as it is written to the note,
and leaves after the pass has committed; their replies from chat come back as answers in the note.

A notice is queued by the machine that wrote the status line, never by one that only read it, so two
machines on one vault do not both send it.  The vault stays the record: an answer from chat (typed, or a
button pressed) becomes a ``- decision:`` line under the request, signed with the person's name, and is
acted on like one typed there (``engine.heard`` decides which answers count).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from vaultops.engine import ports
from vaultops.engine.heard import PressHeard, TypedHeard
from vaultops.engine.ports import Sides
from vaultops.model import Request, Ruling, State
from vaultops.notify.channels import Change
from vaultops.notify.message import (
    auth_failure_notice,
    binding,
    budget_notice,
    escalation_notice,
    machine_problem_notice,
    peer_notice,
)
from vaultops.notify.outbox import Outbox
from vaultops.notify.replies import ChatAnswer
from vaultops.notify.send import deliver
from vaultops.notify.telegram import Batch, Refused, Telegram, TelegramError
from vaultops.notify.zulip import Zulip, ZulipError
from vaultops.render import results
from vaultops.render.shown import heading_shown
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
        elif event == "zulip-ignored":
            self.warnings.append(f"Zulip: ignored a message from {fields.get('sender')}: {fields.get('why')}")

    def warn(self, message: str) -> None:
        self.warnings.append(message)


TelegramSource = Callable[[], Batch | None]


class Teller:
    """``sides``: the outbox, the senders, the chat and its buttons to use instead of those state.db and
    the settings give (the engine's twins)."""

    def __init__(self, vault: Vault, state: StateDB, warnings: list[str], sides: Sides | None = None) -> None:
        self.vault = vault
        self.state = state
        self.log = _Warnings(warnings)
        self.sides = sides or Sides()
        self.outbox: ports.Outbox = self.sides.outbox or Outbox(state)
        # whether this machine tells the person of requests: the fleet's teller (``engine.relay``), asked
        # once per pass when first needed
        self.choose: Callable[[], bool] = lambda: True
        self._tells: bool | None = None

    @property
    def tells(self) -> bool:
        if self._tells is None:
            self._tells = self.choose()
        return self._tells

    @property
    def vault_name(self) -> str:
        # Obsidian names a vault after its folder, which may differ on the phone that opens the links
        return self.vault.config.notify.vault_name or self.vault.root.name

    def waiting(
        self,
        request: Request,
        state: State,
        at: datetime,
        reason: str,
        decision: Ruling,
        proposed: str | None = None,
        status_at: datetime | None = None,
        escalated_at: str = "",
        reminder: str = "",
    ) -> None:
        """A request now waits for the person (escalated, or heavy work interrupted).  ``proposed``: what
        an answer does, when it is not the usual (a worker's question: the answer goes to the worker).
        ``status_at`` (or ``escalated_at``, as the line says it): the time its status line says, when it
        is not ``at``: an answer in the message is bound to that line.  ``reminder``: how long it has
        waited, for the one reminder of an escalation."""
        if not self.tells:  # another machine of the fleet tells the person, from the notes
            return
        if proposed is not None:
            proposed = f"{reason}. {proposed}"
        elif state is State.ESCALATED:
            proposed = f"{reason}. Approve to run it once" + (
                f" on {decision.route[0]}" if decision.route else " on the profile you name"
            )
        else:
            proposed = f"{reason}. Write `- retry: yes` under it to run it again"
        bound = ""
        if state is State.ESCALATED:
            said_at = escalated_at or results.iso(status_at or at)
            bound = binding(request.file, request.id, request.text_hash, said_at)
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
                # the status line's own time, as ``engine.relay`` finds it in the note: one notice per line
                occasion=escalated_at or results.iso(status_at or at),
                bound=bound,
                reminder=reminder,
                heading=heading_shown(request.id, request.title),
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

    def peer(self, peer: str, *, back: bool, last_pass: str, quiet_for: str) -> None:
        dashboard = self.vault.dashboard_rel or ""
        self.outbox.queue(
            peer_notice(
                vault_name=self.vault_name, peer=peer, back=back, last_pass=last_pass, quiet_for=quiet_for,
                dashboard=dashboard,
            )
        )  # fmt: skip

    def problem(self, kind: str, sentence: str, *, since: str, over: bool) -> None:
        self.outbox.queue(
            machine_problem_notice(
                vault_name=self.vault_name, host=self.vault.host, kind=kind, sentence=sentence, since=since,
                over=over, dashboard=self.vault.dashboard_rel or "",
            )
        )  # fmt: skip

    def anyone(self) -> bool:
        """Someone to tell: the senders given, or a channel the settings name."""
        if self.sides.senders is not None:
            return bool(self.sides.senders)
        notify = self.vault.config.notify
        return bool(notify.urls or notify.telegram.enabled or notify.zulip.enabled)

    def deliver(self, now: float | None = None) -> list[Change]:
        """Send what the outbox holds; the channels that became failing or recovered, to be said."""
        notify = self.vault.config.notify
        telegram = notify.telegram if notify.telegram.enabled else None
        zulip = notify.zulip if notify.zulip.enabled else None
        delivered = deliver(
            self.state, notify.urls, self.log, telegram=telegram, zulip=zulip, now=now,
            failing_after=notify.failing_after, fallback=notify.fallback, to=self.sides.senders,
            outbox=self.sides.outbox,
        )  # fmt: skip
        return delivered.changes

    # --- answers from chat ---------------------------------------------------------------------

    def telegram(self) -> ports.Chat | None:
        if self.sides.chat is not None:
            return self.sides.chat
        telegram = self.vault.config.notify.telegram
        return Telegram(telegram, self.state, self.log) if telegram.listening else None

    def buttons(self) -> ports.Buttons | None:
        if self.sides.chat is not None:
            return self.sides.buttons
        telegram = self.vault.config.notify.telegram
        return Telegram(telegram, self.state, self.log).bot if telegram.listening else None

    def listen(self, read_telegram: TelegramSource | None = None, *, ask: bool = True) -> Listened:
        """Answers waiting in chat (without waiting for more), and how to say they are safe.
        ``read_telegram``: where Telegram's updates come from when the daemon's listener reads them (it
        gives None when it has nothing); else Telegram is asked here.  ``ask`` false: the chat services
        are not asked, only ``read_telegram``."""
        listened = Listened()
        telegram = self.telegram()
        if telegram is not None and (ask or read_telegram is not None):
            batch = None
            try:
                batch = read_telegram() if read_telegram is not None else telegram.fetch(timeout=0)
            except TelegramError as exc:
                self.log.warn(f"Telegram replies not read: {exc}; tried again on the next pass")
            if batch is not None:
                listened.answers += batch.replies
                listened.refused += batch.refused
                offset = batch.next_offset
                listened.acks.append(lambda: telegram.ack(offset))
        zulip_config = self.vault.config.notify.zulip
        if ask and zulip_config.listening:
            zulip = Zulip(zulip_config, self.state, self.log)
            try:
                read = zulip.fetch()
            except ZulipError as exc:
                self.log.warn(f"Zulip answers not read: {exc}; tried again on the next pass")
            else:
                listened.answers += read.answers
                anchor = read.next_anchor
                listened.acks.append(lambda: zulip.ack(anchor))
        return listened

    def tell_presses(
        self, presses: Sequence[PressHeard], landed: set[int], refused: Sequence[Refused]
    ) -> None:
        """Say at each button what its press did (``landed``: the ids of the inserts now in the notes),
        and show the decision on the message itself."""
        bot = self.buttons()
        if bot is None:
            return
        told = [(r.press, r.why, "") for r in refused]
        for p in presses:
            if p.insert is not None and id(p.insert) not in landed:
                told.append((p.press, "The note changed as you pressed; nothing was done. Try again.", ""))
            else:
                told.append((p.press, p.toast, p.outcome if p.insert is not None else ""))
        for press, toast, outcome in told:
            # each on its own: a press answered too late (Telegram allows seconds) still settles its message
            try:
                bot.answer_press(press, toast)
            except TelegramError as exc:  # the decision is in the note either way
                self.log.warn(f"Telegram: could not answer a button press: {exc}")
            try:
                if outcome:
                    bot.settle_message(press, outcome)
            except TelegramError as exc:
                self.log.warn(f"Telegram: could not show the decision on its message: {exc}")

    def tell_typed(self, typed: Sequence[TypedHeard], landed: set[int]) -> None:
        """Reply to each answer typed in chat where it was typed (under it in Telegram, in its topic in
        Zulip): what was written where, or why nothing was (``landed``: the ids of the inserts now in the
        notes).  Without it the person could not tell an answer that was taken from one that was not."""
        bot = self.buttons() if any(t.answer.message_id for t in typed) else None
        zulip_config = self.vault.config.notify.zulip
        zulip = None
        if any(t.answer.topic for t in typed) and zulip_config.listening:
            zulip = Zulip(zulip_config, self.state, self.log)
        for t in typed:
            said = t.reply(t.insert is not None and id(t.insert) in landed)
            try:  # each on its own: the answer is in the note (or not) either way
                if bot is not None and t.answer.message_id:
                    bot.reply(t.answer.chat_id, t.answer.message_id, said)
                elif zulip is not None and t.answer.topic:
                    zulip.reply(t.answer.topic, said)
            except (TelegramError, ZulipError) as exc:
                self.log.warn(f"{t.answer.via}: could not reply to an answer: {exc}")


@dataclass(slots=True)
class Listened:
    answers: list[ChatAnswer] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)  # presses that count for nothing, with why
    acks: list[Callable[[], None]] = field(default_factory=list)  # once the answers are in the notes
