"""vaultops benchmarks: one command, ratios against a baseline measured in the same run.

    .venv/bin/python benchmarks/run.py [--quick]

The baseline is markdown-it-py parsing the same inbox (what a straightforward implementation would do).
Each figure is the median of several runs; the machine is shared, so read ratios, not absolute times.
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
sys.path.insert(0, str(HERE))

from inbox_gen import inbox  # noqa: E402

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def median_time(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def make_vault(root: Path, text: str) -> Path:
    shutil.copytree(REPO / "vault-template", root)
    (root / "_System" / "COO-Inbox.md").write_text(text)
    (root / ".vaultops" / "local.toml").write_text("[inbox]\nsettle = 0\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=GIT_ENV)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=root, check=True, env=GIT_ENV)
    return root


def cli(vault: Path, *args: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "vaultops", "--vault", str(vault), *args],
        capture_output=True,
        text=True,
        env=GIT_ENV,
    )
    if proc.returncode != 0:
        raise SystemExit(f"vaultops {' '.join(args)} failed: {proc.stderr}")


def row(label: str, seconds: float, baseline: float, target: str = "") -> None:
    shown = f"{seconds * 1000:7.1f} ms" if seconds < 0.1 else f"{seconds:7.3f} s "
    print(f"{label:<56} {shown}  (ratio {seconds / baseline:5.2f})  {target}".rstrip())


def light_block(i: int) -> str:
    return f"## REQ-bench-{i:05d}\n- type: env-check\n- ready: yes\nIs git installed? `which git`\n\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument(
        "--only",
        choices=["engine", "dispatch", "daemon", "claims", "bus", "approve", "dashboard", "worktree"],
        help="one section",
    )
    args = parser.parse_args()
    runs = 3 if args.quick else 7
    sections = {
        "engine": lambda: engine(args.quick, runs),
        "dispatch": lambda: dispatch_section(args.quick),
        "daemon": lambda: daemon_section(args.quick),
        "claims": lambda: claims_section(args.quick),
        "bus": lambda: bus_section(args.quick),
        "approve": lambda: approve_section(args.quick),
        "dashboard": lambda: dashboard_section(args.quick),
        "worktree": lambda: worktree_section(args.quick),
    }
    for name, section in sections.items():
        if args.only in (None, name):
            section()


def engine(quick: bool, runs: int) -> None:

    from markdown_it import MarkdownIt

    from vaultops.commands.status import request_rows
    from vaultops.engine.tick import tick
    from vaultops.vault import Vault

    text = inbox(10_000)
    size = len(text.encode()) / 1e6
    md = MarkdownIt("commonmark")
    baseline = median_time(lambda: md.parse(text), max(3, runs // 2))
    print(f"inbox: 10,000 requests, {size:.1f} MB")
    row("baseline  markdown-it-py parse of that inbox", baseline, baseline)

    with tempfile.TemporaryDirectory() as tmp:
        vault_dir = make_vault(Path(tmp) / "v", text)
        vault = Vault.open(vault_dir)
        inbox_path = vault_dir / "_System" / "COO-Inbox.md"

        def touch_inbox() -> None:  # a person's edit: the next status must read the note again
            with inbox_path.open("a") as fh:
                fh.write("\n")

        def cold_status() -> None:
            touch_inbox()
            cli(vault_dir, "status", "--json")

        middle = text.index("## REQ-", len(text) // 2)
        edits = iter(range(1_000_000))

        def edit_middle() -> None:  # a person's edit half-way down: one request's text changes
            raw = inbox_path.read_bytes()
            at = raw.index(b"\n", middle) + 1
            inbox_path.write_bytes(raw[:at] + b"- from: edit-%d\n" % next(edits) + raw[at:])
            cli(vault_dir, "status", "--json")

        lib = median_time(lambda: (touch_inbox(), request_rows(vault)), runs)
        cold = median_time(cold_status, runs)
        warm = median_time(lambda: cli(vault_dir, "status", "--json"), runs)
        mid = median_time(edit_middle, runs)
        row("status    library call, inbox changed since last asked", lib, baseline)
        row("status    `vaultops status --json`, inbox changed", cold, baseline, "target <= 0.3 s")
        row("status    `vaultops status --json`, mid-inbox edit", mid, baseline, "target <= 0.3 s")
        row("status    `vaultops status --json`, inbox unchanged", warm, baseline, "target <= 0.3 s")

        ticks = []
        for i in range(runs):
            with (vault_dir / "_System" / "COO-Inbox.md").open("a") as fh:
                fh.write(light_block(i))
            start = time.perf_counter()
            cli(vault_dir, "tick")
            ticks.append(time.perf_counter() - start)
        one = statistics.median(ticks)
        row("tick      one new request in that inbox, whole process", one, baseline, "target <= 0.5 s")

    with tempfile.TemporaryDirectory() as tmp:
        many = "# Inbox\n\n" + "".join(light_block(i) for i in range(1000))
        vault_dir = make_vault(Path(tmp) / "v", many)
        start = time.perf_counter()
        report = tick(Vault.open(vault_dir))
        took = time.perf_counter() - start
        done = sum(1 for _, state, _ in report.outcomes if state == "done")
        writes = report.written
        row("tick      1,000 light requests in one pass", took, baseline, "target <= 10 s")
        print(f"          {done} done, notes written once each: {', '.join(writes)}")


def dispatch_section(quick: bool) -> None:
    import dispatch

    total, child, bare = dispatch.overhead(make_vault, 100 if quick else 300)
    print()
    row("dispatch  bare subprocess.run(['true']) (baseline)", bare, bare)
    row("dispatch  one job through Dispatcher.run, no-op command", total, bare)
    row("dispatch  overhead beyond the child's own run time", total - child, bare, "target <= 15 ms")
    ideal = 100 / 3 * 0.2
    took = dispatch.concurrency(make_vault)
    row("tick      100 jobs of 0.2 s, 3 at a time (ideal 6.67 s)", took, ideal, "target within 10 % of ideal")


def daemon_section(quick: bool) -> None:
    import daemon

    fast, slow = daemon.latency(make_vault, 20 if quick else 60)
    base50, base95 = daemon.pct(slow, 50), daemon.pct(slow, 95)
    print()
    row("daemon    save -> lock line, polling every 0.5 s, p50 (baseline)", base50, base50)
    row("daemon    save -> lock line, polling every 0.5 s, p95", base95, base50)
    row("daemon    save -> lock line, `vaultops run`, p50", daemon.pct(fast, 50), base50, "target <= 25 ms")
    row("daemon    save -> lock line, `vaultops run`, p95", daemon.pct(fast, 95), base50, "target <= 60 ms")
    cpu, rss = daemon.idle(make_vault, 15.0 if quick else 60.0)
    print(
        f"daemon    idle over {15 if quick else 60} s: {cpu:.3f} % of one core (target <= 0.1 %), "
        f"{rss:.0f} MB RSS (target <= 60 MB)"
    )


def approve_section(quick: bool) -> None:
    import approve

    pressed, ran, typed, typed_ran = approve.measure(5 if quick else 15)
    med = statistics.median
    print()
    row("approve   note save -> approved line, p50 (baseline)", med(typed), med(typed))
    row("approve   Telegram button press -> decision line, p50", med(pressed), med(typed))
    row("approve   note save -> the approved job ran, p50 (baseline)", med(typed_ran), med(typed_ran))
    row("approve   Telegram button press -> the approved job ran, p50", med(ran), med(typed_ran))


def dashboard_section(quick: bool) -> None:
    import dashboard

    t = dashboard.measure(10_000, 3 if quick else 7)
    print()
    row("dashboard one pass's parse of a 10,000-request inbox (baseline)", t["parse"], t["parse"])
    row("dashboard render_dashboard alone", t["render"], t["parse"])
    row("dashboard the whole stage, inbox unchanged", t["show_unchanged"], t["parse"])
    row("dashboard the whole stage, inbox just saved", t["show_changed"], t["parse"])


def worktree_section(quick: bool) -> None:
    import worktree

    t = worktree.measure(5000, 3 if quick else 7)
    print()
    row("worktree  copying a 5,000-file repository's files (baseline)", t["copy"], t["copy"])
    row("worktree  a code job's new worktree and branch", t["setup"], t["copy"])
    row("worktree  finding it again on a retry", t["reuse"], t["copy"])


def claims_section(quick: bool) -> None:
    import claims

    raw = claims.raw_push_rate(make_vault, GIT_ENV, 20 if quick else 50)
    requests = 30 if quick else 90
    print()
    print(f"claims    git commit + push to a bare remote (baseline)        {raw:6.1f} /s  (ratio  1.00)")
    for machines in (1, 2, 3):
        rate, retries = claims.claim_rate(make_vault, GIT_ENV, machines, requests)
        who = f"{machines} machine{'s' if machines > 1 else ' '} competing"
        print(
            f"claims    {who}, {requests} requests claimed and done  {rate:6.1f} /s  "
            f"(ratio {rate / raw:5.2f})  claim pushes that lost the race: {retries}"
        )


def bus_section(quick: bool) -> None:
    import bus

    print()
    bus.report(2000 if quick else 10_000)
    with tempfile.TemporaryDirectory() as tmp:
        vault_dir = make_vault(Path(tmp) / "v", "# Inbox\n")
        bus.report_cli(vault_dir, 5 if quick else 20)


if __name__ == "__main__":
    main()
