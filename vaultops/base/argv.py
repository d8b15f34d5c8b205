"""The argv template of an executor profile: ``["claude", "-p", "{prompt}", …]``.  Pure.

A placeholder fills only the argument it sits in: a value never becomes more arguments and is never
read by a shell, whatever it holds.  str.format is not used because it would resolve ``{prompt.__class__}``
and ``{prompt[0]}``; here a placeholder is a bare name from PLACEHOLDERS and nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

PLACEHOLDERS = frozenset({"prompt", "id", "type", "title", "workdir", "vault", "file", "tools"})

# "{{" and "}}" are literal braces; "{name}" a placeholder; any other brace is an error.
_TOKEN = re.compile(r"\{\{|\}\}|\{(?P<name>[^{}]*)\}|(?P<stray>[{}])")


def _problems(arg: str, index: int) -> list[str]:
    problems = []
    for m in _TOKEN.finditer(arg):
        name = m.group("name")
        if stray := m.group("stray"):
            problems.append(f"argument {index}: unmatched {stray!r} (write {{{{ or }}}} for a brace)")
        elif name is not None and name not in PLACEHOLDERS:
            problems.append(f"argument {index}: unknown placeholder {{{name}}}")
    return problems


def check_template(argv: Sequence[str]) -> list[str]:
    """What is wrong with a profile's command, one sentence per problem; empty when it is usable."""
    if not argv:
        return ["the command is empty"]
    problems: list[str] = []
    for index, arg in enumerate(argv):
        item: object = arg  # from TOML: a number or a table can hide in the list
        if not isinstance(item, str):
            problems.append(f"argument {index} is not a string: {item!r}")
            continue
        problems += _problems(arg, index)
        if index == 0 and any(m.group("name") is not None for m in _TOKEN.finditer(arg)):
            # The request's text must never choose the program.
            problems.append("argument 0 (the program) may not contain a placeholder")
    return problems


def fill_argv(argv: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """The template with each ``{name}`` replaced by ``values[name]``, inside its own argument.

    Raises ValueError for a template that check_template rejects or a placeholder without a value.
    """
    problems = check_template(argv)
    if problems:
        raise ValueError("; ".join(problems))

    def fill(m: re.Match[str]) -> str:
        name = m.group("name")
        if name is None:
            return m.group(0)[0]  # "{{" -> "{", "}}" -> "}"
        if name not in values:
            raise ValueError(f"no value for placeholder {{{name}}}")
        return values[name]

    return [_not_an_option(arg, _TOKEN.sub(fill, arg)) for arg in argv]


def _not_an_option(template: str, filled: str) -> str:
    """A value never becomes an option: a request whose text begins ``- [ ] …`` (or ``--settings=…``)
    would be read as one by the program's option parser, failing the run or changing what it may do.  A
    leading space makes it a plain argument to every parser, and the model reads past it."""
    return " " + filled if filled.startswith("-") and not template.startswith("-") else filled
