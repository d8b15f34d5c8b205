"""A Claude Code command line, as the gate sees it: whether it is Claude Code, whether it can be gated, and
the flags that put the gate's settings on it.  Pure, standard library only (``vaultops.config`` checks
profiles with it)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

SETTINGS_FLAG = "--settings"
OUTPUT_FLAG = "--output-format"
VERBOSE_FLAG = "--verbose"  # stream-json in -p mode requires it
SOURCES_FLAG = "--setting-sources"
UNGATEABLE_FLAGS = ("--bare",)  # skips hooks


def is_claude(argv: Sequence[str]) -> bool:
    """Whether this command starts Claude Code: its program is ``claude`` (any path, any suffix)."""
    return bool(argv) and os.path.basename(argv[0]).startswith("claude")


def gate_problem(argv: Sequence[str]) -> str:
    """Why this Claude Code command cannot be gated, or ""."""
    for flag in (*UNGATEABLE_FLAGS, SETTINGS_FLAG, SOURCES_FLAG):
        if any(arg == flag or arg.startswith(flag + "=") for arg in argv):
            why = "skips hooks" if flag in UNGATEABLE_FLAGS else "would compete with the gate's own"
            return f"its command passes {flag}, which {why}; remove it"
    return ""


def gated_argv(argv: Sequence[str], settings: Path) -> list[str]:
    """``argv`` with the gate's settings, and the user's only, right after the program."""
    return [argv[0], SETTINGS_FLAG, str(settings), SOURCES_FLAG, "user", *argv[1:]]


def streaming_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` printing stream-json (``--output-format stream-json --verbose``) whatever it printed."""
    out = list(argv)
    found = False
    for i, arg in enumerate(out):
        if arg == OUTPUT_FLAG and i + 1 < len(out):
            out[i + 1] = "stream-json"
            found = True
        elif arg.startswith(OUTPUT_FLAG + "="):
            out[i] = f"{OUTPUT_FLAG}=stream-json"
            found = True
    if not found:
        out[1:1] = [OUTPUT_FLAG, "stream-json"]
    if VERBOSE_FLAG not in out:
        out.insert(1, VERBOSE_FLAG)
    return out
