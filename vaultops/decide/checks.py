"""The checks a request or plan note names for its review: argv lists, and only plain test commands.  Pure.

A profile's checks are the person's (config); a request's are text that may have come from anywhere, and
a check runs with no one watching.  So a request may add a test command with plain arguments (a test
file, a selector, ``-q``), never an interpreter's inline code, an option that runs a program or loads a
file (``go test -exec``, ``pytest -p``, ``--config=…``), or a path outside the worktree.  What it cannot
add, the person can put in the profile.  The gate judges each check besides (vaultops.engine.review).
"""

from __future__ import annotations

import re
import shlex

# flags a test runner takes that only change how much it says or when it stops
PLAIN_FLAGS = frozenset((
    "-q", "-qq", "-v", "-vv", "-vvv", "-x", "-s", "-l", "-race", "-short", "-failfast", "--quiet",
    "--verbose",
    "--exitfirst", "--failfast", "--no-header", "--lf", "--ff", "--last-failed", "--failed-first",
    "--showlocals", "--color=no", "--no-color", "--ci", "--silent",
))  # fmt: skip
# flags whose value is a selector (pytest -k/-m, go test -run, jest -t): any text, never a path or code
SELECTOR_FLAGS = frozenset(("-k", "-m", "-run", "-t", "--testNamePattern"))
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_./:@+,\[\]-]*")


def commands_of(line: str) -> list[tuple[str, ...]]:
    """``pytest -q; ruff check .`` as argv lists: words as a shell splits them, commands at an unquoted
    ``;``.  Nothing else of a shell's: a ``|`` or ``$(…)`` is just a character of an argument."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";")
    lexer.whitespace_split = True
    out: list[tuple[str, ...]] = [()]
    for token in lexer:
        if token and set(token) == {";"}:
            out.append(())
        else:
            out[-1] += (token,)
    return [argv for argv in out if argv]


def request_check_problem(argv: tuple[str, ...]) -> str | None:
    """Why a request may not add this check itself, or None when it may."""
    if not _PLAIN_WORD.fullmatch(argv[0]) or "/" in argv[0] or argv[0].startswith("."):
        return f"{argv[0]!r} is not a program named plainly (a request may not run a file of the worktree)"
    selector = False
    for arg in argv[1:]:
        if selector:
            selector = False
            if arg.isprintable() and not arg.startswith("-"):
                continue
            return f"{arg!r} is not a plain selector"
        if arg in SELECTOR_FLAGS:
            selector = True
        elif arg.startswith("-"):
            if arg not in PLAIN_FLAGS:
                return f"{arg} is an option a request may not choose (it may run or load something)"
        elif not _PLAIN_WORD.fullmatch(arg) or ".." in arg.split("/") or arg.startswith("/"):
            return f"{arg!r} is not a plain argument (a path inside the worktree, or a test's name)"
    if selector:
        return f"{argv[-1]} needs a value"
    return None
