"""Putting vaultops's own commit on top of a newer remote version of a note, without a merge.  Pure.

vaultops only ever inserts whole lines.  When its commit X (parent P) must go on top of a newer remote
version R of the same note, git's merge could leave conflict markers or place our lines in someone else's
block; instead R is taken exactly as it is and the lines X inserted relative to P are inserted into it again.
Nothing of R is ever removed or reordered.

- vaultops's own end-of-block lines go to the end of the same request's block in R, but only if the request
  is still as P had it (same state, same lock claim): that is the fencing of DESIGN §8.  Otherwise another
  machine acted on it: a lost claim is dropped, and a result is kept only as a ``### Late result``.
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
from vaultops.model import Request, State
from vaultops.pipeline.plan import index_by_id, targets_of
from vaultops.record.late import late_result
from vaultops.record.placement import LIST_END, Edit, at_block_end, at_note_end
from vaultops.scan.note import ParsedNote, parse_note
from vaultops.scan.text import NoteText
from vaultops.store.notes import splice

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
    x = NoteText.from_bytes(ours).lines
    return _Replay(rel, p, r).apply(insertion_runs(p.lines, x))


def insertion_runs(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, list[str]]]:
    """The runs of lines ``new`` inserted into ``old``: (the ``old`` index they go before, the lines).
    What ``new`` deleted or changed is ignored: lines are never removed from the remote version."""
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
    runs: list[tuple[int, list[str]]] = []
    i0 = j0 = 0
    for i1, j1 in [*_unique_matches(a, b), (len(a), len(b))]:
        if j0 < j1:
            runs += [(head + i0 + i, lines) for i, lines in _gap_runs(a[i0:i1], b[j0:j1])]
        i0, j0 = i1 + 1, j1 + 1
    return runs


def _gap_runs(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, list[str]]]:
    if not a:
        return [(0, list(b))]
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    # Longest-block matching can pair equal lines so that some are "replaced" although b only inserted
    # into a: replaying that would put a line of R in twice.  Then align by insertions only.
    if any(tag in ("replace", "delete") for tag, *_ in ops) and _is_subsequence(a, b):
        return _insertions_only(a, b)
    return [(i1, list(b[j1:j2])) for tag, i1, _, j1, j2 in ops if tag in ("insert", "replace")]


def _is_subsequence(a: Sequence[str], b: Sequence[str]) -> bool:
    it = iter(b)
    return all(any(line == other for other in it) for line in a)


_SMALL = 40_000  # len(a) * len(b) up to which the fewest runs are worked out exactly


def _insertions_only(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, list[str]]]:
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
    runs: list[tuple[int, list[str]]] = []
    i = 0
    for line, take in zip(b, matched, strict=True):
        if take:
            i += 1
        elif runs and runs[-1][0] == i:  # i moves on at every match: the same i is the same run
            runs[-1][1].append(line)
        else:
            runs.append((i, [line]))
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


def _fence_key(request: Request) -> tuple[State, str | None]:
    return request.state, request.lock.claim if request.lock else None


class _Replay:
    def __init__(self, rel: str, p: ParsedNote, r: ParsedNote) -> None:
        self.rel, self.p, self.r = rel, p, r
        self.starts = [q.start for q in p.requests]
        self.targets = [t for t, _ in targets_of(p.requests, lambda _: True)]
        self.r_index = index_by_id(r)
        self.p_at = _positions(p.lines)
        self.r_at = _positions(r.lines)
        self.late: list[str] = []
        self.dropped: list[str] = []

    def apply(self, runs: list[tuple[int, list[str]]]) -> Replayed:
        # Our end-of-block lines are gathered per request (fencing is decided once per request) and
        # placed where the request's first run stood among the others, so X's order is kept.
        order: list[Edit | int] = []
        ours: dict[int, list[str]] = {}
        for i, lines in runs:
            n = self._request_at(i - 1)
            core = self._own_core(n, i, lines) if n is not None else None
            if n is None or core is None:
                order.append(self._after_anchor(i, lines, n))
            else:
                if n not in ours:
                    order.append(n)
                ours.setdefault(n, []).extend(core)
        edits: list[Edit] = []
        for item in order:
            edit = self._fenced(item, ours[item]) if isinstance(item, int) else item
            if edit is not None:
                edits.append(edit)
        return Replayed(self._spliced(edits), tuple(dict.fromkeys(self.late)), tuple(self.dropped))

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
        if _fence_key(q_r) == _fence_key(q):
            return at_block_end(self.r, q_r, lines)
        # Someone else acted on the request meanwhile: our lock and status lines would undo that.
        claims = [c for line in lines if (c := _claim_of(line))]
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
        return at_note_end(self.r, lines, separate=False)

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


def _claim_of(line: str) -> str | None:
    item = fmt.item_field(line)
    if item is None or item[0] != "locked-by":
        return None
    lock = fmt.parse_lock(item[2], 0)
    return lock.claim if lock else None


def _count(lines: list[str]) -> str:
    return f"{len(lines)} line" + ("" if len(lines) == 1 else "s")
