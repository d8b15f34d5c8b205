"""The command line: a thin shell over the library.  Every command is a call a Python user could make."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from vaultops.base.errors import VaultopsError

# vaultops loads no pydantic plugins; skipping their discovery saves a scan of every installed package.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def _vault(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from vaultops.vault import Vault

    return Vault.open(args.vault)


def cmd_init(args: argparse.Namespace) -> int:
    from vaultops.commands.scaffold import init_vault

    named = args.dir or args.vault
    done: list[str] = []
    if args.claude is None or named:  # `init --claude DIR` alone wires the hook and scaffolds no vault
        done = init_vault(Path(named or ".").expanduser())
    if args.claude is not None:
        from vaultops.commands.hook import hook_command
        from vaultops.commands.scaffold import wire_claude_hook

        project = Path(args.claude).expanduser()
        if not project.is_dir():
            raise VaultopsError(f"{project}: no such folder; pass the working directory Claude Code runs in")
        vault_text = named or os.environ.get("VAULTOPS_VAULT")
        vault = Path(vault_text).expanduser() if vault_text else None
        done += wire_claude_hook(project, hook_command(vault))
    for line in done or ["nothing to do: everything is already set up"]:
        print(line)
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    from vaultops.commands.hook import main as hook_main

    return hook_main(args.vault)


def cmd_submit(args: argparse.Namespace) -> int:
    from vaultops.commands.submit import submit
    from vaultops.decide.classify import TYPES

    if args.type and args.type not in TYPES:
        raise VaultopsError(f"unknown type {args.type!r}; use one of: {', '.join(TYPES)}")
    text = sys.stdin.read() if args.text == "-" else args.text
    ident = submit(_vault(args), text, args.type, args.id)
    print(ident)
    return 0


def cmd_tick(args: argparse.Namespace) -> int:
    from vaultops.pipeline.tick import tick

    report = tick(_vault(args), wait_settle=not args.no_wait)
    for rid, state, detail in report.outcomes:
        print(f"{rid}: {state}" + (f" — {detail}" if detail else ""))
    for line in report.settling:
        print(f"waiting: {line}")
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if report.commit:
        print(f"committed {report.commit[:10]}")
    if not report.outcomes and not report.settling:
        print("nothing to do")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from vaultops.watch.daemon import run_daemon

    return run_daemon(_vault(args))


def cmd_status(args: argparse.Namespace) -> int:
    from vaultops.commands.status import (
        format_profiles,
        format_table,
        profile_rows,
        request_rows,
        worker_rows,
    )

    vault = _vault(args)
    rows, warnings = request_rows(vault)
    profiles = profile_rows(vault)
    workers = worker_rows(vault)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        doc = {"requests": rows, "profiles": profiles, "workers": workers}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    else:
        print(format_table(rows))
        if profiles:
            print()
            print(format_profiles(profiles))
        if workers:
            from vaultops.commands.worker import format_table as format_workers

            print()
            print(format_workers(workers))
    return 0


def cmd_classify(args: argparse.Namespace) -> int:
    from vaultops.commands.classify import readable, report
    from vaultops.config import Config

    text = sys.stdin.read() if args.text == "-" else args.text
    try:
        vault = _vault(args)
        config = vault.config
    except VaultopsError:
        vault, config = None, Config()
    doc = report(text, args.type, config, vault)
    if args.json:
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    else:
        print("\n".join(readable(doc)))
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    import os

    from vaultops.commands.doctor import check

    problems, fine = check(Path(args.vault or os.environ.get("VAULTOPS_VAULT") or ".").expanduser())
    for line in fine:
        print(f"ok: {line}")
    for line in problems:
        print(f"problem: {line}")
    return 1 if problems else 0


def cmd_service(args: argparse.Namespace) -> int:
    from vaultops.service import install

    vault = Path(args.vault or os.environ.get("VAULTOPS_VAULT") or ".")
    if args.action == "status":
        state, lines = install.service_status(vault)
        print("\n".join(lines))
        return 0 if state == "active" else 3  # as `systemctl is-active` and LSB: 3 is "not running"
    act = install.install if args.action == "install" else install.uninstall
    print("\n".join(act(vault, dry_run=args.dry_run)))
    return 0


def cmd_bus(args: argparse.Namespace) -> int:
    from vaultops.commands import bus

    vault = bus.vault_root(args.vault, os.environ)  # not _vault(): the bus needs no configuration
    if args.bus_command == "send":
        text = sys.stdin.read() if args.text == "-" else args.text
        doc, lines = bus.send(vault, os.environ, args.to, text, args.priority, args.as_name)
    elif args.bus_command == "inbox" and args.ack:
        doc, lines = bus.ack(vault, os.environ, args.as_name, args.ack)
    elif args.bus_command == "inbox":
        doc, lines = bus.inbox(vault, os.environ, args.as_name, args.limit)
    else:
        doc, lines = bus.log(vault, args.name, args.limit)
    if args.json:
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    else:
        print("\n".join(lines))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vaultops", description="An Obsidian vault as a safe job queue for AI agents."
    )
    parser.add_argument("--vault", help="the vault folder (default: $VAULTOPS_VAULT or the current folder)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("init", help="scaffold a vault (idempotent)")
    p.add_argument("dir", nargs="?", help="the vault folder")
    p.add_argument(
        "--claude", metavar="DIR", help="wire `vaultops hook` into DIR/.claude/settings.json (Claude Code)"
    )
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("submit", help="append a new request to the inbox")
    p.add_argument("text", help="what you want done (- reads stdin)")
    p.add_argument("--type", help="the request's type")
    p.add_argument("--id", help="the request's id (REQ-…)")
    p.set_defaults(func=cmd_submit)

    p = sub.add_parser("tick", help="one full pass: scan, claim, run, record, commit")
    p.add_argument("--no-wait", action="store_true", help="do not wait for requests that are still settling")
    p.set_defaults(func=cmd_tick)

    p = sub.add_parser("run", help="the daemon: watch the vault and act within a second (SIGTERM stops it)")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("status", help="every request: id, file, state, type, safety class, lock, update")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("classify", help="the decision for a text, without running anything")
    p.add_argument("text", help="the request text (- reads stdin)")
    p.add_argument("--type", help="an explicit type, as a `- type:` line would give")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_classify)

    p = sub.add_parser("hook", help="Claude Code hook: read a PreToolUse event on stdin, print the decision")
    p.set_defaults(func=cmd_hook)

    p = sub.add_parser("doctor", help="check the vault, git and executors; say what to fix")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("service", help="run the daemon as a systemd user unit or a launchd agent")
    p.add_argument("action", choices=["install", "uninstall", "status"], help="what to do with the service")
    p.add_argument("--dry-run", action="store_true", help="print the file and commands; change nothing")
    p.set_defaults(func=cmd_service)

    p = sub.add_parser("bus", help="messages between the orchestrator and workers (send, inbox, log)")
    bus_sub = p.add_subparsers(dest="bus_command", required=True, metavar="ACTION")
    whom = "who you are (default: $VAULTOPS_WORKER in a worker, else person)"
    b = bus_sub.add_parser("send", help="send a message")
    b.add_argument("to", help="the recipient's name")
    b.add_argument("text", help="the message (- reads stdin)")
    b.add_argument("--priority", default="normal", help="low, normal, high or urgent (default: normal)")
    b.add_argument("--as", dest="as_name", metavar="NAME", help=whom)
    b.add_argument("--json", action="store_true", help="print one JSON document")
    b = bus_sub.add_parser("inbox", help="your new messages (unacked ones come back after 5 minutes)")
    b.add_argument("--ack", type=int, action="append", metavar="ID", help="ack message ID (repeatable)")
    b.add_argument("--limit", type=int, default=50, help="at most this many messages (default: 50)")
    b.add_argument("--as", dest="as_name", metavar="NAME", help=whom)
    b.add_argument("--json", action="store_true", help="print one JSON document")
    b = bus_sub.add_parser("log", help="every message, newest first, with deliveries and acks")
    b.add_argument("name", nargs="?", help="only the messages this name sent or received")
    b.add_argument("--limit", type=int, default=100, help="at most this many messages (default: 100)")
    b.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_bus)

    from vaultops.commands.worker import add_worker_parser  # argparse only: the parser stays cheap

    add_worker_parser(sub)
    return parser


def _tolerant_output() -> None:
    """Notes keep bytes that are not UTF-8 as lone surrogates (so that they survive byte for byte); an id
    or a title holding one is printed with the byte escaped (``\\udcff``) rather than crashing the command.
    In JSON output that escape is valid JSON for the same string."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # one that cannot be keeps its own rule
                reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    _tolerant_output()
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except VaultopsError as exc:
        print(f"vaultops: {exc.message}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `vaultops status | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # the last line of defence: one sentence, and the trace for a bug report
        print(f"vaultops: internal error: {exc!r}; please report it with the trace below", file=sys.stderr)
        traceback.print_exc()
        return 70


if __name__ == "__main__":
    sys.exit(main())
