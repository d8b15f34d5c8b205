"""The workers' tagged lines (docs/architecture.md, "Approvals: the policy"), parsed without any model.

    [REQUEST:create_worktree] branch=fix/tab-preview-stuck run_id=42
    [REQUEST:run_tests] scheme="macOS UI Tests CI"
    [STATUS:investigation] Analysing bug...
    [DONE:pr_ready] CI green, no comments
    [ESCALATE:scope_expansion] Found unrelated issue in TabBar.swift

A line that is not tagged at all is ordinary chatter (``None``).  A line that starts like a tag but is
malformed gives a ``Problem`` with one sentence saying what is wrong: never an exception, because these lines
come from an agent and anything may be in them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

TagKind = Literal["REQUEST", "STATUS", "DONE", "ESCALATE"]
TAG_KINDS: tuple[TagKind, ...] = ("REQUEST", "STATUS", "DONE", "ESCALATE")

# "[WORD" at the start of a line: only the four kinds make a tag; "[link](…)" and "[ ] todo" stay chatter.
_OPEN = re.compile(r"^\s*\[\s*(?P<kind>[A-Za-z]+)\b")
_TAG = re.compile(r"^\s*\[\s*(?P<kind>[A-Za-z]+)\s*:\s*(?P<label>[^\]\s]*)\s*\](?P<rest>.*)$")
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
MAX_LINE = 4000  # a longer "tag" is not a protocol line but a paste; refuse it rather than parse it


@dataclass(frozen=True)
class Tag:
    """A parsed tagged line.  ``label`` is the action (REQUEST) or the state (the others), lower-cased with
    ``-`` read as ``_``; ``params`` holds a REQUEST's ``k=v`` pairs, ``text`` the free text after the tag."""

    kind: TagKind
    label: str
    params: Mapping[str, str] = field(default_factory=dict)
    text: str = ""


@dataclass(frozen=True)
class Problem:
    """A line that looks like a tag but cannot be read; ``message`` is one sentence."""

    line: str
    message: str


def _label(raw: str) -> str:
    return raw.strip().lower().replace("-", "_")


def _params(rest: str) -> tuple[dict[str, str], str | None]:
    """``k=v k="quoted v" k='v'`` → a dict, or a problem sentence."""
    try:
        words = shlex.split(rest, comments=False, posix=True)
    except ValueError as exc:  # an unbalanced quote or a trailing backslash
        return {}, f"its parameters cannot be read ({exc})"
    params: dict[str, str] = {}
    for word in words:
        key, eq, value = word.partition("=")
        if not eq:
            return {}, f"parameter {word!r} is not of the form key=value"
        if not _KEY.match(key):
            return {}, f"parameter name {key!r} is not a plain word"
        if key in params and params[key] != value:
            return {}, f"parameter {key!r} is given twice with different values"
        params[key] = value
    return params, None


def parse_line(line: str) -> Tag | Problem | None:
    """One line: a ``Tag``, a ``Problem`` (it starts like a tag but is malformed), or None (plain text)."""
    opening = _OPEN.match(line)
    if opening is None or opening["kind"].upper() not in TAG_KINDS:
        return None
    if len(line) > MAX_LINE:
        return Problem(line[:200], f"a tagged line longer than {MAX_LINE} characters is not read")
    kind_word = opening["kind"].upper()
    m = _TAG.match(line)
    if m is None:
        return Problem(line, f"[{kind_word}…] must look like [{kind_word}:name] followed by text")
    if not m["label"]:
        return Problem(line, f"[{kind_word}:] has no name after the colon")
    if not _LABEL.match(m["label"]):
        return Problem(line, f"[{kind_word}:{m['label']}] has a name that is not a plain word")
    kind: TagKind = kind_word  # type: ignore[assignment]  # one of TAG_KINDS, checked above
    label = _label(m["label"])
    rest = m["rest"].strip()
    if kind != "REQUEST":
        return Tag(kind, label, {}, rest)
    params, problem = _params(rest)
    if problem is not None:
        return Problem(line, f"[REQUEST:{label}]: {problem}")
    return Tag(kind, label, params, rest)


def parse_lines(text: str | Iterable[str]) -> list[Tag | Problem]:
    """Every tagged (or malformed tagged) line of a message or a log, in order; chatter is left out."""
    lines = text.splitlines() if isinstance(text, str) else text
    out: list[Tag | Problem] = []
    for line in lines:
        parsed = parse_line(line)
        if parsed is not None:
            out.append(parsed)
    return out
