"""What the daemon claimed and recorded, so that it can write its lines again when an editor's save wipes
them (an editor that saved the copy it had before vaultops wrote).

state.db alone keeps a wiped request from running twice; this memory also puts its claim and result back.
It lives as long as the daemon, for at most ``KEEP`` seconds per claim.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from vaultops.model import State, Target
from vaultops.scan.note import ParsedNote
from vaultops.store.inserts import Insert

KEEP = 3600.0
ALREADY_RAN = "vaultops already ran this request (claim {claim})"


@dataclass
class _Claim:
    note: str  # vault-relative: the inbox or a plan note
    target: Target
    claim_lines: tuple[str, ...]
    result: Insert | None
    at: float


class ClaimMemory:
    def __init__(self) -> None:
        self.claims: dict[str, _Claim] = {}

    def claimed(self, note: str, target: Target, claim: str, lines: tuple[str, ...]) -> None:
        self.claims[claim] = _Claim(note, target, lines, None, time.monotonic())

    def notes(self) -> list[str]:
        """The notes that hold claims this daemon remembers."""
        return sorted({known.note for known in self.claims.values()})

    def claims_of(self, note: str, targets: set[Target]) -> set[str]:
        """The claims this daemon made for ``targets`` of ``note``."""
        return {c for c, known in self.claims.items() if known.note == note and known.target in targets}

    def recorded(self, insert: Insert) -> None:
        known = self.claims.get(insert.claim)
        if known is not None:
            known.result = insert

    def restorations(self, note: ParsedNote, inflight: set[str]) -> list[Insert]:
        """Inserts that put back this daemon's lines where they have gone missing."""
        now = time.monotonic()
        self.claims = {c: k for c, k in self.claims.items() if now - k.at < KEEP}
        by_id: dict[str, list[tuple[str, _Claim]]] = {}
        for claim, known in self.claims.items():
            if known.note != note.rel:
                continue
            by_id.setdefault(known.target.request_id, []).append((claim, known))
        out: list[Insert] = []
        for request in note.requests:
            mine = by_id.get(request.id)
            if not mine:
                continue
            claim, known = mine[-1]
            lock = request.lock
            if lock is not None and lock.claim == claim:
                # our claim is there; the result is not, and no job will bring it
                if request.state is State.RUNNING and claim not in inflight and known.result is not None:
                    out.append(known.result)
                continue
            wiped = lock is None and (
                request.state is State.OPEN
                or (
                    request.statuses
                    and request.statuses[-1].reason.startswith(ALREADY_RAN.format(claim=claim))
                )
            )
            if not wiped:
                continue
            lines = known.claim_lines + (known.result.lines if known.result and claim not in inflight else ())
            out.append(Insert(known.target, lines, frozenset({request.state})))
        return out
