"""A plan note run by a worker, through the real daemon: how long from the worker printing ``[DONE:…]`` to
``- status: done`` in the note, against the supervisor recording that line in state.db (the earliest the
daemon could know), measured in the same run.  Also: plan note saved → worker running and said so.

    .venv/bin/python benchmarks/plan_workers.py [--runs 10]

The daemon is woken by the supervisor's mark in state.db, which its loop reads at least every 0.5 s; the
ratio shows what that wake-up, the pass, the result write and the commit add per DONE.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from vaultops.store.state import StateDB  # noqa: E402
from vaultops.vault import Vault  # noqa: E402
from vaultops.workers import control  # noqa: E402

FAKE_WORKER = REPO / "fixtures" / "bin" / "fake-worker"
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid"}
GIT_ENV |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}


def wait(test: Callable[[], bool], timeout: float = 30.0) -> float:
    """Poll every 2 ms; the time it first held."""
    deadline = time.monotonic() + timeout
    while not test():
        if time.monotonic() > deadline:
            raise SystemExit("timed out: the daemon did not get there")
        time.sleep(0.002)
    return time.perf_counter()


def reported(db: Path, name: str) -> bool:
    state = StateDB(db)
    try:
        return any(e["detail"].get("worker") == name for e in state.events("worker_report"))
    finally:
        state.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    env = {**os.environ, **GIT_ENV, "VAULTOPS_WORKER": ""}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(REPO / "vault-template", root)
        for old in (root / "executor-queue").glob("*.md"):
            old.unlink()
        (root / ".vaultops" / "local.toml").write_text(
            f'[profiles.worker-research]\ncommand = ["{FAKE_WORKER}"]\noutput = "text"\nhealth = []\n'
            "[inbox]\nsettle = 0\n[daemon]\nreconcile = 600\n[workers]\nmax = 64\n"
        )
        for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
            subprocess.run(["git", *argv], cwd=root, env=env, check=True)
        vault = Vault.open(root)
        db = root / ".vaultops" / "state" / "state.db"
        log = root / ".vaultops" / "state" / "logs" / "daemon.jsonl"
        daemon = subprocess.Popen(
            [sys.executable, "-m", "vaultops", "--vault", str(root), "run"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started, recorded, done = [], [], []
        try:
            wait(lambda: log.exists() and '"event": "ready"' in log.read_text())
            for i in range(args.runs):
                note = root / "executor-queue" / f"w{i}.md"
                t0 = time.perf_counter()
                note.write_text(f"---\ntype: research\nworker: w{i}\n---\nSummarise part {i}.\n")
                started.append(wait(lambda note=note: "works on it" in note.read_text()) - t0)
                t0 = time.perf_counter()
                control.inject(vault, f"w{i}", "say [DONE:ok] finished")
                recorded.append(wait(lambda i=i: reported(db, f"w{i}")) - t0)
                done.append(wait(lambda note=note: "- status: done" in note.read_text()) - t0)
        finally:
            daemon.terminate()
            daemon.wait(timeout=60)
            for worker in control.list_workers(vault, commits=False):
                if worker["state"] in ("starting", "running"):
                    control.terminate(vault, worker["name"], grace=1)

    def ms(xs: list[float]) -> str:
        return f"median {statistics.median(xs) * 1000:7.1f} ms  max {max(xs) * 1000:7.1f} ms"

    print(f"{args.runs} plan notes, each run by a worker (fixtures/bin/fake-worker)")
    print(f"note saved -> worker running, said in the note:  {ms(started)}")
    print(f"DONE printed -> report in state.db (baseline):  {ms(recorded)}")
    print(f"DONE printed -> '- status: done' in the note:   {ms(done)}")
    ratio = statistics.median(done) / statistics.median(recorded)
    print(f"ratio (note done / report recorded): {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
