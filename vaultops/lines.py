"""The daemon's own lines: how they are written and how they are read back.

Both directions live here so that the format has one definition.  Everything is pure.
"""

from __future__ import annotations

import re
from datetime import datetime

from vaultops.base import typed
from vaultops.model import Answer, Lock, Outcome, State, StatusLine

SEP = " — "
DOT = " · "

_LOCK = re.compile(
    r"locked-by:\s*(?P<agent>\S+)\s+@\s+(?P<at>\S+)\s*\((?P<host>[^,()]*),\s*claim\s+(?P<claim>[0-9A-Za-z]+)"
    r"(?:,\s*lease\s+(?P<lease>\d+(?:\.\d+)?)\s*s)?\)\s*$"
)
_STATUS = re.compile(
    r"status:\s*(?P<state>[a-z]+)(?:\s+@\s+(?P<at>\S+))?(?:\s+(?:—|–|--?)\s+(?P<reason>.*?))?\s*$"
)
# The person's answers under a request; cleanup removes a code job's worktree (vaultops.run.worktrees).
ANSWER_KEYS = ("decision", "retry", "cancel", "cleanup")
# What a request that waits for the person takes, as the lines and messages vaultops writes say it (one
# wording, so that the note, the chat and the docs never tell the person different answers).
ESCALATION_ANSWERS = "`- decision: approve` below runs it once, `- decision: deny — why` does not"
REVIEW_ANSWERS = (
    "`- decision: accept` makes it done, `- retry: yes — what to change` sends it back, "
    "`- decision: deny` rejects it"
)
# A phone's period or exclamation mark after the answer is not part of it ("- decision: approve."); after
# one, the rest of the line is the comment as if a dash stood there ("approve. Looks fine").
_ANSWER = re.compile(
    r"(?P<key>decision|retry|cancel|cleanup)\s*:\s*(?P<value>[A-Za-z]+)"
    r"(?:\s+(?:(?P<once>once)|(?P<request>for\s+this\s+request)))?(?![\w-])(?P<stop>[.!,;]+)?"
    r"(?:\s*(?:—|–|--?)\s*(?P<comment>.*?)|(?(stop)\s+(?P<said>.*?)|(?!)))?\s*$",
    re.IGNORECASE,
)
# An answer item as a phone may type it, once ``typed.plain`` has undone its spaces and full-width forms: any
# bullet, any space after it, capitals (a colon look-alike is folded first).
_TYPED_ANSWER = re.compile(
    r"\s{0,3}[-*+\u2022\u2010-\u2015\u2212]\s*(?P<body>(?:decision|retry|cancel|cleanup)\s*:.*)$",
    re.IGNORECASE,
)
_COLONS = dict.fromkeys(map(ord, "\ua789\u2236"), ":")  # look-alikes NFKC leaves as they are
_RESULT_HEADING = re.compile(r"(?:Result|Run|Late result)\s+(?:—|–|-)\s")
_ITEM_FIELD = re.compile(
    r" {0,3}[-*+][ \t]+(?P<body>(?P<key>[A-Za-z][A-Za-z0-9_-]*)\s*:(?:\s+(?P<value>.*?)|\s*))$"
)
_STATE_BY_NAME = {s.value: s for s in State}


# --- reading -------------------------------------------------------------------------------------


def item_field(line: str) -> tuple[str, str, str] | None:
    """(key lower-cased, value, the item's text) of a ``- key: value`` list item line."""
    m = _ITEM_FIELD.match(line)
    if not m:
        return None
    return m.group("key").lower(), (m.group("value") or "").strip(), m.group("body")


def parse_lock(body: str, line: int) -> Lock | None:
    # the daemon's own form, read without the regular expression: "locked-by: A @ T (H, claim C, lease N s)"
    head, _, tail = body.partition(" (")
    if head.startswith("locked-by: ") and tail.endswith(")") and ", claim " in tail and " @ " in head:
        agent, _, at = head[11:].partition(" @ ")
        host, _, rest = tail[:-1].partition(", claim ")
        claim, _, lease = rest.partition(", lease ")
        seconds = lease[:-2] if lease.endswith(" s") else ""
        if (
            agent
            and " " not in agent
            and at
            and " " not in at
            and claim.isalnum()
            and (not lease or seconds.isdigit())
        ):
            return Lock(agent, at, host.strip(), claim, line, float(seconds) if seconds else None)
    m = _LOCK.match(body)
    if not m:
        return None
    return Lock(
        m["agent"], m["at"], m["host"].strip(), m["claim"], line, float(m["lease"]) if m["lease"] else None
    )


def parse_status(body: str, line: int) -> StatusLine | None:
    # the daemon's own form, read without the regular expression: "status: STATE @ TIME[ — reason]"
    if body.startswith("status: "):
        word, sep, rest = body[8:].partition(" @ ")
        state = _STATE_BY_NAME.get(word)
        if state is not None and sep:
            at, dash, reason = rest.partition(SEP)
            if at and " " not in at and (dash or not reason):
                return StatusLine(state, at, reason.strip(), line)
    m = _STATUS.match(body)
    state = _STATE_BY_NAME.get(m["state"]) if m else None
    if m is None or state is None:
        return None
    return StatusLine(state, m["at"] or "", (m["reason"] or "").strip(), line)


