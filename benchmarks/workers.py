"""Worker spawn time: ``vaultops.workers.control.spawn`` (returns once the worker is running) against a
bare ``subprocess.Popen`` of the same command, measured in the same run.

    .venv/bin/python benchmarks/workers.py [--runs 20] [-- COMMAND …]

The default command is ``cat`` (it waits on its stdin, as a worker does).  spawn does more than Popen on
purpose: the checks (cap, overlap) in one state.db transaction, a FIFO, and a supervisor process that
starts the command and records it as running; so read the ratio as the price of that, per worker.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from vaultops.vault import Vault  # noqa: E402
from vaultops.workers import control  # noqa: E402


def bare(command: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, start_new_session=True
        )
        times.append(time.perf_counter() - start)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return times


def spawned(command: list[str], runs: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(REPO / "vault-template", root)
        (root / ".vaultops" / "local.toml").write_text("[workers]\nmax = 64\n")
        vault = Vault.open(root)
        times = []
        for i in range(runs):
            start = time.perf_counter()
            worker = control.spawn(vault, f"bench{i}", command, dir=root, files=[f"b{i}/*"], environ={})
            times.append(time.perf_counter() - start)
            assert worker.state == "running", worker
            control.terminate(vault, worker.name, grace=2)
        return times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("command", nargs="*", default=["cat"])
    args = parser.parse_args()
    command = [c for c in args.command if c != "--"] or ["cat"]
    base = bare(command, args.runs)
    ours = spawned(command, args.runs)
    b, o = statistics.mean(base), statistics.mean(ours)
    print(f"command: {' '.join(command)}; {args.runs} runs each")
    print(f"bare Popen:           mean {b * 1000:8.2f} ms  median {statistics.median(base) * 1000:8.2f} ms")
    print(f"worker spawn→running: mean {o * 1000:8.2f} ms  median {statistics.median(ours) * 1000:8.2f} ms")
    print(f"ratio (spawn / Popen): {o / b:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
