"""Daemon benchmarks: how soon a saved request is claimed, against polling; and what the daemon costs idle."""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAKE_AGENT = HERE.parent / "fixtures" / "bin" / "fake-agent"
PROFILES = "".join(
    f'[profiles.{n}]\ncommand = ["{FAKE_AGENT}", "{{prompt}}"]\noutput = "text"\nhealth = []\n'
    'gate = "none"\n\n'  # a fake agent: nothing to gate, said knowingly
    for n in ("worker-code", "worker-research")
)


def _setup(make, root: Path) -> Path:  # type: ignore[no-untyped-def]
    inbox = "# Inbox\n\n" + "".join(
        f"## REQ-old-{i}\nDone long ago.\n- status: done @ t\n\n" for i in range(20)
    )
    vault = make(root, inbox)
    (vault / ".vaultops" / "local.toml").write_text(PROFILES + "[inbox]\nsettle = 0\n")
    return vault


def _latencies(vault: Path, n: int) -> list[float]:
    """Append n requests as an editor saves them; time from the end of each save to its lock line."""
    inbox = vault / "_System" / "COO-Inbox.md"
    out = []
    for i in range(n):
        rid = f"REQ-lat-{time.time_ns()}"
        text = (
            inbox.read_bytes() + f"\n## {rid}\n- type: research\n- ready: yes\nSummarise note {i}.\n".encode()
        )
        marker = f"## {rid}\n- type: research\n- ready: yes\nSummarise note {i}.\n- locked-by:".encode()
        with inbox.open("wb") as fh:
            fh.write(text)
        saved = time.perf_counter()
        while marker not in inbox.read_bytes():
            if time.perf_counter() - saved > 10:
                raise SystemExit(f"{rid} was not claimed within 10 s")
            time.sleep(0.0005)
        out.append(time.perf_counter() - saved)
        time.sleep(0.15)  # let its job finish and its result be written
    return out


def _wait_ready(vault: Path) -> None:
    log = vault / ".vaultops" / "state" / "logs" / "daemon.jsonl"
    deadline = time.monotonic() + 30
    while not (log.exists() and '"event": "ready"' in log.read_text()):
        if time.monotonic() > deadline:
            raise SystemExit("the daemon did not start")
        time.sleep(0.05)
    time.sleep(0.5)


def latency(make, n: int) -> tuple[list[float], list[float]]:  # type: ignore[no-untyped-def]
    """(daemon latencies, polling-baseline latencies): the baseline runs a pass every 0.5 s."""
    with tempfile.TemporaryDirectory() as tmp:
        vault = _setup(make, Path(tmp) / "v")
        proc = subprocess.Popen(
            [sys.executable, "-m", "vaultops", "--vault", str(vault), "run"], stderr=subprocess.DEVNULL
        )
        try:
            _wait_ready(vault)
            daemon = _latencies(vault, n)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    with tempfile.TemporaryDirectory() as tmp:
        vault = _setup(make, Path(tmp) / "v")
        from vaultops.engine.tick import tick
        from vaultops.vault import Vault

        stop = threading.Event()
        v = Vault.open(vault)

        def poll() -> None:  # what a cron-style setup does, at a brisk 0.5 s
            while not stop.is_set():
                tick(v, wait_settle=False)
                stop.wait(0.5)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        try:
            baseline = _latencies(vault, max(10, n // 3))
        finally:
            stop.set()
            poller.join(timeout=30)
    return daemon, baseline


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def idle(make, seconds: float) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(percent of one core, RSS in MB) of a daemon with nothing to do, over ``seconds``."""
    with tempfile.TemporaryDirectory() as tmp:
        vault = _setup(make, Path(tmp) / "v")
        proc = subprocess.Popen(
            [sys.executable, "-m", "vaultops", "--vault", str(vault), "run"], stderr=subprocess.DEVNULL
        )
        try:
            _wait_ready(vault)
            time.sleep(1.0)
            before = _cpu_seconds(proc.pid)
            start = time.monotonic()
            time.sleep(seconds)
            used = _cpu_seconds(proc.pid) - before
            rss = _rss_mb(proc.pid)
            return 100 * used / (time.monotonic() - start), rss
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)


def pct(values: list[float], q: float) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]
    )


Report = Callable[[str, float, float, str], None]
