"""The proof that the gate saw every call: Claude Code's stream-json, read as it arrives, against what the
job's gate heard (``vaultops.hook.heard``).

Claude Code's hooks have been reported not firing in headless runs, and a hook that is gone fails open
without a word; vaultops's gate is such a hook.  So a job is not trusted to have been gated, it is checked:

- the session's start: Claude Code runs the job's ``SessionStart`` hook, which reaches the gate, before it
  prints its ``init`` line.  An ``init`` line (or a first tool call) the gate has not heard the start of
  means the hooks are not live: the job is stopped before any tool runs;
- every tool call: its ``PreToolUse`` event carries the ``tool_use_id`` the stream shows.  A tool's
  result for an id the gate never judged means the tool ran unjudged: the job is stopped at once;
- a call the stream shows but the gate has not heard of within ``GRACE`` seconds, while no call the gate
  let through is still running (Claude Code runs its calls one by one, each hook just before its tool), is
  one that should have reached the gate by then: the job is stopped too.

Claude Code refuses some calls itself before any hook (a tool it does not have, input its schema refuses,
an Edit of a file not read yet); their result is an error wrapped in ``<tool_use_error>``, and nothing ran.
Any other result of a call the gate did not judge counts as run, an error's included.

Stopping is the caller's (``vaultops.run.process``); what fails is the attempt, closed and never retried
(``Failure.UNGATED``).  Thread-safe: lines come from the reading thread, ``overdue`` from the watch loop.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vaultops.base.redact import redact
from vaultops.hook.heard import Heard
from vaultops.run.outcome import Attempt, Failure

# seconds a call the stream shows may take to reach the gate: its hook is a new process, and a busy machine
# may be slow to start one (the client itself gives up after 5 s, blocking the call)
GRACE = 10.0
REFUSED_BEFORE_GATE = "<tool_use_error>"  # Claude Code's own refusal, made before any hook: nothing ran
_SHOWN = 80  # characters of a call's input in the reason
SAID = "the gate did not see"  # every reason starts so: the status line says what failed
GATE_INCIDENT = "gate-incident"  # state.db's event for it, of a one-shot job or of a worker


@dataclass(frozen=True, slots=True)
class Call:
    """A ``tool_use`` block of the stream: its id, and what it asked, for the reason."""

    id: str
    tool: str
    asked: str = ""

    def shown(self) -> str:
        return f"{self.tool} ({self.asked})" if self.asked else self.tool


@dataclass(frozen=True, slots=True)
class Result:
    """A ``tool_result`` block: the call it answers, and whether Claude Code refused it before any hook."""

    id: str
    refused: bool = False


@dataclass(frozen=True, slots=True)
class Line:
    """What one stream line says that the proof needs."""

    init: bool = False
    calls: tuple[Call, ...] = ()
    results: tuple[Result, ...] = ()
    end: bool = False  # Claude Code's result: a session ran (a worker's prints one per turn)


def read_line(text: str) -> Line:
    """One line of stdout, as far as the proof goes (anything else: an empty ``Line``)."""
    if not text.lstrip().startswith("{"):
        return Line()
    try:
        event = json.loads(text)
    except (ValueError, RecursionError):
        return Line()
    if not isinstance(event, dict):
        return Line()
    kind = event.get("type")
    if kind == "system":
        return Line(init=event.get("subtype") == "init")
    if kind == "result":
        return Line(end=True)
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    if kind == "assistant":
        return Line(calls=tuple(_call(b) for b in blocks if b.get("type") == "tool_use"))
    if kind == "user":
        return Line(results=tuple(_result(b) for b in blocks if b.get("type") == "tool_result"))
    return Line()


def _call(block: dict[str, Any]) -> Call:
    given = block.get("input")
    asked = ""
    if isinstance(given, dict):
        for key in ("command", "file_path", "path", "url", "pattern", "query", "prompt"):
            if isinstance(given.get(key), str):
                asked = " ".join(given[key].split())
                break
    if len(asked) > _SHOWN:
        asked = asked[: _SHOWN - 1] + "…"
    return Call(str(block.get("id") or ""), str(block.get("name") or "a tool"), asked)


def _result(block: dict[str, Any]) -> Result:
    content = block.get("content")
    if isinstance(content, list):  # [{"type": "text", "text": …}, …]
        first = next((b for b in content if isinstance(b, dict) and b.get("type") == "text"), {})
        content = first.get("text")
    refused = block.get("is_error") is True and isinstance(content, str)
    refused = refused and str(content).lstrip().startswith(REFUSED_BEFORE_GATE)
    return Result(str(block.get("tool_use_id") or ""), refused)


@dataclass
class Proof:
    """One job's proof, fed its stream line by line (``feed``) and asked on a clock (``overdue``).  The
    first reason it finds is ``reason``, and is returned once."""

    heard: Heard
    grace: float = GRACE
    clock: Callable[[], float] = time.monotonic
    reason: str = ""
    waiting: dict[str, tuple[Call, float]] = field(default_factory=dict)  # calls without a result yet
    moved: float = 0.0  # when the stream last showed a call or a result
    session_ran: bool = False  # the stream showed Claude Code's result
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def feed(self, text: str) -> str:
        line = read_line(text)
        with self._lock:
            if self.reason:
                return ""
            now = self.clock()
            self.session_ran = self.session_ran or line.end
            if (line.init or line.calls) and not self.heard.session_started:
                before = f" before it asked for {line.calls[0].shown()}" if line.calls else ""
                return self._found(
                    f"{SAID} the session start: Claude Code began{before} without reaching the job's gate, "
                    "so its hooks are not live; vaultops stopped it before any tool ran"
                )
            for call in line.calls:
                self.waiting[call.id] = (call, now)
                self.moved = now
            for result in line.results:
                call, _ = self.waiting.pop(result.id, (Call(result.id, "a tool"), now))
                self.moved = now
                if not result.refused and not self.heard.judged(result.id):
                    return self._found(
                        f"{SAID} a call: {call.shown()} ran without the gate judging it; vaultops stopped "
                        "the job at once"
                    )
            return ""

    def overdue(self) -> str:
        """Why the job must stop now: a call the stream showed that has not reached the gate in time."""
        with self._lock:
            if self.reason or not self.waiting:
                return ""
            unheard = [(c, at) for c, at in self.waiting.values() if not self.heard.judged(c.id)]
            if not unheard or len(unheard) < len(self.waiting):  # none, or a judged call still runs
                return ""
            first, at = min(unheard, key=lambda pair: pair[1])
            since = max(at, self.moved, self.heard.last)
            if self.clock() - since < self.grace:
                return ""
            return self._found(
                f"{SAID} a call: {first.shown()} did not reach the gate within {self.grace:g} s of being "
                "asked; vaultops stopped the job"
            )

    def ended(self) -> str:
        """Why the finished run fails closed, once its every line was fed: what stopped it, or a session
        that ran (it printed Claude Code's result) whose start never reached the gate, so none of its calls
        were judged; a CLI that printed nothing of them could not be stopped, but is not taken as done."""
        with self._lock:
            if self.reason or not self.session_ran or self.heard.session_started:
                return self.reason
            return self._found(
                f"{SAID} the session start: Claude Code ran a whole session without reaching the job's gate, "
                "so its hooks were not live and nothing it did was judged"
            )

    def _found(self, reason: str) -> str:
        self.reason = reason
        return reason


def unjudged(attempt: Attempt, reason: str, secrets: tuple[str, ...] = ()) -> Attempt:
    """The attempt, failed closed: a tool ran (or could have) without the gate.  Never retried."""
    detail = redact(f"{reason}; it is not retried, nor given to another profile", secrets)
    return dataclasses.replace(attempt, failure=Failure.UNGATED, detail=detail)
