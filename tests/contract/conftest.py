"""One fixture per port, each parametrized over ``real`` and ``memory``: every contract case runs against the
real adapter and against its in-memory twin, and the twin passes only what the real one passes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.contract.worlds import INBOX_TEXT, Machine, Machines, machines
from tests.support.fake_servers import ListLog
from tests.support.helpers import make_vault
from tests.support.strict_telegram import StrictBotAPI
from vaultops.config import TelegramConfig
from vaultops.engine.memory import MemoryChat, MemoryLedger, MemoryOutbox, MemoryRunner
from vaultops.engine.ports import Chat, Ledger, Outbox, Runner, Sender
from vaultops.notify.outbox import Outbox as StateOutbox
from vaultops.notify.replies import ChatAnswer, parse_reply
from vaultops.notify.send import TelegramTarget
from vaultops.notify.telegram import Bot, Telegram
from vaultops.run.dispatch import Dispatcher
from vaultops.store.state import StateDB
from vaultops.vault import Vault

SIDES = ["real", "memory"]
TOKEN = "5550001234:AAFq3XkP0bR7sTu9VwXyZ1aB2cD3eF4gH5i"
ME = 4242


@pytest.fixture(params=SIDES)
def fleet(request: pytest.FixtureRequest, tmp_path: Path) -> Machines:
    """A remote with the inbox ``INBOX_TEXT``; each ``clone()`` is one more machine."""
    return machines(request.param, tmp_path)


@pytest.fixture(params=SIDES)
def machine(request: pytest.FixtureRequest, tmp_path: Path) -> Machine:
    """One clone of a remote with the inbox ``INBOX_TEXT``."""
    return machines(request.param, tmp_path).clone()


@pytest.fixture(params=SIDES)
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Ledger]:
    if request.param == "memory":
        yield MemoryLedger()
        return
    state = StateDB(tmp_path / "state.db")
    try:
        yield state
    finally:
        state.close()


@dataclass
class OutboxSide:
    outbox: Outbox
    reopen: Callable[[], Outbox]  # the same outbox as a new process finds it


@pytest.fixture(params=SIDES)
def outboxes(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OutboxSide]:
    if request.param == "memory":
        first = MemoryOutbox()
        yield OutboxSide(first, lambda: MemoryOutbox(rows=first.rows))
        return
    opened = [StateDB(tmp_path / "state.db")]

    def reopen() -> Outbox:
        opened[-1].close()
        opened.append(StateDB(tmp_path / "state.db"))
        return StateOutbox(opened[-1])

    try:
        yield OutboxSide(StateOutbox(opened[0]), reopen)
    finally:
        opened[-1].close()


@dataclass
class ChatSide:
    chat: Chat
    sender: Sender
    say: Callable[[str], None]  # the person writes in the chat
    sent: Callable[[], list[str]]  # the texts that reached the chat



@pytest.fixture(params=SIDES)
def chats(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ChatSide]:
    if request.param == "memory":
        twin = MemoryChat(ME)

        def said(text: str) -> None:
            parsed = parse_reply(text, "", "")
            assert parsed is not None
            twin.say(ChatAnswer(parsed.request_id, parsed.verdict, parsed.comment, "Ann", "Telegram", 0))

        yield ChatSide(twin, twin, said, lambda: [n.title for n in twin.sent])
        return
    with StrictBotAPI(TOKEN) as api:
        api.private(ME, "Ann")
        state = StateDB(tmp_path / "state.db")
        config = TelegramConfig(token=TOKEN, chat_ids=(ME,), users=(ME,), api_base=api.base, poll_timeout=0)

        def says(text: str) -> None:
            api.say(ME, ME, text)

        try:
            yield ChatSide(
                Telegram(config, state, ListLog()),
                TelegramTarget(Bot(TOKEN, api.base), ME),
                says,
                lambda: [str(m["text"]) for m in api.sent],
            )
        finally:
            state.close()


@dataclass
class RunnerSide:
    runner: Runner
    ledger: Ledger
    runs: Callable[[], list[str]]  # the request ids of the agent runs so far, by the side's own count


@pytest.fixture(params=SIDES)
def runners(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[RunnerSide]:
    if request.param == "memory":
        ledger = MemoryLedger()
        twin = MemoryRunner(ledger)
        yield RunnerSide(twin, ledger, lambda: [job.request_id for job in twin.jobs])
        return
    root = make_vault(tmp_path / "vault", INBOX_TEXT, fake_profiles=True, repo=False)
    log = tmp_path / "agent-runs.log"  # outside the vault
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    vault = Vault.open(root)
    state = StateDB(vault.state_dir / "state.db")
    try:
        yield RunnerSide(
            Dispatcher(vault, state, []), state, lambda: log.read_text().split() if log.exists() else []
        )
    finally:
        state.close()
