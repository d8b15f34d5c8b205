"""Dispatch benchmarks: the cost of vaultops around a job, and how well it keeps max_concurrent busy."""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from datetime import datetime
from pathlib import Path

from vaultops.engine.tick import tick
from vaultops.run.dispatch import Dispatcher
from vaultops.run.jobs import Job
from vaultops.store.state import StateDB
from vaultops.vault import Vault


def _vault(root: Path, make, inbox: str, profile: str) -> Vault:  # type: ignore[no-untyped-def]
    vault_dir = make(root, inbox)
    with (vault_dir / ".vaultops" / "local.toml").open("a") as fh:
        fh.write(profile)
    return Vault.open(vault_dir)


def overhead(make, runs: int) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    """(mean dispatch time, mean child time as its process saw it, mean bare subprocess.run time)."""
    profile = (
        '\n[profiles.noop]\ncommand = ["true"]\ntimeout = 10\nhealth = []\n\n[routing]\ndefault = ["noop"]\n'
    )
    with tempfile.TemporaryDirectory() as tmp:
        vault = _vault(Path(tmp) / "v", make, "# Inbox\n", profile)
        state = StateDB(vault.state_dir / "state.db")
        dispatcher = Dispatcher(vault, state, [])
        totals, children = [], []
        for i in range(runs):
            job = Job("i.md", f"REQ-{i}", "t", "Run it.", "code", f"{i:06x}", "noop", None, ("noop",))
            start = time.perf_counter()
            done = dispatcher.run(job, datetime.now().astimezone())
            totals.append(time.perf_counter() - start)
            children.append(done.attempts[0].duration)
        state.close()
    bare = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(["true"], check=True)
        bare.append(time.perf_counter() - start)
    return statistics.mean(totals), statistics.mean(children), statistics.mean(bare)


def concurrency(make, jobs: int = 100, each: float = 0.2, at_once: int = 3) -> float:  # type: ignore[no-untyped-def]
    """Seconds for one pass over ``jobs`` heavy requests that each sleep ``each`` seconds."""
    inbox = "# Inbox\n\n" + "".join(
        f"## REQ-{i:03d}\n- type: code\n- ready: yes\nWrite script {i}.\n\n" for i in range(jobs)
    )
    profile = (
        f'\n[profiles.sleeper]\ncommand = ["sleep", "{each}"]\ntimeout = 10\nhealth = []\n\n'
        f'[routing]\ncode = ["sleeper"]\n\n[limits]\nmax_concurrent = {at_once}\n'
    )
    with tempfile.TemporaryDirectory() as tmp:
        vault = _vault(Path(tmp) / "v", make, inbox, profile)
        start = time.perf_counter()
        report = tick(vault)
        took = time.perf_counter() - start
        assert sum(1 for _, s, _ in report.outcomes if s == "done") == jobs, report.outcomes[:3]
    return took
