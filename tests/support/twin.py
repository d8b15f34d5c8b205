"""Machines on the engine's twins: whole passes of the real driver (``engine.driver.Pass``, its stage modules
unchanged) with git, the remote, state.db, the outbox, the chat and the agents in memory
(``engine.memory``).  What the pass logic decides is tested here in milliseconds; real git and real
processes stay the ground truth in ``tests/e2e`` for sync, kills, the daemon, workers and the fleet.

Each machine keeps its working tree in a real temporary folder (``FolderTree``), because a few stages read
the vault's folder directly (the daily notes' settings, a note's age, the machines' folder, the kept
results): the notes still go through the ``Notes`` twin, which refuses a write over a note that changed,
and git never runs.  The clock is a value the test moves (``TwinClock``).
"""

from __future__ import annotations

import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.support.helpers import INBOX, fake_profiles_config
from tests.support.paths import REPO
from vaultops.engine.driver import Pass, PassReport
from vaultops.engine.memory import (
    PERSON,
    MemoryChat,
    MemoryClone,
    MemoryGit,
    MemoryLedger,
    MemoryNotes,
    MemoryOrigin,
    MemoryOutbox,
    MemoryRemote,
    MemoryRunner,
)
from vaultops.engine.ports import Sides
from vaultops.engine.publish import Publisher
from vaultops.engine.tick import passes
from vaultops.model import Request, State
from vaultops.render.results import RunResult
from vaultops.run.jobs import Job
from vaultops.scan.note import parse_note
from vaultops.store.notes import NoteWriter
from vaultops.vault import Vault

START = datetime(2026, 3, 2, 9, 0).astimezone()  # a Monday morning, local time
# git-ignored in the template's .gitignore: never in a commit
IGNORED = (".vaultops/state/", ".vaultops/local.toml", ".obsidian/workspace")


@pytest.fixture
def no_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A twin test runs no process (no git, no agent): one that tries fails at once."""

    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise AssertionError(f"a twin test started a process: {args[0] if args else kwargs}")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)


def ignored(rel: str) -> bool:
    return rel.startswith(IGNORED) or rel.endswith(".vaultops.tmp")


class FolderTree(MutableMapping[str, bytes]):
    """A vault folder as a clone's working tree (``MemoryClone.disk``): vault paths to bytes, the
    git-ignored files left out."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __getitem__(self, rel: str) -> bytes:
        path = self.root / rel
        if ignored(rel) or not path.is_file():
            raise KeyError(rel)
        return path.read_bytes()

    def __setitem__(self, rel: str, raw: bytes) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)

    def __delitem__(self, rel: str) -> None:
        try:
            (self.root / rel).unlink()
        except FileNotFoundError:
            raise KeyError(rel) from None

    def __iter__(self) -> Iterator[str]:
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root).as_posix()
            if path.is_file() and not ignored(rel):
                yield rel

    def __len__(self) -> int:
        return sum(1 for _ in self)


