"""README.md documents the CLI and the configuration as they are, and nothing that is not there.

- Every command and subcommand of ``vaultops.cli.build_parser()`` (and every option of each) appears in the
  README's Commands section, and every ``vaultops …`` command that section shows exists.
- Every key the config model accepts (walking the pydantic models of ``vaultops.config``) is set in a TOML
  example of the README's Configuration section, and every key those examples set is accepted.
"""

from __future__ import annotations

import argparse
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from vaultops.cli import build_parser
from vaultops.config import Config

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
FREE_KEYS = ("routing", "policy", "limits.prices")  # tables keyed by names of the person's choosing


def section(title: str) -> str:
    """The README's ``## title`` section, its ``###`` subsections included."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.M | re.S)
    assert match, f"README.md has no '## {title}' section"
    return match.group(1)


# --- commands ---------------------------------------------------------------------------------------------


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def parser_commands() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """("bus send", its parser), …: every command path; a positional with choices (``service ACTION``)
    gives a path per choice."""

    def walk(prefix: str, parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
        for name, sub in _subparsers(parser).items():
            path = f"{prefix} {name}".strip()
            yield path, sub
            for action in sub._actions:
                if not action.option_strings and action.choices and not _subparsers(sub):
                    for choice in action.choices:
                        yield f"{path} {choice}", sub
            yield from walk(path, sub)

    yield from walk("", build_parser())


def documented_commands() -> set[str]:
    """The command paths the Commands section shows in backticks: ``vaultops bus send TO TEXT`` gives
    "bus" and "bus send"; ``install\\|uninstall\\|status`` gives each."""
    paths: set[str] = set()
    for span in re.findall(r"`(vaultops [^`]+)`", section("Commands")):
        words: list[list[str]] = []
        for word in span.split()[1:]:
            choices = word.replace("\\|", "|").split("|")
            if not all(re.fullmatch(r"[a-z][a-z-]*", c) for c in choices):
                break
            words.append(choices)
        prefixes = [""]
        for choices in words:
            prefixes = [f"{p} {c}".strip() for p in prefixes for c in choices]
            paths.update(prefixes)
    return paths


def test_every_command_is_documented() -> None:
    missing = sorted({path for path, _ in parser_commands()} - documented_commands())
    assert not missing, f"README.md's Commands section does not show: {missing}"


def test_every_documented_command_exists() -> None:
    unknown = sorted(documented_commands() - {path for path, _ in parser_commands()})
    assert not unknown, f"README.md's Commands section shows commands vaultops does not have: {unknown}"


def test_every_option_is_documented() -> None:
    text = section("Commands")
    missing = sorted(
        f"{path} {option}"
        for path, parser in [("", build_parser()), *parser_commands()]
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help" and not re.search(rf"{option}(?![\w-])", text)
    )
    assert not missing, f"README.md's Commands section does not mention: {missing}"


# --- configuration ----------------------------------------------------------------------------------------


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):  # dict[str, ProfileConfig]: the values' model
        if (model := _model_of(arg)) is not None:
            return model
    return None


def model_keys(model: type[BaseModel] = Config, prefix: str = "") -> set[str]:
    """Every key the config accepts: "inbox.settle", "profiles.*.command", "notify.telegram.token", …;
    a table of free keys is just its name ("routing")."""
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        sub = _model_of(field.annotation)
        if sub is None:
            keys.add(path)
        elif sub is not field.annotation:  # a table of named entries: [profiles.NAME]
            keys |= model_keys(sub, f"{path}.*.")
        else:
            keys |= model_keys(sub, f"{path}.")
    return keys


def documented_keys() -> set[str]:
    """The keys the Configuration section's TOML examples set, named as ``model_keys`` names them."""
    keys: set[str] = set()

    def walk(table: dict[str, Any], prefix: str) -> None:
        for name, value in table.items():
            path = f"{prefix}{name}"
            if path in FREE_KEYS:
                keys.add(path)
            elif path == "profiles":
                for profile in value.values():
                    walk(profile, "profiles.*.")
            elif isinstance(value, dict) and path != "profiles.*.env":
                walk(value, f"{path}.")
            else:
                keys.add(path)

    blocks = re.findall(r"^```toml\n(.*?)^```", section("Configuration"), re.M | re.S)
    assert blocks, "README.md's Configuration section has no TOML example"
    for block in blocks:
        walk(tomllib.loads(block), "")
    return keys


def test_every_config_key_is_documented() -> None:
    missing = sorted(model_keys() - documented_keys())
    assert not missing, f"README.md's Configuration section does not set: {missing}"


def test_every_documented_config_key_exists() -> None:
    unknown = sorted(documented_keys() - model_keys())
    assert not unknown, f"README.md's Configuration section sets keys vaultops does not accept: {unknown}"


@pytest.mark.parametrize("key", ["inbox.settle", "profiles.*.command", "notify.telegram.token", "routing"])
def test_the_walk_sees_every_kind_of_key(key: str) -> None:
    assert key in model_keys()
