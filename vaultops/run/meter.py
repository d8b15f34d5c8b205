"""A Claude Code run's spend, read from its stream-json as it arrives, and the moment it crosses a limit.
Pure: it is fed the lines of stdout one at a time and answers.

vaultops enforces ``max_cost_usd`` and ``max_turns`` itself rather than trusting the agent CLI to keep
its own (claude-code-action #1577: turn limits silently exceeded).  The stream says, per model call, the
model and its usage as the call began: the input tokens are exact, the output tokens are not (the
``assistant`` line carries ``message_start``'s count), so the output is estimated from what the message
holds, never below what the stream reports.  Prices are per model family; a model this table does not
know is priced as the dearest, so an unknown model stops early rather than late.

Where the run is stopped:
- cost: at the ``assistant`` line that takes the spend to the limit (before its tool runs, if the kill
  is quicker than the tool's start, which the gate's hook makes likely);
- turns: at the tool result of the last allowed turn, before the model is called again, so the turns it
  was allowed all ran and their tools' work is kept; a turn over the limit that got through anyway
  stops it at once.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vaultops.model import Limits

# dollars per million tokens: (input, output).  Cache writes cost 1.25 times the input price, cache reads
# a tenth of it.
Price = tuple[float, float]
DEAREST: Price = (15.0, 75.0)
_CACHE_WRITE = 1.25
_CACHE_READ = 0.1
_CHARS_PER_TOKEN = 4
_NUMBER = re.compile(r"\d+")


def price_of(model: str, prices: Mapping[str, Price] | None = None) -> Price:
    """The price of a model: the longest key of ``prices`` (``[limits] prices``) that its name contains,
    else its family's list price, else the dearest."""
    name = model.lower().split("[", 1)[0]
    if prices:
        matching = [key for key in prices if key.lower() in name]
        if matching:
            return prices[max(matching, key=len)]
    # the version is the short numbers of the name: `claude-opus-4-20250514` is 4.0 (its date is no minor
    # version), `claude-3-5-haiku-20241022` is 3.5
    short = [int(n) for n in _NUMBER.findall(name) if len(n) <= 2]
    version = (short[0], short[1] if len(short) > 1 else 0) if short else (0, 0)
    if "opus" in name:
        return (5.0, 25.0) if version >= (4, 5) else DEAREST
    if "sonnet" in name:
        return (3.0, 15.0)
    if "haiku" in name:
        known = {(3, 0): (0.25, 1.25), (3, 5): (0.8, 4.0)}
        return (1.0, 5.0) if version >= (4, 5) else known.get(version, DEAREST)
    return DEAREST


@dataclass
class _Call:
    """One model call, as the stream has shown it so far (a message with several blocks comes as several
    ``assistant`` lines with one id)."""

    model: str
    input_tokens: int = 0
    cache_write: int = 0
    cache_read: int = 0
    output_reported: int = 0
    output_seen_chars: int = 0
    top_level: bool = True

    def cost(self, prices: Mapping[str, Price] | None) -> float:
        price_in, price_out = price_of(self.model, prices)
        output = max(self.output_reported, math.ceil(self.output_seen_chars / _CHARS_PER_TOKEN))
        tokens_in = self.input_tokens + _CACHE_WRITE * self.cache_write + _CACHE_READ * self.cache_read
        return (tokens_in * price_in + output * price_out) / 1_000_000


@dataclass
class Meter:
    limits: Limits
    prices: Mapping[str, Price] | None = None
    calls: dict[str, _Call] = field(default_factory=dict)
    session_id: str = ""
    last_text: str = ""  # what the model last said in words: kept in the result when the run is stopped
    final_cost: float | None = None  # the CLI's own figure, once its result line came
    final_turns: int | None = None
    crossed: str = ""

    @property
    def turns(self) -> int:
        counted = sum(1 for call in self.calls.values() if call.top_level)
        return max(counted, self.final_turns or 0)  # a result line can add to the count, never lower it

    @property
    def cost_usd(self) -> float:
        counted = sum(call.cost(self.prices) for call in self.calls.values())
        return max(counted, self.final_cost or 0.0)

    def feed(self, line: str) -> str:
        """Take one line of stdout.  Returns why the run must stop now, once; "" otherwise.  A line it
        cannot make sense of stops the run: what cannot be counted cannot be held to a limit."""
        if self.crossed:
            return ""
        try:
            return self._feed(line)
        except (ValueError, TypeError, ArithmeticError, RecursionError, AttributeError) as exc:
            self.crossed = f"stopped: vaultops could not count its spend ({type(exc).__name__} in its output)"
            return self.crossed

    def _feed(self, line: str) -> str:
        if not line.lstrip().startswith("{"):
            return ""  # not an event of the stream (a tool's stray print): nothing to count
        try:
            event = json.loads(line)
        except ValueError:
            return ""
        if not isinstance(event, dict):
            return ""
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            self.session_id = str(event.get("session_id") or "")
        elif kind == "assistant":
            self._assistant(event)
            self.crossed = self._over_cost() or self._over_turns(self.turns - 1)
        elif kind == "user" and event.get("parent_tool_use_id") is None:
            self.crossed = self._over_cost() or self._over_turns(self.turns)
        elif kind == "result":
            cost, turns = event.get("total_cost_usd"), event.get("num_turns")
            if isinstance(cost, int | float) and not isinstance(cost, bool) and math.isfinite(cost):
                self.final_cost = max(float(cost), 0.0)
            if isinstance(turns, int) and not isinstance(turns, bool):
                self.final_turns = max(turns, 0)
        return self.crossed

    def _assistant(self, event: Mapping[str, Any]) -> None:
        message = event.get("message")
        if not isinstance(message, dict):
            return
        ident = str(message.get("id") or f"line-{len(self.calls)}")
        call = self.calls.get(ident)
        if call is None:
            call = self.calls[ident] = _Call(str(message.get("model") or ""))
            call.top_level = event.get("parent_tool_use_id") is None
        usage = message.get("usage")
        if isinstance(usage, dict):
            call.input_tokens = max(call.input_tokens, _count(usage, "input_tokens"))
            call.cache_write = max(call.cache_write, _count(usage, "cache_creation_input_tokens"))
            call.cache_read = max(call.cache_read, _count(usage, "cache_read_input_tokens"))
            call.output_reported = max(call.output_reported, _count(usage, "output_tokens"))
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                text = str(block.get("text") or "")
                call.output_seen_chars += len(text)
                if text.strip() and call.top_level:
                    self.last_text = text
            else:
                call.output_seen_chars += len(json.dumps(block.get("input") or block.get("thinking") or ""))

    def _over_cost(self) -> str:
        limit = self.limits.max_cost_usd
        if limit is None or self.cost_usd < limit:
            return ""
        return f"cost limit ${limit:g} reached after {_turns(self.turns)} (${self.cost_usd:.2f} spent)"

    def _over_turns(self, done: int) -> str:
        """``done``: the turns that have finished with their tools; stopping here spends no more."""
        limit = self.limits.max_turns
        if limit is None or done < limit:
            return ""
        return f"turn limit {limit} reached after {_turns(self.turns)} (${self.cost_usd:.2f} spent)"


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        return 0
    return min(value, 10**12)  # more tokens than any model takes: counted as that many, not overflowing


def _turns(n: int) -> str:
    return f"{n} turn" if n == 1 else f"{n} turns"
