"""Request blocks: the inbox grammar on top of the note's outline.

A request is a top-level ATX heading of level 2 whose text starts with ``REQ-``; its block runs to the
next top-level heading of level 1 or 2.  Fields are top-level ``- key: value`` items before the block's
first ``###``.  The daemon's lines (locks, statuses, outcomes) and the person's answers are read wherever
they stand in the block; ``### Result — …`` sections are the daemon's and are not part of the prompt.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left
from collections import Counter
from dataclasses import replace

from vaultops import lines as fmt
from vaultops.model import Answer, Lock, Outcome, Request, State, StatusLine
from vaultops.scan.near import Near, as_heading, near_headings
from vaultops.scan.outline import Heading, Outline
from vaultops.scan.text import has_undecodable

FIELDS = frozenset(
    {
        "type",
        "from",
        "priority",
        "profile",
        "timeout",
        "tools",
        "ready",
        "max_cost_usd",
        "max_turns",
        "repo",
        "review",
        "checks",
    }
)
_ID = re.compile(r"REQ-[A-Za-z0-9._-]+")
_ID_FULL = re.compile(r"REQ-[A-Za-z0-9._-]+")
_ID_ENDS = frozenset(":,—–()[]")
# A bullet a phone types that Markdown does not read as one: a dash without a plain space after it, or
# another bullet character.
_TYPED_BULLETS = frozenset("-*+\u2022\u2010\u2011\u2012\u2013\u2014\u2015\u2212\uff0d")
_TYPED_BULLET = re.compile(
    r"[-*+](?:[^\S \t\r\n]|[\u200b-\u200d\u2060\ufeff])|[\u2022\u2010-\u2015\u2212\uff0d]"
)
# Requests in these states are over: only their last status, lock, outcome and fields are read.
FINISHED = frozenset({State.DONE, State.CANCELLED, State.DENIED, State.SUPERSEDED})
# ...and so are these, until the person answers under them.
WAITING_ON_PERSON = frozenset({State.ESCALATED, State.REVIEW})


def split_heading(text: str) -> tuple[str, str, str | None]:
    """(id, title, problem) of a heading text that starts with ``REQ-``."""
    word = text.split(maxsplit=1)[0] if text.strip() else text
    if _ID_FULL.fullmatch(word):
        return word, text[len(word) :].strip().lstrip(":,—–-").strip(), None
    m = _ID.match(word)
    if m and (m.end() == len(word) or word[m.end()] in _ID_ENDS):
        ident = m.group()
        title = text[len(ident) :].strip().lstrip(":,—–-").strip()
        return ident, title, None
    problem = (
        f"the id {word!r} may only use letters A-Z, digits, '.', '_' and '-' after 'REQ-'; "
        "rename it, for example REQ-2026-05-04-0830-check-stripe"
    )
    return word, text[len(word) :].strip(), problem


def _blocks(
    outline: Outline, n_lines: int, near: dict[int, Near]
) -> list[tuple[Heading, int, list[Heading]]]:
    """Each request heading with the end of its block and the headings inside it.  A heading that is
    almost a request (``near``) ends the block above it and starts one of its own, named."""
    out: list[tuple[Heading, int, list[Heading]]] = []
    current: tuple[Heading, list[Heading]] | None = None
    headings = outline.headings
    if near:
        shown = [as_heading(near[h.line]) if h.line in near else h for h in headings]
        lines = {h.line for h in headings}
        headings = sorted([*shown, *(as_heading(x) for n, x in near.items() if n not in lines)], key=_at)
    for h in headings:
        if h.level <= 2:
            if current is not None:
                out.append((current[0], h.line, current[1]))
                current = None
            if h.text.startswith("REQ-"):  # a `# REQ-` or an underlined one is a request gone wrong
                current = (h, [])
        elif current is not None:
            current[1].append(h)
    if current is not None:
        out.append((current[0], n_lines, current[1]))
    return out


def _at(h: Heading) -> int:
    return h.line


def parse_requests(
    lines: list[str], outline: Outline, file: str, *, full: bool = True, start: int = 0
) -> list[Request]:
    """The requests in a note.  With ``full=False`` a request that will not run as it stands (finished, or
    escalated and unanswered) is only a skeleton: its id, place and last status, which is all a pass needs.
    With ``full`` a finished one is a skeleton with its last lock and outcome, and an escalated one whole."""
    return mark_duplicates(block_requests(lines, outline, file, full=full, start=start))


def block_requests(
    lines: list[str], outline: Outline, file: str, *, full: bool = True, start: int = 0
) -> list[Request]:
    """Each block's request on its own: everything but the check for ids used twice in the note, which
    ``mark_duplicates`` adds (``vaultops.scan.pieces`` parses a note's blocks separately).  ``start``: the
    first line after the frontmatter."""
    items = sorted({*outline.items, *typed_items(lines, outline, start)})
    near = near_headings(lines, outline, start)
    out = []
    for h, end, subs in _blocks(outline, len(lines), near):
        r = _misshapen(_parse_block(lines, items, file, h, end, subs, full), h)
        out.append(replace(r, problems=(near[h.line].problem, *r.problems)) if h.line in near else r)
    return out


def typed_items(lines: list[str], outline: Outline, start: int = 0) -> list[int]:
    """Top-level lines that are not list items only because of how a phone typed them (a non-breaking
    space after the dash, a bullet character): where the person's answers may stand too."""
    return [
        n
        for n in range(start, len(lines))
        if lines[n][:1] in _TYPED_BULLETS
        and n not in outline.items
        and _TYPED_BULLET.match(lines[n])
        and not (n and outline.open_after(n - 1) is not None)
    ]


def mark_duplicates(requests: list[Request], counts: Counter[str] | None = None) -> list[Request]:
    """The requests, those whose id the note uses more than once with a problem saying so.  ``counts``:
    how often each id occurs in the whole note, when ``requests`` are only some of its requests."""
    if counts is None:
        counts = Counter(r.id for r in requests)
    if all(counts[r.id] == 1 for r in requests):
        return requests
    out = []
    for r in requests:
        if counts[r.id] > 1:
            # no line numbers: the pass that writes this may insert lines above the other copies
            problem = (
                f"duplicate id {r.id} ({counts[r.id]} requests in this note use it); give each its own id"
            )
            r = _with_problem(r, problem)
        out.append(r)
    return out


def whole_note_request(
    lines: list[str], outline: Outline, file: str, after: int, ident: str, title: str, *, full: bool = True
) -> Request:
    """A request whose block is everything after line ``after`` (a plan note's body, below its
    frontmatter): the same lock, status, answer and result lines as under an inbox heading."""
    heading = Heading(after, 2, f"REQ-{ident}", True)
    subs = [h for h in outline.headings if h.line > after]
    request = _parse_block(lines, sorted(outline.items), file, heading, len(lines), subs, full)
    return replace(request, id=ident, title=title)


def _misshapen(r: Request, heading: Heading) -> Request:
    """A REQ- heading that is not ``## REQ-…``: a heading underlined with === or --- (setext), or a level-1
    ``# REQ-``.  It is not run, but it is not ignored either: Obsidian shows it as a heading, so the person
    believes they asked, and silence would leave them waiting.  Running it would guess: an underline may be
    a thematic break typed under a paragraph that merely begins with "REQ-".  One error line says how to
    write it; once it is rewritten as ``## REQ-…`` it is read like any request."""
    if heading.level == 2 and heading.atx:
        return r
    if heading.atx:
        shape = "a level-1 heading (# REQ-…)"
    else:
        shape = f"a heading underlined with {'===' if heading.level == 1 else '---'}"
    return _with_problem(
        r, f"{r.id} is {shape}; vaultops takes requests only from level-2 headings: write it as `## {r.id} …`"
    )


def _with_problem(r: Request, problem: str) -> Request:
    return replace(r, problems=(*r.problems, problem))


def _parse_block(
    lines: list[str], items: list[int], file: str, heading: Heading, end: int, subs: list[Heading], full: bool
) -> Request:
    start = heading.line
    ident, title, id_problem = split_heading(heading.text)
    fields_end = subs[0].line if subs else end
    daemon_lines: set[int] = set()
    for i, h in enumerate(subs):
        if h.level == 3 and fmt.is_result_heading(h.text):
            section_end = next((g.line for g in subs[i + 1 :] if g.level <= 3), end)
            daemon_lines.update(range(h.line, section_end))

    block_items = items[bisect_left(items, start + 1) : bisect_left(items, end)]
    last, answered = _last_status(lines, block_items)
    # full: an escalation is read whole, for the text it was written for (an answer from chat is bound to it)
    waiting = last is not None and last.state in WAITING_ON_PERSON and not answered and not full
    # a finished request the person answered since (`- cleanup:` its worktree) is read whole
    if last is not None and ((last.state in FINISHED and not answered) or waiting):
        if not full:  # with its last lock: a result still lands under its claim after a line typed later
            lock = _last_lock(lines, block_items)
            return Request(
                ident, title, file, start, end, _last_line(lines, start, end), {}, None,
                locks=(lock,) if lock is not None else (), statuses=(last,),
            )  # fmt: skip
        return _finished(lines, block_items, file, ident, title, start, end, fields_end, daemon_lines, last)

    fields: dict[str, str] = {}
    field_lines: set[int] = set()
    answer_lines: set[int] = set()
    locks: list[Lock] = []
    statuses: list[StatusLine] = []
    answers: list[Answer] = []
    unread: list[tuple[int, str]] = []
    outcomes: list[Outcome] = []
    outcome_line = -1
    for n in block_items:
        line = lines[n]
        # The daemon's own lines have a fixed prefix; check it before the general pattern.
        if line.startswith("- status: ") and (status := fmt.parse_status(line[2:], n)):
            statuses.append(status)
            daemon_lines.add(n)
            continue
        if line.startswith("- outcome: ") and n in daemon_lines:
            outcome_line = n
            continue
        parsed = fmt.item_field(line)
        key, value, body = parsed if parsed is not None else ("", "", "")
        if (parsed is None or key in fmt.ANSWER_KEYS) and (answer := fmt.read_answer(line, n)):
            answers.append(answer)  # as a phone may type it: `- Decision: Approve.` (never a status line)
            field_lines.add(n)
            answer_lines.add(n)
        elif (parsed is None or key in fmt.ANSWER_KEYS) and fmt.unread_answer(line):
            unread.append((n, " ".join(line.split())))  # `- decision: approved`: named, not guessed at
        elif parsed is None:
            continue
        elif key == "locked-by" and (lock := fmt.parse_lock(body, n)):
            locks.append(lock)
            daemon_lines.add(n)
        elif key == "status" and (status := fmt.parse_status(body, n)):
            statuses.append(status)
            daemon_lines.add(n)
        elif key == "outcome" and n in daemon_lines:
            outcome_line = n
        elif key == "worktree" and fmt.is_worktree_line(body):
            daemon_lines.add(n)  # where its job ran: vaultops's, not the prompt (and never read back)
        elif key in fmt.SLOT_KEYS and fmt.parse_slot(body) is not None:
            daemon_lines.add(n)  # a scheduled run's time, or one it skipped: vaultops's, not the prompt
        elif key in FIELDS and n < fields_end and n not in daemon_lines and key not in fields:
            fields[key] = value
            field_lines.add(n)
    if outcome_line >= 0 and (item := fmt.item_field(lines[outcome_line])):
        outcome = fmt.parse_outcome(item[2], outcome_line)
        if outcome:
            outcomes.append(outcome)

    # An answer line that does not read, below a status line, is an answer, not part of what is asked (its
    # text hash stays the one an escalation was written for); above them all it is the person's text.  It
    # is named while it stands after the status of a request that waits for an answer.
    unread = [(n, said) for n, said in unread if statuses and n > statuses[0].line]
    field_lines.update(n for n, _ in unread)
    answer_lines.update(n for n, _ in unread)
    waits = bool(statuses) and statuses[-1].state in WAITING_ON_PERSON
    unread = [(n, said) for n, said in unread if waits and n > statuses[-1].line]
    last_line = _last_line(lines, start, end)
    statuses_t = tuple(statuses)
    problems: list[str] = [id_problem] if id_problem else []
    text, digest, more = _person_part(lines, ident, start, end, daemon_lines, daemon_lines | field_lines)
    asked = [lines[n].rstrip() for n in range(max(start, 0), end) if n not in daemon_lines | answer_lines]
    problems += more
    return Request(
        id=ident,
        title=title,
        file=file,
        start=start,
        end=end,
        last_line=last_line,
        fields=fields,
        text=text,
        locks=tuple(locks),
        statuses=statuses_t,
        answers=tuple(answers),
        outcomes=tuple(outcomes),
        problems=tuple(problems),
        person_hash=digest,
        text_hash=_digest("\n".join(line for line in asked if line)),
        unread=tuple(unread),
    )


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()


def _last_line(lines: list[str], start: int, end: int) -> int:
    """The block's last non-blank line: where the daemon inserts."""
    last = end - 1
    while last > start and not lines[last].strip():
        last -= 1
    return last


def _last_status(lines: list[str], block_items: list[int]) -> tuple[StatusLine | None, bool]:
    """The block's last status line, and whether the person has answered after it."""
    answered = False
    for n in reversed(block_items):
        line = lines[n]
        if line.startswith("- status: ") and (status := fmt.parse_status(line[2:], n)):
            return status, answered
        if "status:" in line:
            parsed = fmt.item_field(line)
            if parsed is not None and parsed[0] == "status" and (status := fmt.parse_status(parsed[2], n)):
                return status, answered
        if not answered:  # as a phone may type it (`- Decision: Approve`); "— status: ok" too; or one
            answered = fmt.read_answer(line, n) is not None or fmt.unread_answer(line)  # to be named
    return None, answered


def _last_lock(lines: list[str], block_items: list[int]) -> Lock | None:
    for n in reversed(block_items):
        line = lines[n]
        if line.startswith("- locked-by: "):
            return fmt.parse_lock(line[2:], n)
        if "locked-by:" in line and (item := fmt.item_field(line)) is not None and item[0] == "locked-by":
            return fmt.parse_lock(item[2], n)
    return None


def _finished(
    lines: list[str], block_items: list[int], file: str, ident: str, title: str, start: int, end: int,
    fields_end: int, daemon_lines: set[int], last: StatusLine,
) -> Request:  # fmt: skip
    """A request that will not run (again) as it stands: only what ``status`` shows is read (its last lock
    and outcome, else its fields).  Its text is None."""
    lock: Lock | None = None
    outcome: Outcome | None = None
    for n in reversed(block_items):
        line = lines[n]
        if lock is None and line.startswith("- locked-by: "):
            lock = fmt.parse_lock(line[2:], n)
        elif outcome is None and line.startswith("- outcome: ") and n in daemon_lines:
            outcome = fmt.parse_outcome(line[2:], n)
        elif lock is None and "locked-by:" in line:
            item = fmt.item_field(line)
            if item is not None and item[0] == "locked-by":
                lock = fmt.parse_lock(item[2], n)
        elif outcome is None and "outcome:" in line and n in daemon_lines:
            item = fmt.item_field(line)
            if item is not None and item[0] == "outcome":
                outcome = fmt.parse_outcome(item[2], n)
        if lock is not None and outcome is not None:
            break
    fields: dict[str, str] = {}
    if outcome is None:
        for n in block_items:
            if n >= fields_end:
                break
            item = fmt.item_field(lines[n])
            if item is not None and item[0] in FIELDS and n not in daemon_lines:
                fields.setdefault(item[0], item[1])
    last_line = _last_line(lines, start, end)
    return Request(
        id=ident, title=title, file=file, start=start, end=end, last_line=last_line, fields=fields, text=None,
        locks=(lock,) if lock else (), statuses=(last,), outcomes=(outcome,) if outcome else (),
    )  # fmt: skip


def _person_part(
    lines: list[str], ident: str, start: int, end: int, daemon: set[int], skip: set[int]
) -> tuple[str, str, list[str]]:
    """The prompt text, the hash of the person's lines, and problems with them."""
    person = [n for n in range(max(start, 0), end) if n not in daemon]  # -1: a plan note's synthetic heading
    text_lines = [lines[n] for n in range(start + 1, end) if n not in skip]
    while text_lines and not text_lines[0].strip():
        text_lines.pop(0)
    while text_lines and not text_lines[-1].strip():
        text_lines.pop()
    text = "\n".join(text_lines)
    problems = []
    bad = [n + 1 for n in person if has_undecodable(lines[n])]
    if bad:
        problems.append(
            f"bytes that are not UTF-8 on line {', '.join(map(str, bad[:5]))}; re-save the note as UTF-8"
        )
    if not text.strip():
        problems.append(f"{ident} has no text; write what you want done under the heading")
    joined = "\n".join(lines[n] for n in person)
    if "\0" in joined:  # no program can be given it: an argument or environment string ends at a NUL
        problems.append(
            f"{ident}: the request text contains a NUL byte, which cannot be passed to a program; remove it"
        )
    return text, _digest(joined), problems
