"""How much a cold ``vaultops`` costs before it does anything: start-up of the commands run most often.

    .venv/bin/python benchmarks/startup.py [--runs N]

Each figure is the median wall time of N fresh processes (interleaved, so that a busy moment of the machine
falls on every command alike), beside a baseline measured in the same run, a bare ``python -c pass``:

- ``vaultops hook``: the policy gate's hook as ``init --claude`` wires it (``sh -c`` of that command, as
  Claude Code runs it), one PreToolUse event on stdin; Claude Code pays this before every tool call, and
  the goal is p50 <= 50 ms.  Also as the console script, ``vaultops --vault V hook``;
- ``vaultops --help``: the parser alone;
- ``vaultops status``: a small vault (the template's inbox), its rows cached after the first run;
- ``import vaultops``: the package alone (what a library user pays before the first call).
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vaultops.commands.hook import hook_command

REPO = Path(__file__).resolve().parent.parent


def timed(argv: list[str], data: bytes) -> float:
    start = time.perf_counter()
    subprocess.run(argv, input=data, capture_output=True, check=False)
    return (time.perf_counter() - start) * 1000


def vaultops_argv() -> list[str]:
    """The console script next to this Python (what a person runs), else ``python -m vaultops``."""
    script = Path(sys.executable).parent / "vaultops"
    return [str(script)] if script.exists() else [sys.executable, "-m", "vaultops"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(REPO / "vault-template", vault)
        work = Path(tmp) / "work"
        work.mkdir()
        event = {
            "session_id": "bench", "transcript_path": "/dev/null", "cwd": str(work),
            "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls -la"},
            "tool_use_id": "toolu_1",
        }  # fmt: skip
        data = json.dumps(event).encode()
        program = vaultops_argv()
        cases = {
            "baseline: python -c pass": [sys.executable, "-c", "pass"],
            "vaultops hook (as wired)": ["sh", "-c", hook_command(vault)],
            "vaultops --vault V hook": [*program, "--vault", str(vault), "hook"],
            "vaultops --help": [*program, "--help"],
            "vaultops status": [*program, "--vault", str(vault), "status"],
            "python -c 'import vaultops'": [sys.executable, "-c", "import vaultops"],
        }
        for argv in cases.values():  # warm the file cache, and status's row cache
            subprocess.run(argv, input=data, capture_output=True, check=False)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, argv in cases.items():
                times[name].append(timed(argv, data))
    base = statistics.median(times["baseline: python -c pass"])
    print(f"{'start-up (median of ' + str(args.runs) + ')':<32} {'ms':>8} {'×base':>7}")
    for name in cases:
        p50 = statistics.median(times[name])
        print(f"{name:<32} {p50:8.1f} {p50 / base:7.2f}")
    print(f"({shlex.join(program)} …; goal for the hook: p50 <= 50 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