class TwinClock:
    """The pass's clock: a value the test moves, never the wall's."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def move(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


def template_tree(inbox: str, plans: dict[str, str] | None = None, config: str = "") -> dict[str, bytes]:
    """vault-template/ as a first commit, with ``inbox`` as the inbox, ``plans`` (name -> text) as the only
    plan notes when given, and ``config`` appended to config.toml."""
    base = REPO / "vault-template"
    tree = {
        p.relative_to(base).as_posix(): p.read_bytes()
        for p in sorted(base.rglob("*"))
        if p.is_file() and not ignored(p.relative_to(base).as_posix())
    }
    tree[INBOX] = inbox.encode()
    if plans is not None:
        tree = {rel: raw for rel, raw in tree.items() if not rel.startswith("executor-queue/")}
        tree |= {f"executor-queue/{name}": text.encode() for name, text in plans.items()}
    if config:
        tree[".vaultops/config.toml"] += ("\n" + config).encode()
    return tree


class TwinChecks:
    """The built-in checks (``engine.ports.Checks``), which start the programs they ask about: each done at
    once, or as ``script`` (request id -> ``RunResult``) says; the jobs kept in order."""

    def __init__(self) -> None:
        self.script: dict[str, RunResult] = {}
        self.jobs: list[Job] = []
        self.lock = threading.Lock()

    def __call__(self, job: Job, vault: Vault, started: datetime) -> RunResult:
        with self.lock:
            self.jobs.append(job)
        scripted = self.script.get(job.request_id)
        result = scripted or RunResult(State.DONE, "direct", started, 0.0, f"{job.type}: checked")
        return replace(result, started=started)


class Machine:
    """One machine: its clone of the shared origin in a folder of its own, its state.db, outbox, chat and
    agents.  Each ``tick`` is ``vaultops tick`` there: a fresh publisher and pass, as a fresh process has."""

    def __init__(self, root: Path, origin: MemoryOrigin, local: str, clock: TwinClock) -> None:
        (root / ".vaultops").mkdir(parents=True)
        (root / ".vaultops" / "local.toml").write_text(local)
        self.root = root
        self.clock = clock
        self.tree = FolderTree(root)
        self.clone = MemoryClone.of(origin, self.tree)
        self.vault = Vault(root)
        self.ledger = MemoryLedger()
        self.runner = MemoryRunner(self.ledger, host=self.vault.host)
        self.checks = TwinChecks()
        self.outbox = MemoryOutbox()
        self.chat = MemoryChat()  # where notices go
        self.also: list[MemoryChat] = []  # more channels told, each its own target (an apprise URL, a chat)
        self.replies = MemoryChat()  # where the person's answers come from, and presses are answered
        self.git = MemoryGit(self.clone, root)
        self.notes = MemoryNotes(self.clone, self.vault.config.queue.folder)
        self.remote = MemoryRemote(self.clone)
        self.shared = True  # False: a vault with no remote (``[git] push = false``)
        self.telling = True  # False: no sender given, so the settings' channels (none) are used

    def new_pass(self) -> Pass:
        vault = self.vault
        remote = self.remote if self.shared and vault.config.git.push else None
        senders = (self.chat, *self.also) if self.telling else None
        sides = Sides(self.runner, self.outbox, senders, self.replies, self.replies, self.checks)
        return Pass(
            vault, self.ledger, self.clock, NoteWriter(vault, self.notes),
            Publisher(vault, self.git, remote), sides=sides,
        )  # fmt: skip

    def tick(self) -> PassReport:
        return passes(self.vault, self.new_pass, wait_settle=False)

    def text(self, rel: str = INBOX) -> str:
        return self.tree[rel].decode("utf-8", "replace")

    def save(self, rel: str, text: str) -> None:
        """The person saves a note here (in Obsidian): on disk, in no commit."""
        self.tree[rel] = text.encode()

    def requests(self, rel: str = INBOX) -> dict[str, Request]:
        return {r.id: r for r in parse_note(rel, self.tree[rel]).requests}


def said(report: PassReport) -> list[str]:
    """What ``vaultops tick`` prints of a pass on stdout: a line per request acted on, one per request still
    settling (``commands.tick``)."""
    lines = [f"{rid}: {state}" + (f" — {detail}" if detail else "") for rid, state, detail in report.outcomes]
    return lines + [f"waiting: {line}" for line in report.settling]


def machine_local(i: int, tail: str) -> str:
    """Machine ``i``'s local.toml, as ``clones.machine_config`` writes it."""
    return f'[agent]\nname = "agent{i}"\nhost = "host{i}"\n\n{tail}'


class TwinFleet:
    """A shared origin and ``n`` machines, each with its own agent and host name, as ``clones.Fleet``."""

    def __init__(
        self,
        root: Path,
        n: int,
        inbox: str,
        *,
        extra: str = "",
        plans: dict[str, str] | None = None,
        config: str = "",
        clock: TwinClock | None = None,
        settle: float = 0,
    ) -> None:
        self.origin = MemoryOrigin(template_tree(inbox, plans, config))
        self.clock = clock or TwinClock()
        tail = f"{fake_profiles_config()}[inbox]\nsettle = {settle:g}\n\n{extra}"
        self.machines = [
            Machine(root / f"machine{i}", self.origin, machine_local(i, tail), self.clock) for i in range(n)
        ]

    def __getitem__(self, i: int) -> Machine:
        return self.machines[i]

    def tick(self, i: int = 0) -> PassReport:
        return self.machines[i].tick()

    def remote_text(self, rel: str = INBOX) -> str:
        return self.origin.tree(self.origin.tip)[rel].decode("utf-8", "replace")

    def remote_requests(self, rel: str = INBOX) -> dict[str, Request]:
        return {r.id: r for r in parse_note(rel, self.remote_text(rel).encode()).requests}

    def person_push(self, edit: Callable[[str], str], rel: str = INBOX, author: str = PERSON) -> str:
        """The person (or ``author``: an agent committing to the vault) edits the remote's note and pushes."""
        return self.origin.person_push({rel: edit(self.remote_text(rel)).encode()}, author=author)

    def runs(self) -> Counter[str]:
        """Runs (an agent's or a built-in check's) by request id, over every machine."""
        return Counter(job.request_id for m in self.machines for job in (*m.runner.jobs, *m.checks.jobs))

    def sent(self) -> list[str]:
        """The titles of the notices every machine's chat got, in order."""
        return [n.title for m in self.machines for n in m.chat.sent]


def alone(tmp_path: Path, inbox: str, extra: str = "") -> tuple[TwinFleet, Machine]:
    """One machine whose vault has no remote."""
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{inbox}", extra=extra)
    fleet[0].shared = False
    return fleet, fleet[0]


def answer(machine: Machine, rid: str, line: str) -> None:
    """The person types ``line`` at the end of the request's block, as in Obsidian."""
    lines = machine.text().splitlines()
    lines.insert(machine.requests()[rid].last_line + 1, line)
    machine.save(INBOX, "\n".join(lines) + "\n")
