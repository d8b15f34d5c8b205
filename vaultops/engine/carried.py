"""What one process carries from a pass to the next: the lines it wrote (to put back when an editor's save
wipes them) and the results whose request was missing when they were written (caught mid-save).

``vaultops tick`` starts with an empty one and drops it at its end; the daemon keeps one for its life.
The steps that use it are the driver's (``Pass.mend``); the daemon only holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vaultops.engine.context import Unplaced
from vaultops.engine.restore import ClaimMemory

UNPLACED_FOR = 3600.0  # seconds a result keeps looking for its request before it is given up


@dataclass
class Carried:
    lines: ClaimMemory = field(default_factory=ClaimMemory)
    # results not yet placed, with when each was first tried (monotonic)
    unplaced: list[tuple[float, Unplaced]] = field(default_factory=list)

    def waiting(self) -> frozenset[str]:
        """The claims whose result waits to be placed: alive, though no job runs them."""
        return frozenset(left.insert.claim for _, left in self.unplaced)
