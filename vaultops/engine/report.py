"""What one pass did, as the CLI prints it, the daemon logs it and the commit message says it."""

from __future__ import annotations

from dataclasses import dataclass, field

from vaultops.model import PassOutcome

__all__ = ["PassOutcome", "PassReport"]


@dataclass
class PassReport:
    outcomes: list[PassOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    settling: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)  # notes written and not committed yet
    commit: str | None = None
    next_settle: float | None = None  # seconds until the soonest settling request may be claimed
    again: bool = False  # a request was taken over: a light check can run again right away
    more: bool = False  # a batch as large as allowed was claimed: more work may be waiting
    restored: list[str] = field(default_factory=list)  # requests whose lines an editor's save wiped, put back
    # the machine note says something the other machines act on (whether it tells the person): committed
    # now, not held for a batch (``Publisher.hold``)
    urgent: bool = False

    def then(self, later: PassReport) -> PassReport:
        """This report followed by a later pass's (``tick`` taking a queue in batches)."""
        merged = PassReport(
            [*self.outcomes, *later.outcomes], list(self.warnings), later.settling, later.written,
            later.commit or self.commit, later.next_settle, self.again or later.again, later.more,
            [*self.restored, *later.restored],
        )  # fmt: skip
        for line in later.warnings:
            merged.warn(line)
        return merged

    def warn(self, line: str) -> None:
        if line not in self.warnings:  # a pass may read the same note more than once
            self.warnings.append(line)

    def said(self, request_id: str, state: str, detail: str) -> None:
        self.outcomes.append(PassOutcome(request_id, state, detail))

    def committed(self, rel: str) -> None:
        """``rel`` was committed (and pushed) with its lines: nothing of it is left to commit."""
        self.written = [w for w in self.written if w != rel]
