"""The engine's ports: every side effect a request's life has, each behind a small interface, so that the
engine can be run against the real adapters (git, the disk, state.db, Telegram, processes) or against
their in-memory twins (``engine.memory``) as huey runs against ``MemoryStorage``.

Each port holds only what the engine calls today on the class it stands for (found by grep in
``vaultops/engine`` and ``vaultops/daemon``), so that the real class fits it without an adapter.  The one
exception is ``Notes``: what the engine does with a note is spread over the note writer, the publisher
(HEAD's version) and the vault (the plan notes), so ``engine.disk.DiskNotes`` gathers them.

``_fits`` at the end makes mypy prove that each real class fits its port; it exists for the type checker
only, and so does every import of a real class here: importing this module does no I/O and pulls in no
edge (``tests/contract`` runs the same cases against both sides).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from vaultops.engine.disk import DiskNotes
    from vaultops.notify.message import Notice
    from vaultops.notify.outbox import Entry
    from vaultops.notify.outbox import Outbox as RealOutbox
    from vaultops.notify.replies import Press
    from vaultops.notify.send import TelegramTarget
    from vaultops.notify.telegram import Batch, Bot, Telegram
    from vaultops.render.results import RunResult
    from vaultops.run.dispatch import Dispatched, Dispatcher
    from vaultops.run.jobs import Job, run_builtin
    from vaultops.store.state import OwnLine, StateDB
    from vaultops.sync.git import Blamed, CommitResult, Git
    from vaultops.sync.remote import Pulled, Pushed
    from vaultops.sync.remote import Remote as RealRemote
    from vaultops.vault import Vault


class Remote(Protocol):
    """The remote as the arbiter between machines (``sync.remote.Remote``): a claim, a result or a notice's
    line is a commit built on this clone's HEAD and pushed, and the push is the compare-and-swap."""

    name: str  # said in the sentences about it

    def head(self) -> str | None:
        """This clone's HEAD (None: no commit yet)."""
        ...

    def tip(self) -> str | None:
        """The remote's branch as this clone last fetched it (None: no such branch yet)."""
        ...

    def pull(self) -> Pulled:
        """Fetch, and bring this clone to the remote's tip (its own commits rebuilt on top)."""
        ...

    def swap(
        self, files: dict[str, bytes], message: str, agent: str, head: str | None, stage: str = "claim"
    ) -> Pushed:
        """Commit ``files`` on ``head`` without touching the working tree and push it: "pushed", or
        "behind" when the remote no longer holds ``head``'s history (someone pushed first)."""
        ...

    def adopt(self, commit: str, old_head: str | None, paths: list[str]) -> bool:
        """Make a pushed commit HEAD; False when HEAD is no longer ``old_head``."""
        ...

    def push(self, commit: str | None = None) -> Pushed:
        """Push ``commit`` (default HEAD) as it is: never a force-push."""
        ...

    def merge_through(self) -> Pushed:
        """The wrong way, for the race test's control run only (fault ``claims.merge``)."""
        ...


class Repo(Protocol):
    """This clone's repository as the publisher, the context and the vetter ask it (``sync.git.Git``): is it
    one, is another git at work in it, a commit's file, who brought a line in, and a commit of exactly the
    paths a pass wrote."""

    @property
    def git_dir(self) -> Path: ...
    def is_repo(self) -> bool: ...
    def in_progress(self) -> str:
        """A rebase or merge another git has under way ("" when none)."""
        ...

    def busy(self) -> str:
        """``in_progress``, or a detached HEAD ("" when neither)."""
        ...

    def rev(self, name: str) -> str | None: ...
    def blob(self, commit: str | None, path: str) -> bytes | None: ...
    def blame(self, path: str, contents: bytes, lines: Sequence[int]) -> dict[int, Blamed]:
        """The commit that brought each of ``lines`` (0-based) of ``contents`` in, and its author as git
        names one (``Name <email>``); a line no commit has is left out."""
        ...

    def commit_paths(self, paths: Sequence[str], message: str, agent: str) -> CommitResult:
        """Commit exactly ``paths`` as the working tree holds them, authored by ``vaultops (<agent>)``."""
        ...

    def renames(self, limit: int) -> list[tuple[str, str]]:
        """The files HEAD's last ``limit`` commits renamed, as (from, to), oldest first (``engine.moved``)."""
        ...


class Notes(Protocol):
    """The notes: as the person's disk holds them, as HEAD holds them, and written whole."""

    def read(self, rel: str) -> bytes | None:
        """The note's bytes on disk now, the person's unsaved-to-git lines included (None: no such note)."""
        ...

    def head_version(self, rel: str) -> tuple[str | None, bytes | None]:
        """This clone's HEAD and the note's bytes in it: what a commit pushed through the remote is built
        on, never the person's uncommitted lines."""
        ...

    def replace(self, rel: str, expected: bytes | None, new: bytes) -> bool:
        """Write ``new`` whole and atomically if the note still holds ``expected`` (None: still does not
        exist); False, with nothing written, when it changed since it was read."""
        ...

    def plan_notes(self) -> list[str]:
        """The queue folder's plan notes, in the order a pass looks at them."""
        ...


