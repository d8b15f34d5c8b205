"""The insertions that record what a pass did, found again by request on the note as it is.  Pure.

The pass reads the inbox once, decides, and then asks the note writer for insertions; the writer may
call ``edits_for`` again on a newer version of the note (the person kept typing), so every insertion is
found again by request id rather than by line number, and dropped if its request is no longer in the
state the pass saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from vaultops.base.redact import redact_lines
from vaultops.base.visible import visible_line
from vaultops.model import Request, State, Target, index_by_id
from vaultops.scan.note import ParsedNote
from vaultops.store.placement import Edit, at_block_end


@dataclass(frozen=True, slots=True)
class Insert:
    target: Target
    lines: tuple[str, ...]
    expect: frozenset[State]  # insert only if the request is still in one of these states
    claim: str = ""  # for results: insert only if the request's lock is still this claim
    seen: str = ""  # the request's text_hash when the pass decided this: an escalation's approval needs it

    def __post_init__(self) -> None:
        # Every line vaultops writes into a note is an Insert's: redacted here, once, so that what is
        # compared with the note (already there? the same result?) is what the note holds.  A control
        # character (a NUL from an agent's command, say) is shown, never written: git cannot commit it.
        object.__setattr__(self, "lines", tuple(visible_line(line) for line in redact_lines(self.lines)))


@dataclass
class Applied:
    landed: list[Insert] = field(default_factory=list)
    dropped: list[tuple[Insert, str]] = field(default_factory=list)
    present: list[Insert] = field(default_factory=list)  # landed, found in the note already: not written now

    def written(self) -> list[Insert]:
        """The inserts this write put in the note (not those it found there already)."""
        return [ins for ins in self.landed if ins not in self.present]


def edits_for(note: ParsedNote, inserts: Sequence[Insert], applied: Applied | None = None) -> list[Edit]:
    """The edits for ``inserts`` on this version of the note, in one batch (one write per note)."""
    if applied is not None:
        applied.landed.clear()
        applied.dropped.clear()
        applied.present.clear()
    grouped: dict[Target, list[Insert]] = {}
    for ins in inserts:
        grouped.setdefault(ins.target, []).append(ins)
    edits = []
    index = index_by_id(note.requests)
    for target, group in grouped.items():
        request = target.find(index)
        lines: list[str] = []
        for ins in group:
            if request is not None and _already_there(note, request, ins.lines):
                # written by an earlier try, or brought in by a pull of the commit that carried them
                if applied is not None:
                    applied.landed.append(ins)
                    applied.present.append(ins)
                continue
            why = _refusal(request, ins)
            if why:
                if applied is not None:
                    applied.dropped.append((ins, why))
                continue
            lines.extend(ins.lines)
            if applied is not None:
                applied.landed.append(ins)
        if lines and request is not None:
            edits.append(at_block_end(note, request, lines))
    return edits


def _already_there(note: ParsedNote, request: Request, lines: Sequence[str]) -> bool:
    """The block holds ``lines`` together, in order (they carry a claim id or a time: no coincidence)."""
    if not lines:
        return False
    block = note.lines[request.start : request.end]
    first = lines[0]
    return any(block[k : k + len(lines)] == list(lines) for k, line in enumerate(block) if line == first)


MISSING = "the request is no longer in the note"
CLAIM_LOST = "the request's lock is no longer this claim"


def _refusal(request: Request | None, ins: Insert) -> str:
    if request is None:
        return MISSING
    if ins.claim and (request.lock is None or request.lock.claim != ins.claim):
        return CLAIM_LOST  # first: a result fenced out by a takeover is kept as a late result
    if request.state not in ins.expect:
        return f"the request is now {request.state.value}"
    return ""
