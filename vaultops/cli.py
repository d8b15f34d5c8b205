"""The command line: a thin shell over the library.  Every command is a call a Python user could make."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence

from vaultops import __version__, commands
from vaultops.base import layout
from vaultops.base.errors import VaultopsError, disk_error
from vaultops.commands.output import Output
from vaultops.vault import Vault

TYPE_CHECKING = False  # as typing's, which mypy reads the same way, without importing typing
if TYPE_CHECKING:  # the gate's module imports the whole policy: only `vaultops hook` loads it
    from vaultops.hook.answer import HookAnswer

# vaultops loads no pydantic plugins; skipping their discovery saves a scan of every installed package.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def _vault(args: argparse.Namespace) -> Vault:
    """The vault: --vault, else $VAULTOPS_VAULT, else the current folder (``vaultops.base.layout``).
    Its configuration is read only if the command asks for a setting."""
    return Vault.open(args.vault)


SPAWN_OPTIONS = ("dir", "files", "persona", "notify", "parent", "stream_json", "prompt", "profile")


def _text(arg: str) -> str:
    return sys.stdin.read() if arg == "-" else arg


def cmd_init(args: argparse.Namespace) -> Output:
    return commands.scaffold.init(args.dir or args.vault, args.claude)


def cmd_hook(args: argparse.Namespace) -> HookAnswer:
    return commands.hook.answer(layout.named_vault(args.vault))


def cmd_submit(args: argparse.Namespace) -> Output:
    return commands.submit.submit_request(_vault(args), _text(args.text), args.type, args.id)


def cmd_tick(args: argparse.Namespace) -> Output:
    return commands.tick.tick(_vault(args), wait_settle=not args.no_wait)


def cmd_run(args: argparse.Namespace) -> int:
    # here, not at the top: the daemon is a layer beside the commands (so vaultops.commands cannot offer
    # it lazily) and importing it loads the whole pipeline, which no other command's start-up should pay
    from vaultops.daemon.loop import run_daemon

    return run_daemon(_vault(args))


def cmd_status(args: argparse.Namespace) -> Output:
    return commands.overview.status(_vault(args), as_json=args.json)


def cmd_classify(args: argparse.Namespace) -> Output:
    return commands.classify.explain(_text(args.text), args.type, args.vault)


def cmd_doctor(args: argparse.Namespace) -> Output:
    return commands.doctor.doctor(layout.vault_folder(args.vault))


def cmd_link_chat(args: argparse.Namespace) -> Output:
    ask = input if sys.stdin.isatty() else None  # several chats: the person picks one, if there is a person
    return commands.link_chat.link_chat(layout.vault_root(args.vault), args.service, args.chat, ask)


def cmd_service(args: argparse.Namespace) -> Output:
    return commands.service.service(layout.vault_folder(args.vault), args.action, dry_run=args.dry_run)


def cmd_bus(args: argparse.Namespace) -> Output:
    bus, root, action = commands.bus, _vault(args).root, args.bus_command
    if action == "send":
        return bus.send(root, os.environ, args.to, _text(args.text), args.priority, args.as_name)
    if action == "inbox" and args.ack:
        return bus.ack(root, os.environ, args.as_name, args.ack)
    if action == "inbox":
        return bus.inbox(root, os.environ, args.as_name, args.limit)
    return bus.log(root, args.name, args.limit)


def cmd_worker(args: argparse.Namespace) -> Output:
    if args.worker_command == "spawn":  # first: its --vault may come after NAME, with the spawn options
        args, command = _spawn_arguments(args)
    worker, vault, action = commands.worker, _vault(args), args.worker_command
    if action == "spawn":
        return worker.spawn(vault, args.name, command, **{key: getattr(args, key) for key in SPAWN_OPTIONS})
    if action == "list":
        return worker.list_workers(vault)
    if action == "inject":
        text = sys.stdin.read().rstrip("\n") if args.text == "-" else args.text
        return worker.inject(vault, args.name, text, stream_json=args.stream_json)
    if action == "terminate":
        return worker.terminate(vault, args.name, args.grace)
    return worker.logs(vault, args.name, args.lines, raw=args.raw)


# One example per command, shown at the end of its --help (argparse's epilog) and in the docs' reference;
# tests/unit/test_cli_help.py parses each one with this parser, so an example cannot go stale.
EXAMPLES = {
    "init": "vaultops init ~/vault\nvaultops --vault ~/vault init --claude ~/code/app",
    "submit": "vaultops --vault ~/vault submit 'Is jq installed? `which jq`' --type env-check",
    "tick": "vaultops --vault ~/vault tick --no-wait",
    "run": "vaultops run --vault ~/vault",
    "status": "vaultops status --vault ~/vault --json",
    "classify": "vaultops classify --json 'Rotate the Stripe key'",
    "hook": "vaultops --vault ~/vault hook < event.json   # what `init --claude` wires into Claude Code",
    "doctor": "vaultops doctor --vault ~/vault",
    "service": "vaultops --vault ~/vault service install --dry-run",
    "link-chat": "vaultops link-chat telegram\nvaultops link-chat zulip --chat ann@example.org",
    "bus": "vaultops bus send w1 'rebase on main' --priority high",
    "bus send": "vaultops bus send w1 'rebase on main, then run the tests' --priority high",
    "bus inbox": "VAULTOPS_WORKER=w1 vaultops bus inbox --ack 1",
    "bus log": "vaultops bus log w1 --limit 20",
    "worker": "vaultops worker list",
    "worker spawn": "vaultops worker spawn w1 --dir ~/code/app --files 'src/*' -- ./agent.sh",
    "worker list": "vaultops worker list --json",
    "worker inject": "vaultops worker inject w1 'rebase on main first'",
    "worker terminate": "vaultops worker terminate w1 --grace 5",
    "worker logs": "vaultops worker logs w1 --lines 100",
}
VAULT_HELP = "the vault folder (default: $VAULTOPS_VAULT or the current folder)"


class _Command(argparse.ArgumentParser):
    """A subcommand's parser: it takes ``--vault`` too (after the subcommand, as before it) and ends its help
    with its example."""

    def __init__(self, **kwargs: object) -> None:
        name = str(kwargs.get("prog", "")).removeprefix("vaultops ")
        if name in EXAMPLES:
            kwargs.setdefault(
                "epilog", "example:" + "".join(f"\n  {line}" for line in EXAMPLES[name].splitlines())
            )
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(**kwargs)  # type: ignore[arg-type]
        # SUPPRESS: given nowhere here, the value before the subcommand (or its default) stands
        self.add_argument("--vault", default=argparse.SUPPRESS, help=VAULT_HELP)


COMMANDS = (
    "init",
    "submit",
    "tick",
    "run",
    "status",
    "classify",
    "hook",
    "doctor",
    "link-chat",
    "service",
    "bus",
    "worker",
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; ``only``: of that one alone (a hook, run before every tool call of
    every agent, need not build the other ten, which would be a good part of its start-up)."""

    def want(name: str) -> bool:
        return only is None or only == name

    def bare(name: str, func: Callable[[argparse.Namespace], object], help: str) -> None:
        """A command without arguments of its own."""
        if want(name):
            sub.add_parser(name, help=help).set_defaults(func=func)

    parser = argparse.ArgumentParser(
        prog="vaultops", description="An Obsidian vault as a safe job queue for AI agents."
    )
    parser.add_argument("--vault", help=VAULT_HELP)
    parser.add_argument("--version", action="version", version=f"vaultops {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Command)

    if want("init"):
        p = sub.add_parser("init", help="scaffold a vault (idempotent)")
        p.add_argument("dir", nargs="?", help="the vault folder")
        p.add_argument(
            "--claude",
            metavar="DIR",
            help="wire `vaultops hook` into DIR/.claude/settings.json (Claude Code)",
        )
        p.set_defaults(func=cmd_init)

    if want("submit"):
        p = sub.add_parser("submit", help="append a new request to the inbox")
        p.add_argument("text", help="what you want done (- reads stdin)")
        p.add_argument("--type", help="the request's type")
        p.add_argument("--id", help="the request's id (REQ-…)")
        p.set_defaults(func=cmd_submit)

    if want("tick"):
        p = sub.add_parser("tick", help="one full pass: scan, claim, run, record, commit")
        p.add_argument(
            "--no-wait", action="store_true", help="do not wait for requests that are still settling"
        )
        p.set_defaults(func=cmd_tick)

    bare("run", cmd_run, "the daemon: watch the vault and act within a second (SIGTERM stops it)")

    if want("status"):
        p = sub.add_parser("status", help="every request: id, file, state, type, safety class, lock, update")
        p.add_argument("--json", action="store_true", help="print one JSON document")
        p.set_defaults(func=cmd_status)

    if want("classify"):
        p = sub.add_parser("classify", help="the decision for a text, without running anything")
        p.add_argument("text", help="the request text (- reads stdin)")
        p.add_argument("--type", help="an explicit type, as a `- type:` line would give")
        p.add_argument("--json", action="store_true", help="print one JSON document")
        p.set_defaults(func=cmd_classify)

    bare("hook", cmd_hook, "Claude Code hook: read a PreToolUse event on stdin, print the decision")
    bare("doctor", cmd_doctor, "check the vault, git and executors; say what to fix")

    if want("link-chat"):
        p = sub.add_parser(
            "link-chat", help="link the chat you write from: adds it to this machine's local.toml"
        )
        p.add_argument("service", help="telegram or zulip: the chat whose bot is set up in local.toml")
        p.add_argument(
            "--chat", metavar="ID", help="the Telegram chat id (Zulip: your address) to link, without asking"
        )
        p.set_defaults(func=cmd_link_chat)

    if want("service"):
        p = sub.add_parser("service", help="run the daemon as a systemd user unit or a launchd agent")
        p.add_argument(
            "action", choices=["install", "uninstall", "status"], help="what to do with the service"
        )
        p.add_argument("--dry-run", action="store_true", help="print the file and commands; change nothing")
        p.set_defaults(func=cmd_service)

    if want("bus"):
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

    if want("worker"):
        _add_worker_parser(sub)
    return parser


def _add_worker_parser(sub: argparse._SubParsersAction[_Command]) -> None:
    """The ``worker`` subcommand and its actions, under the top-level parser's subparsers."""
    p = sub.add_parser("worker", help="long-lived worker sessions: spawn, list, inject, terminate, logs")
    actions = p.add_subparsers(dest="worker_command", required=True, metavar="ACTION")

    s = actions.add_parser(
        "spawn",
        help="start a worker: vaultops worker spawn NAME [options] -- COMMAND …",
        usage="vaultops worker spawn NAME [--dir DIR] [--files GLOB …] [--persona NAME] [--notify URL …] "
        "[--parent NAME] [--stream-json] [--prompt TEXT] [--profile NAME] [--vault DIR] -- COMMAND …",
    )
    s.add_argument("name", help="the worker's name (its folder, its bus inbox)")
    _spawn_options(s)
    # everything after the name, options included: argparse cannot tell a command's own options from ours
    # once a positional has started, so _spawn_arguments() splits it at ``--`` and reads the part before it
    s.add_argument("rest", nargs=argparse.REMAINDER, help="[options] -- COMMAND …")

    s = actions.add_parser("list", help="every worker: name, state, pid, parent, age, dir, latest commit")
    s.add_argument("--json", action="store_true", help="print one JSON document")

    s = actions.add_parser("inject", help="write a line to a worker's stdin")
    s.add_argument("name", help="the worker's name")
    s.add_argument("text", help="what to write (- reads stdin)")
    s.add_argument(
        "--stream-json",
        action="store_true",
        default=None,
        help="wrap it as a Claude Code stream-json user message (default: as the worker was spawned)",
    )

    s = actions.add_parser("terminate", help="TERM to the worker's process group, then KILL")
    s.add_argument("name", help="the worker's name")
    s.add_argument("--grace", type=float, help="seconds between TERM and KILL (default: [workers] grace)")

    s = actions.add_parser("logs", help="the end of a worker's log")
    s.add_argument("name", help="the worker's name")
    s.add_argument("--lines", type=int, default=50, help="how many lines (default: 50)")
    s.add_argument("--raw", action="store_true", help="Claude Code's stream-json events as they were printed")
    p.set_defaults(func=cmd_worker)


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


def _spawn_arguments(args: argparse.Namespace) -> tuple[argparse.Namespace, list[str]]:
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
    later.add_argument("--vault", default=argparse.SUPPRESS)
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


def _tolerant_output() -> None:
    """Notes keep bytes that are not UTF-8 as lone surrogates (so that they survive byte for byte); an id
    or a title holding one is printed with the byte escaped (``\\udcff``) rather than crashing the command.
    In JSON output that escape is valid JSON for the same string."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # one that cannot be keeps its own rule
                reconfigure(errors="backslashreplace")


def _show(result: Output | HookAnswer | int, as_json: bool) -> int:
    """The one output step: a report's lines (or its JSON document) on stdout, its warnings on stderr;
    the hook's answer exactly as Claude Code reads it; the exit code."""
    if isinstance(result, int):
        return result
    if not isinstance(result, Output):
        with contextlib.suppress(OSError, ValueError):  # the hook exits with its code, whatever happens
            sys.stdout.write(result.stdout)
            sys.stdout.flush()
            sys.stderr.write(result.stderr)
            sys.stderr.flush()
        return result.exit_code
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if as_json and result.doc is not None:
        sys.stdout.write(json.dumps(result.doc, ensure_ascii=False) + "\n")
    elif result.lines:
        print("\n".join(result.lines))
    return result.exit_code


def _failed(exc: BaseException, vault: str | None = None) -> int:
    """The one error mapping: vaultops's errors (``vaultops.base.errors``) are one sentence on stderr and
    their exit code (1; 2 for a config, a vault or a path; 65 for a corrupt state.db; 74 for a disk that
    refuses a write; 75 for a busy vault); anything else is a bug."""
    if isinstance(exc, OSError) and not isinstance(exc, VaultopsError):
        # a full or read-only disk met by a write that did not say so itself: not a bug either; one that
        # does not name its file is said of the vault, whose disk it almost always is
        exc = disk_error(exc) or disk_error(exc, layout.vault_folder(vault).absolute()) or exc
    if isinstance(exc, VaultopsError):
        print(f"vaultops: {exc.message}", file=sys.stderr)
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return 130
    if isinstance(exc, BrokenPipeError):  # `vaultops status | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    # the last line of defence: one sentence, and the trace for a bug report
    print(f"vaultops: internal error: {exc!r}; please report it with the trace below", file=sys.stderr)
    sys.__excepthook__(type(exc), exc, exc.__traceback__)  # the trace, as an uncaught error prints it
    return 70


def _command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names after the global options, if it is one of COMMANDS."""
    i = 0
    while i < len(argv) and argv[i].startswith("--vault"):
        i += 1 if "=" in argv[i] else 2
    return argv[i] if i < len(argv) and argv[i] in COMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    _tolerant_output()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(_command_of(argv)).parse_args(argv)
    try:
        return _show(args.func(args), getattr(args, "json", False))
    except (Exception, KeyboardInterrupt) as exc:
        return _failed(exc, getattr(args, "vault", None))


if __name__ == "__main__":
    sys.exit(main())
