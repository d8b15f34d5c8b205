"""The lines vaultops inserts: lock, statuses, result blocks, daily-note entries, commit messages.  Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from vaultops import lines as fmt
from vaultops.base.obsidian import heading_anchor
from vaultops.base.redact import redact, redact_lines
from vaultops.base.visible import visible
from vaultops.model import PassOutcome, State
from vaultops.render.shown import linkable, title_shown

MAX_LINE = 1000


@dataclass(frozen=True, slots=True)
class RunResult:
    """What running one request produced (a built-in check or an agent profile)."""

    state: State  # DONE or ERROR
    profile: str  # "direct" for a built-in check, else the profile's name
    started: datetime
    duration: float
    output: str  # already redacted
    reason: str = ""  # for the status line, e.g. "exit 2", "timed out after 600 s"
    exit_code: int | None = None
    log: str = ""  # vault-relative path of the full log
    attempts: str = ""  # when there were several: "worker-code rate-limit ×3 → worker-fast done"
    cost_usd: float | None = None
    turns: int | None = None
    session: str | None = None
    denials: tuple[str, ...] = ()  # tool calls the agent was refused
    tasks: str = ""  # a fanned-out plan note: each task's state, "1 done · 2 error"
    incident: str = ""  # the gate did not see a call of its agent (vaultops.run.proof): told on every channel


def iso(when: datetime) -> str:
    return when.isoformat(timespec="seconds")


def seconds(duration: float) -> str:
    if duration < 0.1:
        return f"{duration:.2f} s"
    if duration < 60:
        return f"{duration:.1f} s"
    minutes, secs = divmod(int(duration), 60)
    return f"{minutes} min {secs} s"


def clean_output(text: str) -> list[str]:
    """Output as note lines: line breaks normalised, control characters shown as �, long lines cut."""
    out = []
    for line in re.split(r"\r\n|\r|\n", text.rstrip("\r\n")):
        line = visible(line.expandtabs(4))
        if len(line) > MAX_LINE:
            line = line[:MAX_LINE] + f" … ({len(line) - MAX_LINE} more characters)"
        out.append(line)
    return out if text.strip() else []


def cut(lines: list[str], max_lines: int) -> tuple[list[str], int]:
    """Head and tail of ``lines`` within ``max_lines``, and how many were left out."""
    if len(lines) <= max_lines:
        return lines, 0
    tail = max(5, max_lines // 5)
    head = max_lines - tail - 1
    dropped = len(lines) - head - tail
    return [*lines[:head], f"… {dropped} lines cut …", *lines[-tail:]], dropped


def lock_and_start(
    agent: str, host: str, claim: str, started: datetime, lease: float | None = None
) -> list[str]:
    return [
        fmt.lock_line(agent, iso(started), host, claim, lease),
        fmt.status_line(State.RUNNING, iso(started)),
    ]


def takeover(agent: str, host: str, claim: str, at: datetime, reason: str) -> list[str]:
    """A new lock (so that the old claim's late result is fenced out) and ``interrupted``."""
    return [fmt.lock_line(agent, iso(at), host, claim), fmt.status_line(State.INTERRUPTED, iso(at), reason)]


def result_block(
    result: RunResult,
    *,
    agent: str,
    type_: str,
    complexity: str,
    safety: str,
    max_lines: int,
    heading: str = "Result",
) -> list[str]:
    body, dropped = cut(clean_output(result.output), max_lines)
    block = [
        fmt.result_heading(result.started.strftime("%Y-%m-%d %H:%M"), agent, heading),
        fmt.outcome_line(
            result.state.value, type_, complexity, safety, result.profile, seconds(result.duration)
        ),
        *run_details(result),
        *fmt.fenced("\n".join(body) if body else "(no output)"),
    ]
    if dropped and result.log:
        block.append(f"- log: {dropped} lines cut here; the whole output is in {result.log}")
    block.append(fmt.status_line(result.state, iso(ended(result)), result.reason))
    return block


def ended(result: RunResult) -> datetime:
    """When a run ended: the time its status line says."""
    return datetime.fromtimestamp(result.started.timestamp() + result.duration, result.started.tzinfo)


def run_details(result: RunResult) -> list[str]:
    """The lines between the outcome and the output: attempts, cost, and refused tool calls."""
    lines = []
    if result.attempts:
        lines.append(f"- attempts: {result.attempts}")
    facts = []
    if result.cost_usd is not None:
        facts.append(f"${result.cost_usd:.4f}")
    if result.turns is not None:
        facts.append(f"{result.turns} turns")
    if result.session:
        facts.append(f"session {result.session}")
    if facts:
        lines.append(f"- cost: {fmt.DOT.join(facts)}")
    lines += [f"- denied: {' '.join(denial.split())}" for denial in result.denials]
    if result.tasks:
        lines.append(f"- tasks: {result.tasks}")
    return lines


def status_only(state: State, at: datetime, reason: str) -> list[str]:
    return [fmt.status_line(state, iso(at), reason)]


def heading_link(file: str, heading: str, label: str) -> str:
    """An Obsidian link to a heading (``heading_anchor``), or to the whole note when ``heading`` is ""."""
    note = file[:-3] if file.endswith(".md") else file
    anchor = heading_anchor(linkable(heading))  # a heading with a secret in it: the whole note
    return f"[[{note}#{anchor}|{label}]]" if anchor else f"[[{note}|{label}]]"


@dataclass(frozen=True, slots=True)
class DailyEntry:
    at: datetime
    title: str
    file: str
    heading: str
    request_id: str
    summary: str  # e.g. "done · env-check · 0.4 s"


def daily_lines(entries: Sequence[DailyEntry], agent: str) -> list[str]:
    """The daily note's entries, redacted: titles and summaries quote requests and agents."""
    return list(redact_lines(_daily_lines(entries, agent)))


def _daily_lines(entries: Sequence[DailyEntry], agent: str) -> list[str]:
    out: list[str] = []
    for e in entries:
        if out:
            out.append("")
        title = title_shown(e.title) or e.request_id
        out.append(f"## {e.at.strftime('%H:%M')}{fmt.SEP}{agent}{fmt.SEP}{title}")
        out.append(f"- {heading_link(e.file, e.heading, e.request_id)}{fmt.DOT}{e.summary}")
    return out


def commit_message(outcomes: Sequence[PassOutcome]) -> str:
    """``outcomes``: (request id, state, detail).  The subject names the requests and what happened.
    Redacted: a commit message is pushed wherever the vault goes."""
    return redact(_commit_message(outcomes))


def _commit_message(outcomes: Sequence[PassOutcome]) -> str:
    if len(outcomes) == 1:
        rid, state, _ = outcomes[0]
        subject = f"vaultops: {rid} {state}"
    else:
        counts: dict[str, int] = {}
        for _, state, _ in outcomes:
            counts[state] = counts.get(state, 0) + 1
        summary = ", ".join(f"{n} {s}" for s, n in counts.items())
        subject = f"vaultops: {len(outcomes)} requests ({summary})"
    body = "\n".join(
        f"{rid}: {state}" + (f" ({detail})" if detail else "") for rid, state, detail in outcomes
    )
    return f"{subject}\n\n{body}\n"
