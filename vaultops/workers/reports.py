"""Worker reports: tagged lines on a worker's stdout, decided by the policy table
(docs/architecture.md, "Approvals: the policy").

``[REQUEST:…]`` lines get an answer, ``[ANSWER:<action>] <verdict> — <reason>``, written back to the
worker's stdin (and to its bus inbox when the bus is there); ``[DONE:…]`` and ``[ESCALATE:…]`` are
returned as values for the pipeline to act on.  Deciding is pure (lines in, ``Report`` values out); the
supervisor feeds it live, and ``watch_reports`` reads it back from a log from an offset.

Each request is read with the worker's recent messages (the policy's window, the last 20 lines), which is
how ``push`` learns the branch an earlier ``create_worktree`` named.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vaultops.base.claude_code import message_lines
from vaultops.policy.decide import WINDOW, WorkerContext, decide_request
from vaultops.policy.paths import Scope
from vaultops.policy.table import PolicyTable, Verdict
from vaultops.policy.tags import Problem, Tag, parse_line
from vaultops.workers.logs import OWN_PREFIX, STDERR_PREFIX, read_since


@dataclass(frozen=True)
class Report:
    """One tagged line of a worker and its verdict.  ``answer`` is the line written back to the worker
    (None for STATUS and DONE, which ask for nothing)."""

    line: str
    item: Tag | Problem
    verdict: Verdict
    answer: str | None

    @property
    def kind(self) -> str:
        return "PROBLEM" if isinstance(self.item, Problem) else self.item.kind

    @property
    def label(self) -> str:
        return "unreadable" if isinstance(self.item, Problem) else self.item.label




def shown_lines(raw: str, width: int = 200) -> list[str]:
    """A log line as a person reads it: Claude Code's stream-json events become what the model said, the
    tools it called, what came back and the final result; any other line stays as it is."""
    stripped = raw.strip()
    if not stripped.startswith('{"type"'):
        return [raw]
    try:
        event = json.loads(stripped)
    except ValueError:
        return [raw]
    kind = event.get("type") if isinstance(event, dict) else None
    if kind == "system" and event.get("subtype") == "init":
        return [f"[session] {event.get('session_id', '?')} started ({event.get('model', '?')})"]
    if kind == "result":
        cost = event.get("total_cost_usd")
        spent = f" · ${cost:.4f}" if isinstance(cost, (int, float)) else ""
        return [f"[result] {event.get('subtype', '?')} · {event.get('num_turns', '?')} turns{spent}"]
    if kind not in ("assistant", "user"):
        return [raw]
    content = (event.get("message") or {}).get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    out: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            lines = str(block.get("text", "")).splitlines()
            out += lines if kind == "assistant" else [f"[input] {line}"[:width] for line in lines[:3]]
        elif block.get("type") == "tool_use":
            given = block.get("input") or {}
            what = given.get("command") or given.get("file_path") or json.dumps(given, ensure_ascii=False)
            out.append(f"[tool] {block.get('name', '?')}: {what}"[:width])
        elif block.get("type") == "tool_result":
            result = block.get("content")
            text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
            first = text.strip().splitlines()[0] if text.strip() else "(nothing)"
            out.append(f"[tool result] {first}"[:width])
    return out


def answer_line(item: Tag | Problem, verdict: Verdict) -> str:
    """``[ANSWER:<action>] <verdict> — <reason>``, on one line whatever the reason holds."""
    action = "unreadable" if isinstance(item, Problem) else item.label
    reason = " ".join(verdict.reason.split())
    return f"[ANSWER:{action}] {verdict.kind} — {reason}"




class ReportReader:
    """Decides a worker's lines one at a time, keeping the window of its recent messages."""

    def __init__(self, scope: Scope, table: PolicyTable | None = None) -> None:
        self.scope = scope
        self.table = table or PolicyTable()
        self.window: deque[str] = deque(maxlen=WINDOW)
        self.streamed = False  # Claude Code's stream-json events came: its final result is a repeat

    def feed(self, raw: str) -> list[Report]:
        """Reports for one line of the worker's stdout (chatter gives none)."""
        reports: list[Report] = []
        self.streamed = self.streamed or '"type":"assistant"' in raw.replace(" ", "")
        for line in message_lines(raw, self.streamed):
            self.window.append(line)
            item = parse_line(line)
            if item is None:
                continue
            verdict = decide_request(item, WorkerContext(self.scope, tuple(self.window)), self.table)
            asks = isinstance(item, Problem) or item.kind in ("REQUEST", "ESCALATE")
            reports.append(Report(line, item, verdict, answer_line(item, verdict) if asks else None))
        return reports


def worker_scope(dir: str, files: tuple[str, ...] = ()) -> Scope:
    """The scope a worker's requests are judged in: its folder and its files."""
    return Scope(
        workdir=os.path.realpath(dir),
        home=os.path.expanduser("~"),
        files=files,
        resolve=os.path.realpath,
    )


def watch_reports(folder: Path, offset: int, reader: ReportReader) -> tuple[list[Report], int]:
    """The reports in a worker's log after byte ``offset``, and the offset to pass next time.  Lines that
    are not the worker's stdout (its stderr, vaultops's own answers) are skipped."""
    lines, offset = read_since(folder, offset)
    reports: list[Report] = []
    for line in lines:
        if line.startswith((STDERR_PREFIX, OWN_PREFIX)):
            continue
        reports.extend(reader.feed(line))
    return reports, offset


def deliver(
    report: Report,
    worker: str,
    write_stdin: Callable[[str], None],
    send_bus: Callable[[str, str], None] | None = None,
) -> None:
    """Write a report's answer to the worker's stdin and, when there is a bus, to its inbox."""
    if report.answer is None:
        return
    write_stdin(report.answer)
    if send_bus is not None:
        send_bus(worker, report.answer)
