"""Claude Code as vaultops speaks to it, in one place: its command line (whether it is Claude Code, whether
it can be gated, the flags that put the gate's settings on it and make it print stream-json) and its
stream-json (the result object, what the model said, a user message to send).  Pure, standard library
only (``vaultops.config`` checks profiles with it; ``run``, ``workers`` and ``hook`` use the rest)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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


# --- stream-json ---------------------------------------------------------------------------------


def result_object(stdout: str) -> dict[str, Any] | None:
    """Claude Code's result: one object, the last element of the ``--verbose`` array, or the last
    ``"type": "result"`` line of stream-json.  None when there is none."""
    text = stdout.strip()
    if not text:
        return None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        doc = None
        for line in reversed(text.splitlines()):
            try:
                candidate = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(candidate, dict) and candidate.get("type") == "result":
                doc = candidate
                break
    if isinstance(doc, list):
        doc = next((d for d in reversed(doc) if isinstance(d, dict) and d.get("type") == "result"), None)
    return doc if isinstance(doc, dict) and doc.get("type") == "result" else None


def stream_session(stdout: str) -> str:
    """The session a stream-json run announced (its ``init`` event comes first): a run stopped before its
    result can still be resumed in it.  "" when it announced none."""
    for line in stdout.splitlines():
        if '"session_id"' not in line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("session_id"), str) and event["session_id"]:
            return str(event["session_id"])
    return ""


def message_lines(raw: str, streamed: bool = False) -> list[str]:
    """The lines a worker said.  Claude Code with ``--output-format stream-json`` prints JSON events;
    what the model said is the text of its ``assistant`` messages, and tags are read from that.  With
    ``--output-format json`` it prints one ``result`` object at the end, whose text is read instead;
    ``streamed``: assistant messages came before, and the result only repeats the last of them."""
    stripped = raw.strip()
    if not stripped.startswith("{") or not ('"assistant"' in stripped or '"result"' in stripped):
        return [raw]
    try:
        event = json.loads(stripped)
    except ValueError:
        return [raw]
    if not isinstance(event, dict):
        return [raw]
    if event.get("type") == "assistant":
        content = (event.get("message") or {}).get("content") or []
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return [line for text in texts for line in str(text).splitlines()]
    if event.get("type") == "result" and isinstance(event.get("result"), str):
        return [] if streamed else event["result"].splitlines()
    return [raw]


def stream_json_message(text: str) -> str:
    """A user message in Claude Code's ``--input-format stream-json``: one JSON document on one line."""
    message = {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}
    return json.dumps(message, ensure_ascii=False)
