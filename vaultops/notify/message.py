"""What a notice says, rendered from facts.  Pure: no I/O, no clock; the caller passes every value.

A notice's ``key`` is what makes it unique in the outbox: the same key is never sent twice, so a key names
the occasion (a request in a state, a day's budget, a profile's failure), not the moment it was noticed.
Everything the person wrote, and every detail from an agent, is redacted here: a notice leaves the
machine for a chat service.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from urllib.parse import quote

from vaultops import lines as fmt
from vaultops.base.obsidian import heading_anchor
from vaultops.base.redact import redact

ASKED_LIMIT = 200  # characters of what was asked: enough to recognise it on a phone's lock screen
PROPOSED_LIMIT = 300
REASON_LIMIT = 120
ELLIPSIS = "…"


SHORTENED = "Shortened: open the note to read all of it; it can be approved only there."


def binding(file: str, request_id: str, text_hash: str, escalated_at: str) -> str:
    """What an answer in a message is bound to: the request, the text it asked when the message was
    sent, and the escalation the message was about.  Any of them changed: the message is out of date."""
    joined = "\0".join((file, request_id, text_hash, escalated_at)).encode("utf-8", "surrogateescape")
    return hashlib.blake2b(joined, digest_size=8).hexdigest()


@dataclass(frozen=True, slots=True)
class Ask:
    """What an escalation asks, for a channel that can take the answer in the message itself (Telegram's
    buttons) or must get the person's attention (Zulip's @mention)."""

    request_id: str
    binding: str  # see ``binding``
    link: str  # obsidian://… to open the request
    whole: bool  # the message shows all that was asked, unshortened and unredacted: only then can it approve


@dataclass(frozen=True, slots=True)
class Notice:
    key: str
    title: str
    body: str
    ask: Ask | None = None  # an escalation (or its reminder): the person is asked something
    topic: str = ""  # where a channel has topics (Zulip): a worker persona's own; "": the channel's

    def redacted(self, secrets: Sequence[str] = ()) -> Notice:
        """The notice as it may leave the machine: title and body redacted (the key names an occasion).
        A redaction that changed anything means the message no longer shows all that was asked."""
        title, body = redact(self.title, secrets), redact(self.body, secrets)
        ask = self.ask
        if ask is not None and ask.whole and (title, body) != (self.title, self.body):
            ask = replace(ask, whole=False)
            body += f"\n{SHORTENED}"  # the message says so itself: a press is judged by what it shows
        return Notice(self.key, title, body, ask, self.topic)


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


def obsidian_link(vault_name: str, rel: str, heading: str = "") -> str:
    """``obsidian://open?vault=…&file=…`` for a note, its path without ``.md`` as Obsidian wants it, and
    ``#heading`` after it to open the note there (Obsidian's "Open heading or block").

    Everything is percent-encoded (``/`` and ``#`` too, as Obsidian's own "Copy Obsidian URL" does), and a
    filename's undecodable bytes (surrogate escapes) are encoded as the bytes they stand for.
    """
    file = rel.removesuffix(".md")
    anchor = heading_anchor(heading)
    vault_q = quote(vault_name, safe="", errors="surrogateescape")
    file_q = quote(file + (f"#{anchor}" if anchor else ""), safe="", errors="surrogateescape")
    return f"obsidian://open?vault={vault_q}&file={file_q}"


class _Shown:
    """Text as a message shows it (one line, redacted, shortened), remembering whether any of it was cut
    or hidden."""

    def __init__(self) -> None:
        self.whole = True

    def __call__(self, text: str, limit: int) -> str:
        line = one_line(text)
        safe = redact(line)
        shown = shorten(safe, limit)
        # an ellipsis may be a cut made before (a long command in the reason): not whole either
        self.whole = self.whole and shown == line and ELLIPSIS not in line
        return shown


def waiting_key(rel: str, request_id: str, state: str, occasion: str, *, reminder: bool = False) -> str:
    """The outbox's key of a notice that a request waits for the person: one per status line."""
    key = f"{rel}#{request_id}#{state}" + (f"#{occasion}" if occasion else "")
    return key + ("#reminder" if reminder else "")


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
    bound: str = "",
    reminder: str = "",
    heading: str = "",
) -> Notice:
    """The message for a request that waits for the person (escalated, interrupted, …).

    One per request and state.  ``occasion`` (e.g. the status line's time) tells two escalations of one
    request apart: without it, a request escalated again after an approval would never be told again.
    ``bound``: the request's ``binding``, for an escalation that can be answered in the message.
    ``reminder``: how long it has waited, for the one reminder of an escalation still open.
    ``heading``: the request's heading, which its link opens.
    """
    show = _Shown()
    why = "; ".join(show(r, REASON_LIMIT) for r in reasons if r.strip())
    link = obsidian_link(vault_name, rel, heading)
    lines = [
        f"{request_id} is {state}" + (f", and has waited {reminder} for you." if reminder else "."),
        f"Asked: {show(asked, ASKED_LIMIT)}",
        f"Class: {safety_class}" + (f" — {why}" if why else ""),
        f"Proposed: {show(proposed, PROPOSED_LIMIT)}",
        how_to_answer(state, request_id),
        link,
    ]
    if not show.whole:
        lines.insert(4, SHORTENED)
    return Notice(
        key=waiting_key(rel, request_id, state, occasion, reminder=bool(reminder)),
        title=f"{vault_name}: {request_id} {state} ({safety_class})" + (" — reminder" if reminder else ""),
        body="\n".join(lines),
        ask=Ask(request_id, bound, link, show.whole) if bound else None,
    )


