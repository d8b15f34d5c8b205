"""Putting vaultops's own commit on top of a newer remote version of a note, without a merge.  Pure.

vaultops only ever inserts whole lines.  When its commit X (parent P) must go on top of a newer remote
version R of the same note, git's merge could leave conflict markers or place our lines in someone else's
block; instead R is taken exactly as it is and the lines X inserted relative to P are inserted into it again.
Nothing of R is ever removed or reordered.

- vaultops's own end-of-block lines go to the end of the same request's block in R, but only if the request
  is still as P had it (same state, same lock claim): that is the fencing of docs/architecture.md, "Git".
  Otherwise another machine acted on it: a lost claim is dropped, and a result is kept only as a
  ``### Late result``.
- Any other inserted lines (the person's, on a shared clone) go right after the line they followed in P,
  looked for in the same request's block in R.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from vaultops import lines as fmt
from vaultops.model import Request, State, index_by_id, targets_of
from vaultops.render.late import late_result
from vaultops.scan.note import ParsedNote, parse_note
from vaultops.scan.text import NoteText
from vaultops.store.notes import splice
from vaultops.store.placement import LIST_END, Edit, at_block_end, at_note_end, place

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Replayed:
    raw: bytes  # R with our insertions re-applied
    late: tuple[str, ...]  # request ids whose result lines became "late results" (fencing failed)
    dropped: tuple[str, ...]  # one human sentence per insertion run that could not be placed or was dropped


def replay(rel: str, base: bytes, ours: bytes, theirs: bytes, *, requests: bool = True) -> Replayed:
    """``theirs`` (R) with the lines that ``ours`` (X) inserted relative to ``base`` (P).  ``requests=False``
    is for notes that are not inboxes (daily notes): every run goes after its anchor line."""
    if ours in (base, theirs):  # nothing of ours to add, or the remote already has exactly our version
        return Replayed(theirs, (), ())
    p = parse_note(rel, base, requests=requests)
    r = parse_note(rel, theirs, requests=requests)
    x = parse_note(rel, ours, requests=False)
    return _Replay(rel, p, r, x).apply(_runs(p.lines, x.lines))


def is_insertion(old: bytes, new: bytes) -> bool:
    """``new`` is ``old`` with whole lines inserted, and nothing changed or removed."""
    return _is_subsequence(NoteText.from_bytes(old).lines, NoteText.from_bytes(new).lines)


def insertion_runs(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, list[str]]]:
    """The runs of lines ``new`` inserted into ``old``: (the ``old`` index they go before, the lines).
    What ``new`` deleted or changed is ignored: lines are never removed from the remote version."""
    return [(i, lines) for i, _, lines in _runs(old, new)]


def _runs(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, int, list[str]]]:
    """``insertion_runs`` with, for each run, the ``new`` index it starts at."""
    # SequenceMatcher without autojunk takes quadratic time on a long inbox full of equal lines (blank
    # ones, "- type: env-check"), so it only aligns the gaps between the lines that pin the alignment:
    # the common ends, and lines found exactly once on each side, in the same order (as patience diff
    # does).  When ``new`` only inserts into ``old``, those lines must match each other anyway.
    limit = min(len(old), len(new))
    head = 0
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    a, b = old[head : len(old) - tail], new[head : len(new) - tail]
    runs: list[tuple[int, int, list[str]]] = []
    i0 = j0 = 0
    for i1, j1 in [*_unique_matches(a, b), (len(a), len(b))]:
        if j0 < j1:
            runs += [(head + i0 + i, head + j0 + j, lines) for i, j, lines in _gap_runs(a[i0:i1], b[j0:j1])]
        i0, j0 = i1 + 1, j1 + 1
    return runs


def _gap_runs(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int, list[str]]]:
    if not a:
        return [(0, 0, list(b))]
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    # Longest-block matching can pair equal lines so that some are "replaced" although b only inserted
    # into a: replaying that would put a line of R in twice.  Then align by insertions only.
    if any(tag in ("replace", "delete") for tag, *_ in ops) and _is_subsequence(a, b):
        return _insertions_only(a, b)
    return [(i1, j1, list(b[j1:j2])) for tag, i1, _, j1, j2 in ops if tag in ("insert", "replace")]


def _is_subsequence(a: Sequence[str], b: Sequence[str]) -> bool:
    it = iter(b)
    return all(any(line == other for other in it) for line in a)


_SMALL = 40_000  # len(a) * len(b) up to which the fewest runs are worked out exactly


def _insertions_only(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int, list[str]]]:
    """The runs when ``a`` is a subsequence of ``b``: as few as possible (what vaultops inserted at one
    place stays one run), or, in a gap too long to work that out, each line of a matched as soon as it can."""
    n, m = len(a), len(b)
    matched: list[bool] = []  # for each line of b: is it a's next line (else inserted)?
    if n * m <= _SMALL:
        # fewest[open][i][j]: fewest runs that insert b[j:] around a[i:], when b[j - 1] was inserted (open)
        far = m + 1
        fewest = [[[far] * (m + 1) for _ in range(n + 1)] for _ in range(2)]
        fewest[0][n][m] = fewest[1][n][m] = 0
        for i in range(n, -1, -1):
            for j in range(m - 1, -1, -1):
                match = fewest[0][i + 1][j + 1] if i < n and a[i] == b[j] else far
                fewest[0][i][j] = min(match, fewest[1][i][j + 1] + 1)
                fewest[1][i][j] = min(match, fewest[1][i][j + 1])
        i, is_open = 0, 0
        for j in range(m):
            insert = fewest[1][i][j + 1] + (1 - is_open)
            take = i < n and a[i] == b[j] and fewest[0][i + 1][j + 1] <= insert
            matched.append(take)
            i, is_open = (i + 1, 0) if take else (i, 1)
    else:
        i = 0
        for line in b:
            matched.append(i < n and line == a[i])
            i += matched[-1]
    runs: list[tuple[int, int, list[str]]] = []
    i = 0
    for j, (line, take) in enumerate(zip(b, matched, strict=True)):
        if take:
            i += 1
        elif runs and runs[-1][0] == i:  # i moves on at every match: the same i is the same run
            runs[-1][2].append(line)
        else:
            runs.append((i, j, [line]))
    return runs


def _unique_matches(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """(i, j) with ``a[i] == b[j]`` occurring once in ``a`` and once in ``b``: the longest list of such
    pairs that is in order on both sides."""
    count_a, count_b = Counter(a), Counter(b)
    at_b = {line: j for j, line in enumerate(b) if count_b[line] == 1}
    pairs = [(i, at_b[line]) for i, line in enumerate(a) if count_a[line] == 1 and line in at_b]
    # longest increasing subsequence of the j's (patience sorting), with links back to rebuild it
    tops: list[int] = []  # tops[k]: the smallest j that ends an increasing run of k + 1 pairs
    ends: list[int] = []  # ...and the index in pairs of that pair
    back = [-1] * len(pairs)
    for n, (_, j) in enumerate(pairs):
        k = bisect_left(tops, j)
        back[n] = ends[k - 1] if k else -1
        if k == len(tops):
            tops.append(j)
            ends.append(n)
        else:
            tops[k], ends[k] = j, n
    out: list[tuple[int, int]] = []
    n = ends[-1] if ends else -1
    while n >= 0:
        out.append(pairs[n])
        n = back[n]
    return out[::-1]


def is_own_first_line(line: str) -> bool:
    """A line that starts what vaultops inserts under a request: a lock, a status or a result heading."""
    if line.startswith("### "):
        return fmt.is_result_heading(line[4:])
    if line.startswith("- locked-by: "):
        return fmt.parse_lock(line[2:], 0) is not None
    if line.startswith("- status: "):
        return fmt.parse_status(line[2:], 0) is not None
    return False


_HELD = (State.LOCKED, State.RUNNING)  # a claim that has not finished


def _fence_key(request: Request) -> tuple[State, str | None]:
    return request.state, request.lock.claim if request.lock else None


class _Replay:
    def __init__(self, rel: str, p: ParsedNote, r: ParsedNote, x: ParsedNote) -> None:
        self.rel, self.p, self.r, self.x = rel, p, r, x
        self.x_sections = sorted(h.line for h in x.outline.headings if h.level <= 2)
        self.starts = [q.start for q in p.requests]
        self.targets = [t for t, _ in targets_of(p.requests, lambda _: True)]
        self.r_index = index_by_id(r.requests)
        self.p_at = _positions(p.lines)
        self.r_at = _positions(r.lines)
        self.late: list[str] = []
        self.dropped: list[str] = []
        self.sections: set[int] = set()  # ids of the edits that start new sections (see _closed)
        self.orphans: dict[int, list[str]] = {}  # ids of the edits whose place is gone from R: their lines

    def apply(self, runs: list[tuple[int, int, list[str]]]) -> Replayed:
        # Our end-of-block lines are gathered per request (fencing is decided once per request) and
        # placed where the request's first run stood among the others, so X's order is kept.
        order: list[Edit | int] = []
        ours: dict[int, list[str]] = {}
        for i, j, run in runs:
            n = self._request_at(i - 1)
            lines, section = self._split(j, run)
            core = self._own_core(n, i, lines) if n is not None and lines else None
            if lines and (n is None or core is None):
                order.append(self._after_anchor(i, lines, n))
            elif core is not None and n is not None:
                if n not in ours:
                    order.append(n)
                ours.setdefault(n, []).extend(core)
            if section:
                order.append(self._new_section(i, section, n))
        edits: list[Edit] = []
        for item in order:
            edit = self._fenced(item, ours[item]) if isinstance(item, int) else item
            if edit is not None:
                edits.append(edit)
        edits = self._orphans_first(edits)
        return Replayed(
            self._spliced(self._closed_once(edits)), tuple(dict.fromkeys(self.late)), tuple(self.dropped)
        )

    def _request_at(self, line: int) -> int | None:
        """The index in P of the request whose block holds ``line``."""
        n = bisect_right(self.starts, line) - 1
        if line >= 0 and n >= 0 and line < self.p.requests[n].end:
            return n
        return None

    def _own_core(self, n: int, i: int, lines: list[str]) -> list[str] | None:
        """The lines vaultops inserted at the end of request ``n``'s block, without what ``place`` added
        around them (a closer, a separating blank, LIST_END), which ``at_block_end`` works out again for R.
        None when the run is not vaultops's end-of-block insertion."""
        q = self.p.requests[n]
        # the diff may put the run after the block's trailing blank lines rather than before them
        if not q.last_line < i <= q.end or any(self.p.lines[k].strip() for k in range(q.last_line + 1, i)):
            return None
        core = list(lines)
        closer = self.p.outline.closer_after(q.last_line)
        if closer and core and core[0] == closer:
            del core[0]
        while core and not core[0].strip():
            del core[0]
        if not core or not is_own_first_line(core[0]):
            return None
        while core and (not core[-1].strip() or core[-1] == LIST_END):
            core.pop()
        return core

    def _fenced(self, n: int, lines: list[str]) -> Edit | None:
        """Our lines for request ``n`` at its block's end in R, if the request is still as P had it."""
        q = self.p.requests[n]
        q_r = self.targets[n].find(self.r_index)
        where = f"{self.rel}: {q.id}"
        if q_r is None:
            gone = f"{where}: its block is gone from the remote version; {_count(lines)} not replayed"
            self.dropped.append(gone)
            return None
        if _stands_in(self.r.lines[q_r.start : q_r.end], lines):
            return None  # R has these very lines already (another clone put them back after a rewrite)
        if _fence_key(q_r) == _fence_key(q):
            return at_block_end(self.r, q_r, lines)
        claims = [c for line in lines if (c := _claim_of(line))]
        if claims and q_r.lock and q_r.lock.claim == claims[-1] and q_r.state in _HELD:
            # R already holds our claim: P did not (obsidian-git committed between our claim's push and
            # this clone following it).  Our lines still count; those R already has are not repeated.
            block = set(self.r.lines[q_r.start : q_r.end])
            k = 0
            while k < len(lines) and lines[k] in block and fmt.item_field(lines[k]) is not None:
                k += 1
            return at_block_end(self.r, q_r, lines[k:]) if lines[k:] else None
        # Someone else acted on the request meanwhile: our lock and status lines would undo that.
        claim = claims[-1] if claims else (q.lock.claim if q.lock else "unknown")
        now = q_r.state.value + (f", claim {q_r.lock.claim}" if q_r.lock else "")
        late = late_result(lines, claim)
        if late:
            self.late.append(q.id)
            return at_block_end(self.r, q_r, late)
        what = f"our claim {claim} lost" if claims else f"was {q.state.value}"
        self.dropped.append(
            f"{where}: changed on the remote meanwhile (now {now}); {what}, {_count(lines)} not replayed"
        )
        return None

    def _after_anchor(self, i: int, lines: list[str], n: int | None) -> Edit:
        """Lines that followed P's line ``i - 1``: right after the same line in R."""
        if i == 0:
            return Edit(-1, tuple(lines))
        anchor = i - 1
        q_r = self.targets[n].find(self.r_index) if n is not None else None
        if n is not None and q_r is not None:
            # the same line may stand in many blocks (a blank, "- type: research"): look only in this one
            q = self.p.requests[n]
            p_lo, r_lo, r_hi = q.start, q_r.start, q_r.end
        else:
            p_lo, r_lo, r_hi = 0, 0, len(self.r.lines)
        text = self.p.lines[anchor]
        in_p = self.p_at.get(text, [])
        k = bisect_left(in_p, anchor) - bisect_left(in_p, p_lo)  # which of the equal lines it was
        in_r = self.r_at.get(text, [])
        found = in_r[bisect_left(in_r, r_lo) : bisect_left(in_r, r_hi)]
        if found:
            return Edit(found[min(k, len(found) - 1)], tuple(lines))
        if q_r is not None:
            return at_block_end(self.r, q_r, lines)
        edit = at_note_end(self.r, lines, separate=False)
        self.orphans[id(edit)] = lines
        return edit

    def _split(self, j: int, run: list[str]) -> tuple[list[str], list[str]]:
        """Lines inserted at X's line ``j``, cut where a heading of level 1 or 2 (which ends a request's
        block) begins a new section in X, with the blank lines before it: (before, section).  A fence
        closer that only led up to the section is left out: ``_closed`` closes what is open where the
        section lands in R."""
        k = bisect_left(self.x_sections, j)
        if k == len(self.x_sections) or self.x_sections[k] >= j + len(run):
            return run, []
        cut = self.x_sections[k] - j
        while cut > 0 and not run[cut - 1].strip():
            cut -= 1
        if all(not line.strip() for line in run[1:cut]) and self.x.outline.closer_after(j - 1) == run[0]:
            return [], run[cut:]
        return run[:cut], run[cut:]

    def _new_section(self, i: int, lines: list[str], n: int | None) -> Edit:
        """Lines that start a new section (a request heading, say) after P's line ``i - 1``.  Appended at
        the end of a request's block, they go after what the remote added to that block (a result), so
        that those lines stay with their request rather than fall under the new heading."""
        if n is not None:
            q = self.p.requests[n]
            q_r = self.targets[n].find(self.r_index)
            if q_r is None:  # its block is gone: a line like its last could stand inside another block
                return at_note_end(self.r, lines, separate=False)
            if i - 1 >= q.last_line:
                edit = Edit(min(q_r.last_line + (i - 1 - q.last_line), q_r.end - 1), tuple(lines))
                self.sections.add(id(edit))
                return edit
        return self._after_anchor(i, lines, n)

    def _orphans_first(self, edits: list[Edit]) -> list[Edit]:
        """Lines whose place is gone from R go to its end, but before a new section appended there: after
        its heading they would become part of that new request's text."""
        starts = [e.after for e in edits if id(e) in self.sections]
        if not starts or not self.orphans:
            return edits
        first = min(starts)
        moving = [e for e in edits if id(e) in self.orphans and e.after >= first]
        if not moving:
            return edits
        rest = [e for e in edits if not any(e is m for m in moving)]
        k = next(n for n, e in enumerate(rest) if id(e) in self.sections and e.after == first)
        moved = [place(self.r, first, self.orphans[id(e)]) for e in moving]
        return [*rest[:k], *moved, *rest[k:]]

    def _closed_once(self, edits: list[Edit]) -> list[Edit]:
        """A fence or HTML block left open in R is closed by the first of our edits that lands in it
        and needs it closed (placed lines, or a new section), and by no other: a second closer would
        open a new fence that swallows the rest of the note."""
        out = list(edits)
        closed: set[int] = set()  # the starts of R's open blocks that an edit before has closed
        for k in sorted(range(len(edits)), key=lambda k: edits[k].after):  # the order splice writes them
            e = edits[k]
            span = self.r.outline.open_after(e.after) if e.after >= self.r.body_start else None
            if span is None:
                continue
            closes = e.lines[:1] == (span.closer,)
            if span.start in closed:
                if closes:
                    out[k] = Edit(e.after, e.lines[1:])
            elif closes or id(e) in self.sections:
                out[k] = e if closes else Edit(e.after, (span.closer, *e.lines))
                closed.add(span.start)
        return [e for e in out if e.lines]

    def _spliced(self, edits: list[Edit]) -> bytes:
        # Lines for the very start are added here rather than by splice, which would put them before a
        # byte order mark (that must stay first).  splice leaves the start of the note as it was.
        start = [line for e in edits if e.after < 0 for line in e.lines]
        body = splice(self.r.raw, self.r.text.newline, [e for e in edits if e.after >= 0])
        if not start:
            return body
        nl = self.r.text.newline.encode()
        # encoded as splice encodes inserted lines, so that no inserted line has bytes that are not UTF-8
        head = b"".join(line.encode("utf-8", "replace") + nl for line in start)
        bom = len(_BOM) if body.startswith(_BOM) else 0
        return body[:bom] + head + body[bom:]


def _positions(lines: list[str]) -> dict[str, list[int]]:
    at: dict[str, list[int]] = {}
    for n, line in enumerate(lines):
        at.setdefault(line, []).append(n)
    return at


def _stands_in(block: Sequence[str], lines: Sequence[str]) -> bool:
    """``block`` holds ``lines`` together, in order (they carry a claim id or a time: no coincidence)."""
    want, n = list(lines), len(lines)
    return n > 0 and any(list(block[k : k + n]) == want for k, line in enumerate(block) if line == want[0])


def _claim_of(line: str) -> str | None:
    item = fmt.item_field(line)
    if item is None or item[0] != "locked-by":
        return None
    lock = fmt.parse_lock(item[2], 0)
    return lock.claim if lock else None


def _count(lines: list[str]) -> str:
    return f"{len(lines)} line" + ("" if len(lines) == 1 else "s")
