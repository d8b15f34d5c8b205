"""``vaultops bus send|inbox|log``: the glue between the command line and ``vaultops.bus``.

Each function takes the vault folder and plain values and returns a ``Output`` (the JSON document and the
human lines), so the CLI only picks one of the two to print.  None reads the configuration: a worker may run
these in a loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from vaultops.base.errors import VaultopsError
from vaultops.base.layout import STATE_DB as STATE_DB  # re-exported: where the bus's CLI looks
from vaultops.base.layout import require_dot_dir
from vaultops.bus import Bus, BusError, Message, whoami
from vaultops.commands.output import Output
from vaultops.store.state import StateDB, StateError, StateOperationalError


@contextmanager
def open_bus(root: Path, clock: Callable[[], float] | None = None) -> Iterator[Bus]:
    """The bus in the vault's state.db; a folder without ``.vaultops/`` is refused rather than given a
    state.db of its own."""
    path = require_dot_dir(root) / STATE_DB
    try:
        state = StateDB(path)
    except (OSError, StateError) as exc:
        raise VaultopsError(f"cannot open {path}: {exc}; check its permissions") from exc
    try:
        yield Bus(state) if clock is None else Bus(state, clock)
    except StateOperationalError as exc:  # e.g. another process held the write lock past the timeout
        raise VaultopsError(f"{path} is busy or unwritable ({exc}); try again in a moment") from exc
    finally:
        state.close()


def _when(at: float | None) -> str:
    return "-" if at is None else datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S")


def _indent(text: str) -> list[str]:
    return ["    " + line for line in text.splitlines() or [""]]


def send(
    root: Path, environ: Mapping[str, str], to: str, text: str, priority: str, as_name: str | None
) -> Output:
    sender = whoami(environ, as_name)
    with open_bus(root) as bus:
        message = bus.send(sender, to, text, priority)
    return Output([f"sent #{message.id} to {to} ({priority})"], {"message": message.as_json()})


def inbox(root: Path, environ: Mapping[str, str], as_name: str | None, limit: int) -> Output:
    name = whoami(environ, as_name)
    with open_bus(root) as bus:
        messages = bus.inbox(name, limit)
    lines: list[str] = []
    for m in messages:
        again = f", delivery {m.deliveries}" if m.deliveries > 1 else ""
        lines.append(f"#{m.id} {m.priority} from {m.sender} at {_when(m.sent_at)}{again}")
        lines += _indent(m.text)
    if messages:
        lines.append(
            f"ack each when done: vaultops bus inbox --ack ID{'' if as_name is None else ' --as ' + name}"
        )
    else:
        lines.append(f"no new messages for {name}")
    return Output(lines, {"name": name, "messages": [m.as_json() for m in messages]})


def ack(root: Path, environ: Mapping[str, str], as_name: str | None, ids: list[int]) -> Output:
    """Ack every id; an id already acked by ``name`` is fine (acking is idempotent), one that is not
    ``name``'s or does not exist is an error, after the others are acked."""
    name = whoami(environ, as_name)
    acked: list[int] = []
    already: list[int] = []
    problems: list[str] = []
    with open_bus(root) as bus:
        for ident in ids:
            if bus.ack(name, ident):
                acked.append(ident)
                continue
            found: Message | None = bus.get(ident)
            if found is None:
                problems.append(f"there is no message #{ident}")
            elif found.to != name:
                problems.append(
                    f"message #{ident} is for {found.to}, not {name}; only its recipient can ack it"
                )
            else:
                already.append(ident)
    if problems:
        raise BusError("; ".join(problems))
    lines = [f"acked #{i}" for i in acked] + [f"#{i} was already acked" for i in already]
    return Output(lines, {"name": name, "acked": acked, "already_acked": already})


def log(root: Path, name: str | None, limit: int) -> Output:
    with open_bus(root) as bus:
        messages = bus.log(name, limit)
    lines: list[str] = []
    for m in messages:
        sent = _when(m.sent_at)
        acked = f"acked {_when(m.acked_at)}" if m.acked_at is not None else "not acked"
        lines.append(f"#{m.id} {sent} {m.sender} -> {m.to} {m.priority}, delivered {m.deliveries}x, {acked}")
        lines += _indent(m.text)
    return Output(lines or ["no messages"], {"messages": [m.as_json() for m in messages]})
