"""What the sandbox costs per command: the same command fenced and not, in the same run.

    .venv/bin/python benchmarks/sandbox.py [runs]

1. A review check's way (vaultops calls bubblewrap itself, ``vaultops.hook.fence.fenced_argv``): ``true``
   and ``python -c pass``, each ``runs`` times plain and fenced; p50 and p90 of each, and their ratio.
2. An agent's way (Claude Code's own sandbox, in the job's settings): the real CLI offline, against the
   fake Messages API of the tests, running 10 Bash calls of ``true`` in one job, with and without the
   ``sandbox`` block; the added time per command is the difference of the p50s over 10.  Skipped, saying
   so, where the CLI is not installed (scripts/install-claude).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.claude_cli import claude_bin, claude_env  # noqa: E402
from tests.support.fake_anthropic import FakeAnthropic, Text, ToolUse  # noqa: E402
from vaultops.hook.fence import fence_for, fenced_argv, sandbox_problem  # noqa: E402
from vaultops.hook.sandbox import claude_settings  # noqa: E402

CALLS = 10


def timed(argv: Sequence[str], runs: int, cwd: Path) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def p(times: list[float], q: int) -> float:
    return statistics.quantiles(times, n=100)[q - 1] if len(times) > 1 else times[0]


def row(name: str, plain: list[float], fenced: list[float]) -> None:
    a, b = p(plain, 50), p(fenced, 50)
    print(f"{name:<28} plain p50 {a * 1000:7.1f} ms  fenced p50 {b * 1000:7.1f} ms  "
          f"(p90 {p(plain, 90) * 1000:.1f} / {p(fenced, 90) * 1000:.1f})  ratio {b / a:5.2f}x  "
          f"+{(b - a) * 1000:.1f} ms")  # fmt: skip


def checks_way(runs: int, work: Path) -> None:
    fence = fence_for(work, work / "no-vault")
    tmp = work / "tmp"
    tmp.mkdir()
    for name, argv in (("true", ["true"]), ("python -c pass", [sys.executable, "-c", "pass"])):
        plain = timed(argv, runs, work)
        fenced = timed(fenced_argv(fence, argv, tmp), runs, work)
        row(f"check: {name}", plain, fenced)


def agent_way(runs: int, work: Path) -> None:
    cli = claude_bin()
    if cli is None:
        print("agent: skipped, the Claude Code CLI is not installed (scripts/install-claude)")
        return
    fence = fence_for(work, work / "no-vault")
    results: dict[bool, list[float]] = {True: [], False: []}
    for i in range(runs):
        for sandboxed in (False, True):
            settings = {"sandbox": claude_settings(fence)} if sandboxed else {}
            path = work / f"settings-{i}-{sandboxed}.json"
            path.write_text(json.dumps(settings))
            with FakeAnthropic() as api:
                api.script(*(ToolUse("Bash", {"command": "true"}) for _ in range(CALLS)), Text("done"))
                env = claude_env(api.base_url, work / f"cc-{i}-{sandboxed}")
                argv = [cli, "--settings", str(path), "--setting-sources", "user", "-p", "go",
                        "--output-format", "json", "--dangerously-skip-permissions"]  # fmt: skip
                start = time.perf_counter()
                subprocess.run(argv, cwd=work, env=env, check=True, capture_output=True, timeout=300)
                results[sandboxed].append(time.perf_counter() - start)
    plain, fenced = results[False], results[True]
    row(f"agent: a job of {CALLS} Bash calls", plain, fenced)
    added = (p(fenced, 50) - p(plain, 50)) / CALLS
    print(f"agent: the sandbox adds {added * 1000:.1f} ms per Bash command at p50 ({runs} jobs each way)")


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    if problem := sandbox_problem():
        print(f"no sandbox on this machine: {problem}")
        return
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        checks_way(runs, work)
        agent_way(max(3, runs // 6), work)


if __name__ == "__main__":
    main()
