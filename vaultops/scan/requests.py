"""Request blocks: the inbox grammar on top of the note's outline.

A request is a top-level ATX heading of level 2 whose text starts with ``REQ-``; its block runs to the
next top-level heading of level 1 or 2.  Fields are top-level ``- key: value`` items before the block's
first ``###``.  The daemon's lines (locks, statuses, outcomes) and the person's answers are read wherever
they stand in the block; ``### Result — …`` sections are the daemon's and are not part of the prompt.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter

from vaultops import lines as fmt
from vaultops.model import Answer, Lock, Outcome, Request, StatusLine
from vaultops.scan.outline import Heading, Outline
from vaultops.scan.text import has_undecodable

FIELDS = frozenset({"type", "from", "priority", "profile", "timeout", "ready"})
_ID = re.compile(r"REQ-[A-Za-z0-9._-]+")
_ID_ENDS = frozenset(":,—–()[]")


def split_heading(text: str) -> tuple[str, str, str | None]:
    """(id, title, problem) of a heading text that starts with ``REQ-``."""
    word = text.split(maxsplit=1)[0] if text.split() else text
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


def _blocks(outline: Outline, n_lines: int) -> list[tuple[Heading, int]]:
    heads = outline.headings
    out = []
    for i, h in enumerate(heads):
        if h.level == 2 and h.atx and h.text.startswith("REQ-"):
            end = next((g.line for g in heads[i + 1 :] if g.level <= 2), n_lines)
            out.append((h, end))
    return out


def parse_requests(lines: list[str], outline: Outline, file: str) -> list[Request]:
    requests = [_parse_block(lines, outline, file, h, end) for h, end in _blocks(outline, len(lines))]
    counts = Counter(r.id for r in requests)
    if all(c == 1 for c in counts.values()):
        return requests
    firsts: dict[str, int] = {}
    for r in requests:
        firsts.setdefault(r.id, r.start)
    out = []
    for r in requests:
        if counts[r.id] > 1:
            others = [str(o.start + 1) for o in requests if o.id == r.id and o is not r]
            problem = (
                f"duplicate id {r.id} (also at line {', '.join(others)}); "
                "give each request its own id"
            )
            r = _with_problem(r, problem)
        out.append(r)
    return out


def _with_problem(r: Request, problem: str) -> Request:
    return Request(
        r.id, r.title, r.file, r.start, r.end, r.last_line, r.fields, r.text, r.locks, r.statuses,
        r.answers, r.outcomes, (*r.problems, problem), r.person_hash,
    )  # fmt: skip


def _parse_block(lines: list[str], outline: Outline, file: str, heading: Heading, end: int) -> Request:
    start = heading.line
    ident, title, id_problem = split_heading(heading.text)
    subs = [h for h in outline.headings if start < h.line < end]
    fields_end = subs[0].line if subs else end
    daemon_lines: set[int] = set()
    for i, h in enumerate(subs):
        if h.level == 3 and fmt.is_result_heading(h.text):
            section_end = next((g.line for g in subs[i + 1 :] if g.level <= 3), end)
            daemon_lines.update(range(h.line, section_end))

    fields: dict[str, str] = {}
    field_lines: set[int] = set()
    locks: list[Lock] = []
    statuses: list[StatusLine] = []
    answers: list[Answer] = []
    outcomes: list[Outcome] = []
    items = outline.items
    for n in range(start + 1, end):
        if n not in items:
            continue
        body = fmt.item_body(lines[n])
        if body is None:
            continue
        pair = fmt.field_of(body)
        if pair is None:
            continue
        key = pair[0]
        if key == "locked-by" and (lock := fmt.parse_lock(body, n)):
            locks.append(lock)
            daemon_lines.add(n)
        elif key == "status" and (status := fmt.parse_status(body, n)):
            statuses.append(status)
            daemon_lines.add(n)
        elif key == "outcome" and n in daemon_lines and (outcome := fmt.parse_outcome(body, n)):
            outcomes.append(outcome)
        elif key in ("decision", "retry", "cancel") and (answer := fmt.parse_answer(body, n)):
            answers.append(answer)
            field_lines.add(n)
        elif key in FIELDS and n < fields_end and n not in daemon_lines and key not in fields:
            fields[key] = pair[1]
            field_lines.add(n)

    person = [lines[start]] + [lines[n] for n in range(start + 1, end) if n not in daemon_lines]
    text_lines = [
        lines[n] for n in range(start + 1, end) if n not in daemon_lines and n not in field_lines
    ]
    while text_lines and not text_lines[0].strip():
        text_lines.pop(0)
    while text_lines and not text_lines[-1].strip():
        text_lines.pop()
    text = "\n".join(text_lines)

    problems: list[str] = []
    if id_problem:
        problems.append(id_problem)
    bad = [start + 1 + i for i, line in enumerate(person) if has_undecodable(line)]
    if bad:
        problems.append(
            f"bytes that are not UTF-8 on line {', '.join(str(b + 1) for b in bad[:5])}; "
            "re-save the note as UTF-8"
        )
    if not text.strip():
        problems.append(f"{ident} has no text; write what you want done under the heading")

    last = end - 1
    while last > start and not lines[last].strip():
        last -= 1
    digest = hashlib.blake2b("\n".join(person).encode("utf-8", "surrogateescape"), digest_size=12)
    return Request(
        id=ident,
        title=title,
        file=file,
        start=start,
        end=end,
        last_line=last,
        fields=fields,
        text=text,
        locks=tuple(locks),
        statuses=tuple(statuses),
        answers=tuple(answers),
        outcomes=tuple(outcomes),
        problems=tuple(problems),
        person_hash=digest.hexdigest(),
    )
