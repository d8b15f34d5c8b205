"""The daily digest: what waits for the person, what went wrong since the last one, the day's spend, and
what is unwell.  Pure: the caller gathers the facts (from the notes and state.db) and the clock.

Nothing waits in silence: an escalation nobody answered is listed here every day until it is answered,
oldest first, each with the link that opens it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vaultops.notify.message import Notice, obsidian_link, one_line, shorten

REASON_LIMIT = 100
MOST = 20  # items listed per section; the rest are counted


@dataclass(frozen=True, slots=True)
class Listed:
    """A request in the digest: where it is, since when, and why (its status line's reason)."""

    request_id: str
    rel: str
    since: str  # "2026-05-04 08:31"
    reason: str
    state: str = "escalated"


@dataclass(frozen=True, slots=True)
class DigestFacts:
    day: str  # YYYY-MM-DD
    host: str
    waiting: Sequence[Listed]  # open escalations, oldest first
    failed: Sequence[Listed]  # failed or interrupted since the last digest
    spent_usd: float
    budget_usd: float
    unhealthy: Sequence[str]  # "worker-code: offline (…)"
    stale: Sequence[str]  # workers that went stale


def _items(items: Sequence[Listed], vault_name: str) -> list[str]:
    lines = []
    for item in items[:MOST]:
        why = shorten(one_line(item.reason), REASON_LIMIT)
        state = "" if item.state == "escalated" else f" {item.state}"
        lines.append(f"- {item.request_id}{state} since {item.since}" + (f": {why}" if why else ""))
        lines.append(f"  {obsidian_link(vault_name, item.rel)}")
    if len(items) > MOST:
        lines.append(f"- … and {len(items) - MOST} more")
    return lines


def summary(facts: DigestFacts) -> str:
    """One line for the daily note: the digest in numbers."""
    return (
        f"{len(facts.waiting)} waiting for you · {len(facts.failed)} failed or interrupted · "
        f"${facts.spent_usd:.2f} of ${facts.budget_usd:.2f}"
    )


def digest_notice(vault_name: str, facts: DigestFacts) -> Notice:
    """One notice per day (its key names the day)."""
    lines: list[str] = []
    if facts.waiting:
        lines.append(f"Waiting for you ({len(facts.waiting)}), oldest first:")
        lines += _items(facts.waiting, vault_name)
    else:
        lines.append("Nothing waits for you.")
    if facts.failed:
        lines += ["", f"Failed or interrupted since the last digest ({len(facts.failed)}):"]
        lines += _items(facts.failed, vault_name)
    lines += ["", f"Spent today on {facts.host}: ${facts.spent_usd:.2f} of ${facts.budget_usd:.2f}."]
    if facts.unhealthy:
        lines.append("Unhealthy profiles: " + "; ".join(shorten(one_line(u), 160) for u in facts.unhealthy))
    if facts.stale:
        lines.append("Workers gone stale: " + ", ".join(facts.stale))
    title = f"{vault_name}: digest for {facts.day}" + (
        f" — {len(facts.waiting)} waiting for you" if facts.waiting else ""
    )
    return Notice(key=f"digest#{facts.day}", title=title, body="\n".join(lines))
