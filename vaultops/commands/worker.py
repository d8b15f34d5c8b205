"""``vaultops worker spawn|list|inject|terminate|logs``: a thin shell over ``vaultops.workers.control``.

Imported when the parser is built, so it imports nothing but argparse at the top.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from vaultops.base.errors import VaultopsError


def add_worker_parser(sub: Any) -> None:
    """The ``worker`` subcommand and its actions, under the top-level parser's subparsers."""
    p = sub.add_parser("worker", help="long-lived worker sessions: spawn, list, inject, terminate, logs")
    actions = p.add_subparsers(dest="worker_command", required=True, metavar="ACTION")

    s = actions.add_parser(
        "spawn",
        help="start a worker: vaultops worker spawn NAME [options] -- COMMAND …",
        usage="vaultops worker spawn NAME [--dir DIR] [--files GLOB …] [--persona NAME] [--notify URL …] "
        "[--parent NAME] [--stream-json] -- COMMAND …",
    )
    s.add_argument("name", help="the worker's name (its folder, its bus inbox)")
    _spawn_options(s)
    # everything after the name, options included: argparse cannot tell a command's own options from ours
    # once a positional has started, so run() splits it at ``--`` and reads the part before it itself
    s.add_argument("rest", nargs=argparse.REMAINDER, help="[options] -- COMMAND …")

    s = actions.add_parser("list", help="every worker: name, state, pid, parent, age, dir, latest commit")
    s.add_argument("--json", action="store_true", help="print one JSON document")

    s = actions.add_parser("inject", help="write a line to a worker's stdin")
    s.add_argument("name")
    s.add_argument("text", help="what to write (- reads stdin)")
    s.add_argument(
        "--stream-json",
        action="store_true",
        default=None,
        help="wrap it as a Claude Code stream-json user message (default: as the worker was spawned)",
    )

    s = actions.add_parser("terminate", help="TERM to the worker's process group, then KILL")
    s.add_argument("name")
    s.add_argument("--grace", type=float, help="seconds between TERM and KILL (default: [workers] grace)")

    s = actions.add_parser("logs", help="the end of a worker's log")
    s.add_argument("name")
    s.add_argument("--lines", type=int, default=50, help="how many lines (default: 50)")
    s.add_argument("--raw", action="store_true", help="Claude Code's stream-json events as they were printed")
    p.set_defaults(func=run)


def _spawn_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--dir", help="where it runs (default: the current folder); inside [limits] allowed_roots")
    s.add_argument(
        "--files", nargs="+", action="extend", default=[], metavar="GLOB", help="the files it owns"
    )
    s.add_argument("--persona", help="the name its messages go out under")
    s.add_argument(
        "--notify", nargs="+", action="extend", default=[], metavar="URL", help="its own notifiers"
    )
    s.add_argument("--parent", default="person", help="who spawned it (default: person)")
    s.add_argument(
        "--stream-json",
        action="store_true",
        help="its stdin takes Claude Code stream-json (claude --input-format stream-json)",
    )
    s.add_argument("--prompt", help="its first message (on stdin, or {prompt} in a profile's command)")
    s.add_argument("--profile", help="take the command from [profiles.NAME] instead of after --")
    s.add_argument("--json", action="store_true", help="print one JSON document")


def spawn_arguments(args: argparse.Namespace) -> tuple[argparse.Namespace, list[str]]:
    """The spawn options (given before or after NAME) and the command after ``--``."""
    rest = list(args.rest)
    if "--" in rest:
        cut = rest.index("--")
        before, command = rest[:cut], rest[cut + 1 :]
    elif rest[:1] and rest[0].startswith("-"):
        before, command = rest, []  # options only: a --profile worker, or no command (spawn says so)
    else:
        before, command = [], rest
    later = argparse.ArgumentParser(prog="vaultops worker spawn NAME", add_help=False)
    _spawn_options(later)
    late, extra = later.parse_known_args(before)
    if extra:
        raise VaultopsError(
            f"{' '.join(extra)}: not a spawn option; put the command after --, "
            "e.g. `vaultops worker spawn NAME --dir DIR -- claude …`"
        )
    merged = argparse.Namespace(**vars(args))
    for key, value in vars(late).items():
        if value != later.get_default(key):
            current = getattr(merged, key)
            setattr(merged, key, current + value if isinstance(value, list) else value)
    return merged, command


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    if seconds < 172800:
        return f"{seconds / 3600:.0f}h"
    return f"{seconds / 86400:.0f}d"


def format_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no workers"
    head = ("NAME", "STATE", "PID", "PARENT", "AGE", "DIR", "COMMIT")
    body = []
    for r in rows:
        state = r["state"] + (f" ({r['exit_code']})" if r["exit_code"] is not None else "")
        pid = "" if r["pid"] is None else str(r["pid"])
        body.append((r["name"], state, pid, r["parent"], _age(r["age"]), r["dir"], r["commit"] or ""))
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [head, *body]
    )


def run(args: argparse.Namespace) -> int:
    from vaultops.vault import Vault
    from vaultops.workers import control

    vault = Vault.open(args.vault)
    action = args.worker_command
    if action == "spawn":
        args, command = spawn_arguments(args)
        worker = control.spawn(
            vault,
            args.name,
            command,
            dir=args.dir,
            files=args.files,
            persona=args.persona,
            notify=args.notify,
            parent=args.parent,
            stream_json=args.stream_json,
            prompt=args.prompt,
            profile=args.profile,
        )
        if args.json:
            doc = {"name": worker.name, "state": worker.state, "pid": worker.pid, "dir": worker.dir}
            sys.stdout.write(json.dumps(doc) + "\n")
        else:
            print(f"worker {worker.name} {worker.state} (pid {worker.pid}) in {worker.dir}")
    elif action == "list":
        rows = control.list_workers(vault, time.time())
        if args.json:
            sys.stdout.write(json.dumps({"workers": rows}, ensure_ascii=False) + "\n")
        else:
            print(format_table(rows))
    elif action == "inject":
        text = sys.stdin.read().rstrip("\n") if args.text == "-" else args.text
        control.inject(vault, args.name, text, stream_json=args.stream_json)
    elif action == "terminate":
        _, said = control.terminate(vault, args.name, args.grace)
        print(said)
    else:
        for line in control.worker_logs(vault, args.name, args.lines, raw=args.raw):
            print(line)
    return 0
