"""The bus: messages per second through send + inbox + ack on one state.db, beside raw sqlite doing the
same three statements (INSERT, SELECT, UPDATE) on a table of the same shape, in the same run.

    .venv/bin/python benchmarks/bus.py [--messages N]

Two shapes: one message at a time (send one, read an inbox of one, ack it: the latency a worker sees), and
in batches (send 50, read them in one inbox, ack each: a worker catching up).  The baseline commits each
statement as the bus does (WAL, synchronous=NORMAL, the same as state.db); the bus adds its checks, an
ordered select by priority and a BEGIN IMMEDIATE transaction around each inbox read.
"""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from vaultops.bus import Bus  # noqa: E402
from vaultops.store.state import StateDB  # noqa: E402

BATCH = 50


def bus_rate(root: Path, messages: int, batch: int) -> float:
    state = StateDB(root / "bus.db")
    bus = Bus(state)
    start = time.perf_counter()
    done = 0
    while done < messages:
        for _ in range(batch):
            bus.send("orch", "w1", "check the build and report")
        got = bus.inbox("w1", limit=batch)
        for message in got:
            bus.ack("w1", message.id)
        done += len(got)
    took = time.perf_counter() - start
    state.close()
    return messages / took


def raw_rate(root: Path, messages: int, batch: int) -> float:
    db = sqlite3.connect(root / "raw.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(
        "CREATE TABLE m (id INTEGER PRIMARY KEY, sender TEXT, recipient TEXT, text TEXT, priority TEXT,"
        " sent_at REAL, delivered_at REAL, deliveries INTEGER DEFAULT 0, acked_at REAL)"
    )
    db.execute("CREATE INDEX m_pending ON m (recipient) WHERE acked_at IS NULL")  # as state.db's bus table
    start = time.perf_counter()
    done = 0
    while done < messages:
        for _ in range(batch):
            db.execute(
                "INSERT INTO m (sender, recipient, text, priority, sent_at) VALUES (?, ?, ?, ?, ?)",
                ("orch", "w1", "check the build and report", "normal", time.time()),
            )
        rows = db.execute(
            "SELECT id FROM m WHERE recipient = ? AND acked_at IS NULL LIMIT ?", ("w1", batch)
        ).fetchall()
        for (ident,) in rows:
            db.execute("UPDATE m SET acked_at = ? WHERE id = ?", (time.time(), ident))
        done += len(rows)
    took = time.perf_counter() - start
    db.close()
    return messages / took


def measure(messages: int) -> list[tuple[str, float, float]]:
    """(shape, bus messages/s, raw sqlite messages/s) for each shape, each in a fresh folder."""
    out = []
    for label, batch in (("one at a time", 1), (f"in batches of {BATCH}", BATCH)):
        with tempfile.TemporaryDirectory() as tmp:
            raw = raw_rate(Path(tmp), messages, batch)
            bus = bus_rate(Path(tmp), messages, batch)
        out.append((label, bus, raw))
    return out


def cli_rate(vault: Path, messages: int) -> tuple[float, float]:
    """Messages per second through the command line, as a worker uses it (three processes a message:
    send, inbox, inbox --ack), and the rate of three bare ``python -c pass`` starts as the baseline."""

    def run(*args: str) -> str:
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout

    vaultops = [sys.executable, "-m", "vaultops", "--vault", str(vault), "bus"]
    start = time.perf_counter()
    for _ in range(messages):
        run(*vaultops, "send", "w1", "check the build")
        first = run(*vaultops, "inbox", "--as", "w1").splitlines()[0]  # "#ID priority from ..."
        run(*vaultops, "inbox", "--as", "w1", "--ack", first.split()[0].lstrip("#"))
    cli = messages / (time.perf_counter() - start)
    start = time.perf_counter()
    for _ in range(messages * 3):
        run(sys.executable, "-c", "pass")
    return cli, messages / (time.perf_counter() - start)


def report(messages: int) -> None:
    print(f"bus       {messages} messages through send + inbox + ack on one state.db")
    for label, bus, raw in measure(messages):
        print(f"bus       raw sqlite INSERT+SELECT+UPDATE, {label:<18} {raw:8.0f} /s  (ratio  1.00)")
        print(f"bus       Bus.send+inbox+ack, {label:<18}            {bus:8.0f} /s  (ratio {bus / raw:5.2f})")


def report_cli(vault: Path, messages: int) -> None:
    cli, bare = cli_rate(vault, messages)
    print(f"bus       3 bare `python -c pass` starts per message (baseline)    {bare:8.1f} /s  (ratio  1.00)")
    label = "`vaultops bus send`, `inbox`, `inbox --ack`, per message"
    print(f"bus       {label} {cli:8.1f} /s  (ratio {cli / bare:5.2f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=5000)
    report(parser.parse_args().messages)
