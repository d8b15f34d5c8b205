"""The docs' reference pages, drawn from the code itself so that they cannot drift from it: the commands
from ``vaultops.cli.build_parser()`` (each one's usage, arguments and example) and the settings from the
pydantic model ``vaultops.config.Config`` (each key's type and default).  Pure: values in, Markdown out.

``docsite/hooks.py`` puts them into the pages at build time; the docs tests walk the same trees.
"""

from __future__ import annotations

import argparse
import json
import re
import types
from collections.abc import Iterator
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr
from pydantic_core import PydanticUndefined

FREE_KEYS = ("routing", "policy", "limits.prices")  # tables keyed by names of the person's choosing
WIDTH = 100  # usage lines are wrapped at this width, whatever the terminal that builds the site


# --- commands ---------------------------------------------------------------------------------------------


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def parser_commands(root: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """("bus send", its parser), …: every command path; a positional with choices (``service ACTION``)
    gives a path per choice, with the command's own parser."""

    def walk(prefix: str, parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
        for name, sub in subparsers(parser).items():
            path = f"{prefix} {name}".strip()
            yield path, sub
            for action in sub._actions:
                if not action.option_strings and action.choices and not subparsers(sub):
                    for choice in action.choices:
                        yield f"{path} {choice}", sub
            yield from walk(path, sub)

    yield from walk("", root)


def options(parser: argparse.ArgumentParser) -> list[str]:
    """Every long option of ``parser`` but ``--help``."""
    return [o for a in parser._actions for o in a.option_strings if o.startswith("--") and o != "--help"]


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    return formatter.format_help().strip()


def _argument(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest.upper()}`"
    shown = ", ".join(action.option_strings)
    if action.nargs == 0:
        return f"`{shown}`"
    metavar = action.metavar or action.dest.upper()
    many = " …" if action.nargs in ("+", "*") else ""
    return f"`{shown} {metavar}{many}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def command_section(path: str, parser: argparse.ArgumentParser, summary: str) -> str:
    """One command's reference: what it does, its usage, a table of its arguments, its example."""
    lines = [f"## `vaultops {path}`".replace("`vaultops `", "`vaultops`"), "", _cell(summary), ""]
    lines += ["```text", _usage(parser), "```", ""]
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        what = action.help if action.help not in (None, argparse.SUPPRESS) else ""
        if action.choices and not action.option_strings:
            what += " (" + ", ".join(f"`{c}`" for c in action.choices) + ")"
        rows.append(f"| {_argument(action)} | {_cell(str(what))} |")
    if rows:
        lines += ["| argument | what it is |", "| --- | --- |", *rows, ""]
    commands = subparsers(parser)
    if commands:
        lines += ["| command | does |", "| --- | --- |"]
        helps = _helps(parser)
        for name in commands:
            sub = f"{path} {name}".strip()
            lines.append(f"| [`{sub}`](#{_anchor(sub)}) | {_cell(helps[name])} |")
        lines.append("")
    if parser.epilog:
        example = parser.epilog.removeprefix("example:\n")
        lines += [
            "Example:",
            "",
            "```sh",
            *(line.removeprefix("  ") for line in example.splitlines()),
            "```",
            "",
        ]
    return "\n".join(lines)


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {choice.dest: str(choice.help or "") for choice in action._choices_actions}
    return {}


def _anchor(path: str) -> str:
    """The id MkDocs gives the heading ``vaultops PATH`` (its toc extension's slug)."""
    return re.sub(r"[\s]+", "-", f"vaultops {path}".strip().lower())


def cli_reference(root: argparse.ArgumentParser) -> str:
    """Every command of ``root``, top-level first, each with its usage, arguments and example."""
    parts = [command_section("", root, root.description or "")]
    helps, seen = {"": _helps(root)}, set()
    for path, parser in parser_commands(root):
        if id(parser) in seen:  # a choice of a positional (service install): its command's section covers it
            continue
        seen.add(id(parser))
        *parent, name = path.split()
        parts.append(command_section(path, parser, helps[" ".join(parent)][name]))
        helps[path] = _helps(parser)
    return "\n".join(parts)


# --- configuration ----------------------------------------------------------------------------------------


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):  # dict[str, ProfileConfig]: the values' model
        if (model := _model_of(arg)) is not None:
            return model
    return None


def model_keys(model: type[BaseModel], prefix: str = "") -> dict[str, Any]:
    """Every key the config accepts, with its field: "inbox.settle", "profiles.*.command",
    "notify.telegram.token", …; a table of free keys is just its name ("routing")."""
    keys: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        sub = _model_of(field.annotation)
        if sub is None:
            keys[path] = field
        else:  # a table of named entries ([profiles.NAME]) or a section
            keys |= model_keys(sub, f"{path}.*." if sub is not field.annotation else f"{path}.")
    return keys


def type_name(annotation: Any) -> str:
    """A TOML-minded name for a field's type: "seconds or a duration" is left to the text; here "number",
    "list of strings", "one of "text", "claude-json"", "table", …"""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        named = [type_name(a) for a in args if a is not type(None)]
        return " or ".join(named) + (" (or unset)" if type(None) in args else "")
    if origin is Literal:
        return "one of " + ", ".join(json.dumps(a) for a in args)
    if origin in (tuple, list):
        inner = [a for a in args if a is not Ellipsis]
        return "list of " + (_plural(type_name(inner[0])) if len(set(inner)) == 1 else "values")
    if origin is dict:
        return "table of " + _plural(type_name(args[1]))
    if args and hasattr(annotation, "__metadata__"):  # Annotated[float, …]
        return type_name(args[0])
    names = {
        str: "string",
        float: "number",
        int: "integer",
        bool: "true or false",
        SecretStr: "string (secret)",
    }
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _plural(name: str) -> str:
    return name + "s" if name in ("string", "number", "integer") else f"({name})"


def field_type(field: Any) -> str:
    """A field's type; a duration (``Seconds`` in the config) says it takes "4h" as well as 14400."""
    if any(getattr(getattr(m, "func", None), "__name__", "") == "_seconds" for m in field.metadata):
        return "seconds, or a duration (`90s`, `5m`, `4h`)"
    return type_name(field.annotation)


def default_text(field: Any) -> str:
    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if value is None:
        return "unset"
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if isinstance(value, BaseModel):
        value = value.model_dump()
    return "`" + json.dumps(value, ensure_ascii=False, default=str).replace("|", "\\|") + "`"


def example_comments(markdown: str) -> dict[str, str]:
    """What the page's annotated TOML examples say of each key (the comment after it, and the comment
    lines that continue it), named as ``model_keys`` names them."""
    said: dict[str, str] = {}
    for block in re.findall(r"^```toml\n(.*?)^```", markdown, re.M | re.S):
        table, last = "", None
        for line in block.splitlines():
            if header := re.match(r"\[([^\]]+)\]", line):
                table = re.sub(r"^profiles\.[^.]+", "profiles.*", header.group(1).strip('"'))
                last = None
                rest = line[header.end() :]
                if "#" in rest:
                    said.setdefault(table, rest.split("#", 1)[1].strip())
            elif key := re.match(r"""(["\w.*-]+)\s*=""", line):
                path = f"{table}.{key.group(1).strip(chr(34))}".strip(".")
                last = path if path not in said else None
                if last and "#" in line:
                    said[last] = line.split("  #", 1)[-1].strip() if "  #" in line else ""
            elif last and line.strip().startswith("#"):
                said[last] = (said.get(last, "") + " " + line.strip().lstrip("#").strip()).strip()
            else:
                last = None
    return said


def config_reference(model: type[BaseModel], said: dict[str, str]) -> str:
    """A table per section of every key ``model`` accepts: its type, its default, and what the page's
    examples say of it."""
    keys = model_keys(model)
    sections: dict[str, list[str]] = {}
    for path, field in keys.items():
        table, _, key = path.rpartition(".")
        if path in FREE_KEYS:
            table, key = path, "(any name)"
        meaning = said.get(path) or said.get(table if path in FREE_KEYS else "", "")
        row = f"| `{key}` | {_cell(field_type(field))} | {default_text(field)} | {_cell(meaning)} |"
        sections.setdefault(table, []).append(row)
    out = []
    for table, rows in sections.items():
        name = table.replace(".*", ".NAME")
        out += [f"### `[{name}]`", "", "| key | type | default | what it is |", "| --- | --- | --- | --- |"]
        out += [*rows, ""]
    return "\n".join(out)