def how_to_answer(state: str, request_id: str) -> str:
    """The answers a request in ``state`` takes, as the message says them: a review takes no approval
    (an approval under it once ran the agent again), an interrupted or failed one a retry."""
    if state == "escalated":
        return (
            f"Answer under the request in the note ({fmt.ESCALATION_ANSWERS.replace('`', '')}), or reply "
            f'"approve {request_id}" or "deny {request_id} <why>" in chat.'
        )
    if state == "review":
        return f"Answer under the request in the note: {fmt.REVIEW_ANSWERS.replace('`', '')}."
    return "Write - retry: yes under the request in the note to run it again, or - cancel: yes to drop it."


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


def peer_notice(
    *, vault_name: str, peer: str, back: bool, last_pass: str, quiet_for: str, dashboard: str
) -> Notice:
    """Another machine made no pass for ``[daemon] peer_silent`` (its note did not change), or is back.
    One per silence: ``last_pass`` names it."""
    if back:
        title = f"{vault_name}: {peer} is back"
        said = f"{peer} makes passes again (last pass {last_pass})."
    else:
        title = f"{vault_name}: {peer} is quiet"
        said = (
            f"{peer} has made no pass since {last_pass}: its note in the vault has not changed for "
            f"{quiet_for}. Its daemon may be stopped, or the machine off or offline; on it, "
            "`vaultops doctor` says what is wrong. Its claims are taken over once their leases run out."
        )
    link = obsidian_link(vault_name, dashboard) if dashboard else ""
    key = f"peer#{peer}#{'back' if back else 'quiet'}#{last_pass}"
    return Notice(key=key, title=title, body="\n".join(p for p in (said, link) if p))


def machine_problem_notice(
    *, vault_name: str, host: str, kind: str, sentence: str, since: str, over: bool, dashboard: str
) -> Notice:
    """This machine cannot do part of its work (its remote cannot be reached or refuses its pushes, its
    disk is read-only or nearly full), or can again.  One per incident and kind: ``since`` names it, so a
    problem that comes back is told again."""
    if over:
        title = f"{vault_name}: {host} works again"
        said = f"{host}: its {kind} problem since {since} is over."
    else:
        title = f"{vault_name}: {host} needs you"
        said = f"{host}: {shorten(one_line(redact(sentence)), 400)}"
    link = obsidian_link(vault_name, dashboard) if dashboard else ""
    key = f"problem#{host}#{kind}#{since}#{'over' if over else 'begun'}"
    return Notice(key=key, title=title, body="\n".join(p for p in (said, link) if p))


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
