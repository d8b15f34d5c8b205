"""What a notice says, rendered from facts.  Pure: no I/O, no clock; the caller passes every value.

A notice's ``key`` is what makes it unique in the outbox: the same key is never sent twice, so a key names
the occasion (a request in a state, a day's budget, a profile's failure), not the moment it was noticed.
Everything the person wrote, and every detail from an agent, is redacted here: a notice leaves the
machine for a chat service.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from vaultops.base.redact import redact

ASKED_LIMIT = 200  # characters of what was asked: enough to recognise it on a phone's lock screen
PROPOSED_LIMIT = 300
REASON_LIMIT = 120
ELLIPSIS = "…"


@dataclass(frozen=True, slots=True)
class Notice:
    key: str
    title: str
    body: str

    def redacted(self, secrets: Sequence[str] = ()) -> Notice:
        """The notice as it may leave the machine: title and body redacted (the key names an occasion)."""
        return Notice(self.key, redact(self.title, secrets), redact(self.body, secrets))


def shorten(text: str, limit: int = ASKED_LIMIT) -> str:
    """``text`` itself when it fits in ``limit`` characters, else a prefix of it followed by "…".

    The prefix ends before a space when there is one in the second half of the window, so words are
    not cut; one long word (a URL, a hash) is cut where the limit falls.  The result is at most
    ``limit`` characters, "…" included.
    """
    if len(text) <= limit:
        return text
    room = max(limit - len(ELLIPSIS), 0)
    cut = room
    for i in range(room, room // 2, -1):  # cut before a space: text[i] is the first character dropped
        if text[i].isspace():
            cut = i
            break
    head = text[:cut].rstrip()
    if not head:  # only spaces before the boundary: cutting at the limit says more
        head = text[:room]
    return head + ELLIPSIS


def one_line(text: str) -> str:
    """Runs of whitespace (newlines included) as single spaces: a notice preview is one paragraph."""
    return " ".join(text.split())


def obsidian_link(vault_name: str, rel: str) -> str:
    """``obsidian://open?vault=…&file=…`` for a note, its path without ``.md`` as Obsidian wants it.

    Everything is percent-encoded (``/`` too, as Obsidian's own "Copy Obsidian URL" does), and a
    filename's undecodable bytes (surrogate escapes) are encoded as the bytes they stand for.
    """
    file = rel.removesuffix(".md")
    vault_q = quote(vault_name, safe="", errors="surrogateescape")
    file_q = quote(file, safe="", errors="surrogateescape")
    return f"obsidian://open?vault={vault_q}&file={file_q}"


def escalation_notice(
    *,
    vault_name: str,
    rel: str,
    request_id: str,
    state: str,
    asked: str,
    safety_class: str,
    reasons: Sequence[str],
    proposed: str,
    occasion: str = "",
) -> Notice:
    """The message for a request that waits for the person (escalated, interrupted, …).

    One per request and state.  ``occasion`` (e.g. the status line's time) tells two escalations of one
    request apart: without it, a request escalated again after an approval would never be told again.
    """
    why = "; ".join(shorten(one_line(redact(r)), REASON_LIMIT) for r in reasons if r.strip())
    lines = [
        f"{request_id} is {state}.",
        f"Asked: {shorten(one_line(redact(asked)))}",
        f"Class: {safety_class}" + (f" — {why}" if why else ""),
        f"Proposed: {shorten(one_line(redact(proposed)), PROPOSED_LIMIT)}",
        f"Answer under the request in the note (- decision: approve, or - decision: deny — why), or reply "
        f'"approve {request_id}" or "deny {request_id} <why>" to the Telegram bot.',
        obsidian_link(vault_name, rel),
    ]
    return Notice(
        key=f"{rel}#{request_id}#{state}" + (f"#{occasion}" if occasion else ""),
        title=f"{vault_name}: {request_id} {state} ({safety_class})",
        body="\n".join(lines),
    )


def budget_notice(
    *, vault_name: str, day: str, spent_usd: float, budget_usd: float, percent: int = 80
) -> Notice:
    """The day's cost reached ``percent`` of the budget: one notice per day and threshold."""
    if percent >= 100:
        then = "Heavy work waits until tomorrow, or until [limits] daily_budget_usd is raised."
    else:
        then = "At 100 % heavy work waits until the next day."
    body = f"Spent ${spent_usd:.2f} of the ${budget_usd:.2f} daily budget on {day} ({percent} %). {then}"
    title = f"{vault_name}: {percent} % of today's budget"
    return Notice(key=f"budget#{day}#{percent}", title=title, body=body)


def auth_failure_notice(*, vault_name: str, profile: str, detail: str, since: str) -> Notice:
    """An executor profile's agent CLI cannot log in.

    ``since`` names the failure (the day, or when it started): one notice per profile and failure, so a
    profile that fails again next week is told again, and one failing all day is told once.
    """
    body = (
        f"The executor profile {profile} failed to authenticate: {shorten(one_line(redact(detail)), 300)}\n"
        "Its jobs go to the next profile of their route, or wait. Log its agent CLI in again on the "
        "machine that runs vaultops (vaultops doctor checks it)."
    )
    return Notice(key=f"auth#{profile}#{since}", title=f"{vault_name}: {profile} cannot log in", body=body)