class Ledger(Protocol):
    """What the engine asks of state.db (``store.state.StateDB``): claims this clone made, runs, costs,
    first sightings, the lines it wrote, events and small flags."""

    def claimed(
        self, file: str, request_id: str, claim: str, profile: str, host: str, outcome: str = "claimed"
    ) -> None: ...
    def confirm_claims(self, claims: list[str]) -> None: ...
    def drop_claims(self, claims: list[str]) -> None: ...
    def knows_claim(self, claim: str) -> bool: ...
    def run_started(
        self, file: str, request_id: str, claim: str, attempt: int, profile: str, host: str, pid: int | None
    ) -> int: ...
    def run_ended(
        self, run_id: int, outcome: str, exit_code: int | None, duration: float, log: str | None = None,
        cost_usd: float | None = None,
    ) -> None: ...  # fmt: skip
    def job_started(self, run_id: int, pid: int, start: int | None) -> None: ...
    def unfinished_runs(self, host: str) -> list[dict[str, Any]]: ...
    def last_heavy_run(self, file: str, request_id: str) -> dict[str, Any] | None: ...
    def cost_since(self, since: float) -> float: ...
    def first_seen(self, file: str, request_id: str, person_hash: str, now: float) -> float: ...
    def remember_lines(self, file: str, lines: Sequence[tuple[str, str, str]]) -> None: ...
    def wrote_line(self, file: str, request_id: str, line: str) -> bool: ...
    def own_line(self, file: str, request_id: str, line: str) -> OwnLine | None: ...
    def consume(self, file: str, request_id: str, line: str) -> None: ...
    def event(
        self, kind: str, file: str | None = None, request_id: str | None = None, **detail: Any
    ) -> None: ...
    def events(self, kind: str | None = None, after: int = 0) -> list[dict[str, Any]]: ...
    def health(self, profile: str) -> tuple[str, float, float, str] | None: ...
    def get(self, key: str) -> str | None: ...
    def set(self, key: str, value: str) -> None: ...


class Outbox(Protocol):
    """Notices waiting to go out (``notify.outbox.Outbox``): one key, one notice, ever."""

    def queue(self, notice: Notice, now: float | None = None) -> bool:
        """Keep it to be sent; False when its key was queued before, sent or not."""
        ...

    def pending(self, now: float | None = None) -> list[Entry]: ...
    def entry(self, key: str) -> Entry | None: ...
    def reached(self, key: str, target: str) -> None: ...
    def sent(self, key: str, now: float | None = None) -> None: ...
    def failed(
        self, key: str, error: str, now: float | None = None, secrets: Iterable[str] = (), wait: float = 0.0
    ) -> None: ...


class Chat(Protocol):
    """Where the person's replies come from (``notify.telegram.Telegram``): a reply is given again on
    every fetch until its offset is acknowledged, so one that was never written down is not lost."""

    def fetch(self, timeout: float | None = None) -> Batch: ...
    def ack(self, next_offset: int | None) -> None: ...


class Buttons(Protocol):
    """Where a button press is answered (``notify.telegram.Bot``): a toast where it was pressed, and the
    decision shown on its message; and where a typed answer is replied to."""

    def answer_press(self, press: Press, toast: str) -> None: ...
    def settle_message(self, press: Press, outcome: str) -> None: ...
    def reply(self, chat_id: int, message_id: int, text: str) -> None:
        """``text`` as a reply to the person's message ``message_id`` (a typed answer: what it did)."""
        ...


class Sender(Protocol):
    """Where a notice goes (``notify.send.Target``; ``TelegramTarget`` for a chat)."""

    @property
    def id(self) -> str: ...
    @property
    def label(self) -> str: ...
    def send(self, notice: Notice) -> None: ...


class Runner(Protocol):
    """What runs a claimed job's agent (``run.dispatch.Dispatcher``): its lock serialises state.db between
    the pass's worker threads, and ``cancel`` stops running attempts when the daemon stops."""

    lock: threading.Lock
    cancel: threading.Event | None

    def run(self, job: Job, started: datetime) -> Dispatched: ...


class Checks(Protocol):
    """A built-in check run to its end in process (``run.jobs.run_builtin``: an env-check starts the
    programs it asks about, ``git --version``)."""

    def __call__(self, job: Job, vault: Vault, started: datetime) -> RunResult: ...


@dataclass(frozen=True, slots=True)
class Sides:
    """The side effects a pass reaches through a port instead of the adapter the vault's settings give
    (``engine.memory``'s twins, in tests); each None: today's real one."""

    runner: Runner | None = None  # instead of ``run.dispatch.Dispatcher``
    outbox: Outbox | None = None  # instead of state.db's outbox table
    senders: tuple[Sender, ...] | None = None  # instead of ``[notify]``'s URLs, Telegram and Zulip
    chat: Chat | None = None  # where the person's answers come from, instead of Telegram
    buttons: Buttons | None = None  # where presses are answered, instead of Telegram's bot
    checks: Checks | None = None  # instead of ``run.jobs.run_builtin``


if TYPE_CHECKING:

    def _fits(
        remote: RealRemote, notes: DiskNotes, state: StateDB, outbox: RealOutbox, chat: Telegram,
        sender: TelegramTarget, runner: Dispatcher, repo: Git, bot: Bot,
    ) -> None:  # fmt: skip
        """mypy's proof that today's classes fit their ports (never defined at run time)."""
        ports: tuple[Remote, Notes, Ledger, Outbox, Chat, Sender, Runner, Repo, Buttons] = (
            remote, notes, state, outbox, chat, sender, runner, repo, bot,
        )  # fmt: skip
        del ports
        checks: Checks = run_builtin
        del checks
