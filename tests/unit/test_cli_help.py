"""Each command's help ends with an example that parses, and ``--vault`` is read before or after the command
(issue 29: a newcomer typed ``vaultops status --vault ~/vault`` and was told there was no such option)."""

from __future__ import annotations

import argparse
import shlex

import pytest

from docsite.reference import parser_commands as walk
from vaultops.cli import EXAMPLES, _spawn_arguments, build_parser


def parser_commands() -> list[tuple[str, argparse.ArgumentParser]]:
    return list(walk(build_parser()))


PATHS = sorted(
    {path for path, _ in parser_commands()} - {"service install", "service uninstall", "service status"}
)


def example_argvs(path: str) -> list[list[str]]:
    """The example lines of ``path``'s help, as the shell would split them, from ``vaultops`` on and up to
    a redirection or a comment."""
    argvs = []
    for line in EXAMPLES[path].splitlines():
        words = shlex.split(line, comments=True)
        words = words[words.index("vaultops") + 1 :]
        cut = [i for i, word in enumerate(words) if word in ("<", ">", "|")]
        argvs.append(words[: cut[0]] if cut else words)
    return argvs


def command_of(args: argparse.Namespace) -> str:
    words = [args.command, getattr(args, "bus_command", None), getattr(args, "worker_command", None)]
    return " ".join(word for word in words if word)


@pytest.mark.parametrize("path", PATHS)
def test_every_commands_help_ends_with_an_example_that_parses(path: str) -> None:
    parser = dict(parser_commands())[path]
    assert parser.epilog and parser.epilog.startswith("example:\n  ") and "vaultops " in parser.epilog, path
    assert all(f"  {line}" in parser.epilog for line in EXAMPLES[path].splitlines())
    for argv in example_argvs(path):
        args = build_parser().parse_args(argv)  # argparse exits on an example that does not parse
        assert path in (command_of(args), args.command), (path, argv)


def test_every_example_belongs_to_a_command() -> None:
    choices = {"service install", "service uninstall", "service status"}  # one parser: `service`'s
    assert set(EXAMPLES) == {path for path, _ in parser_commands()} - choices


def test_the_help_shows_the_example_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(["submit", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.endswith(
        "example:\n  vaultops --vault ~/vault submit 'Is jq installed? `which jq`' --type env-check\n"
    )
    assert "--vault VAULT" in out


@pytest.mark.parametrize("path", PATHS)
def test_vault_is_read_before_and_after_the_command(path: str) -> None:
    for argv in example_argvs(path):
        if "--vault" in argv:
            at = argv.index("--vault")
            argv = argv[:at] + argv[at + 2 :]
        words = len(path.split())
        before = build_parser().parse_args(["--vault", "/v/before", *argv])
        after = build_parser().parse_args([*argv[:words], "--vault", "/v/after", *argv[words:]])
        none = build_parser().parse_args(argv)
        assert (before.vault, after.vault, none.vault) == ("/v/before", "/v/after", None), argv
        assert vars(before) | {"vault": None} == vars(after) | {"vault": None} == vars(none)


def test_vault_after_the_subcommand_wins_over_one_before_it() -> None:
    args = build_parser().parse_args(["--vault", "/first", "status", "--vault", "/second"])
    assert args.vault == "/second"


def test_vault_after_a_workers_name_is_a_spawn_option_not_part_of_its_command() -> None:
    args = build_parser().parse_args(
        ["worker", "spawn", "w1", "--vault", "/v", "--dir", "/c", "--", "x", "-y"]
    )
    merged, command = _spawn_arguments(args)
    assert (merged.vault, merged.dir, command) == ("/v", "/c", ["x", "-y"])
    plain, command = _spawn_arguments(build_parser().parse_args(["worker", "spawn", "w1", "--", "x"]))
    assert (plain.vault, command) == (None, ["x"])


def test_version_is_printed_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    from vaultops import __version__

    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"vaultops {__version__}\n"