def line_time(at: str) -> datetime | None:
    """The time a status (or lock) line says, as vaultops writes it (ISO 8601); None when it is not one.
    Always aware: a time typed without an offset is this machine's local time, so that comparing it with
    the pass's clock never raises (a typed escalation time stopped every pass before its commit)."""
    try:
        when = datetime.fromisoformat(at)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.astimezone()


def parse_answer(body: str, line: int) -> Answer | None:
    m = _ANSWER.match(body)
    if not m:
        return None
    key = m["key"].lower()
    value = m["value"].lower()
    valid = {
        "decision": ("approve", "deny", "accept"), "retry": ("yes",), "cancel": ("yes",),
        "cleanup": ("yes", "force"),
    }[key]  # fmt: skip
    if value not in valid or ((m["once"] or m["request"]) and value != "approve"):
        return None
    comment = (m["comment"] or m["said"] or "").strip()
    return Answer(key, value, comment, line, "request" if m["request"] else "once")


def _typed_answer(line: str) -> re.Match[str] | None:
    if ":" not in line and not any(c in line for c in "\uff1a\ufe55\ufe13\ua789\u2236"):
        return None
    return _TYPED_ANSWER.match(typed.plain(line).translate(_COLONS))


def unread_answer(line: str) -> bool:
    """A line that is one of the person's answer items (``- decision: …``) with a value vaultops does not
    read (``approved``, ``yes``, ``ok``): it is named, never guessed at."""
    m = _typed_answer(line)
    return m is not None and parse_answer(m["body"], 0) is None


def read_answer(line: str, n: int) -> Answer | None:
    """The person's answer on note line ``line`` (number ``n``), read as a phone may type it: capitals
    (``- Decision: Approve``), a non-breaking space after the dash or the colon, a full-width colon or
    letters, zero-width characters, another bullet, a period after it.  Only the person's answer keys
    are read this way: vaultops's own status and lock lines are read in their one exact form (a line
    that only imitates one is set aside, ``vaultops.scan.lookalike``)."""
    m = _typed_answer(line)
    return parse_answer(m["body"], n) if m is not None else None


def parse_outcome(body: str, line: int) -> Outcome | None:
    if not body.startswith("outcome:"):
        return None
    parts = [p.strip() for p in body[8:].split("·")]
    state, type_, complexity, safety, route, duration = (parts + [""] * 6)[:6]
    return Outcome(state, type_, complexity, safety, route, duration, line)


SLOT_KEYS = ("scheduled", "missed")  # a scheduled run's time, and a time whose run was skipped


def parse_slot(body: str) -> datetime | None:
    """The time of a ``scheduled: <time> · …`` or ``missed: <time> — why`` line; None when it is not one."""
    key, _, rest = body.partition(":")
    if key not in SLOT_KEYS or not rest.startswith(" "):
        return None
    when = line_time(rest.split(maxsplit=1)[0]) if rest.strip() else None
    return when if when is not None and when.tzinfo is not None else None


def is_result_heading(text: str) -> bool:
    return text.startswith(("Result", "Run", "Late result")) and _RESULT_HEADING.match(text) is not None


# --- writing -------------------------------------------------------------------------------------


def lock_line(agent: str, at: str, host: str, claim: str, lease: float | None = None) -> str:
    lease_part = f", lease {round(lease)} s" if lease is not None else ""
    return f"- locked-by: {agent} @ {at} ({host}, claim {claim}{lease_part})"


def status_line(state: State, at: str, reason: str = "") -> str:
    reason = " ".join(reason.split())
    return f"- status: {state.value} @ {at}" + (f"{SEP}{reason}" if reason else "")


def outcome_line(state: str, type_: str, complexity: str, safety: str, route: str, duration: str) -> str:
    return "- outcome: " + DOT.join((state, type_, complexity, safety, route, duration))


def scheduled_line(slot: str, late: str = "") -> str:
    """``- scheduled: <the run's time>``, and `` · started 2 h 13 min late`` when it was."""
    return f"- scheduled: {slot}" + (f"{DOT}started {late} late" if late else "")


def worktree_line(path: str, branch: str, base: str) -> str:
    """Where a code job runs: ``- worktree: <folder> · branch vaultops/<id> · base <commit>``.  Written
    for the person; vaultops never reads it back (the folder and branch follow from the request)."""
    return f"- worktree: {path}{DOT}branch {branch}{DOT}base {base}"


_WORKTREE = re.compile(r"worktree: \S.* · branch \S+ · base [0-9a-f]{7,40}")


def is_worktree_line(body: str) -> bool:
    return _WORKTREE.fullmatch(body) is not None


def missed_line(slot: str, why: str) -> str:
    return f"- missed: {slot}{SEP}{' '.join(why.split())}"


def result_heading(when: str, agent: str, kind: str = "Result") -> str:
    """``### Result — when — agent``; a scheduled plan note's runs say ``### Run``."""
    return f"### {kind}{SEP}{when}{SEP}{agent}"


LATE_RESULT = "### Late result"


def late_result_heading(when: str, agent: str, claim: str) -> str:
    """A result that arrived after its claim was taken over: kept for the person, never the outcome."""
    return f"{LATE_RESULT}{SEP}{when}{SEP}{agent} (claim {claim}, superseded)"


def fenced(text: str, info: str = "text") -> list[str]:
    """``text`` in a tilde fence longer than any tilde run inside it, so nothing in it can end the fence
    or become a heading."""
    longest = max((len(run) for run in re.findall(r"~+", text)), default=0)
    fence = "~" * max(3, longest + 1)
    body = text.split("\n") if text else []
    return [fence + info, *body, fence]
