"""The ``attempts`` table of state.db: its SQL.  One row per attempt of a request as its next retry reads
it (what failed and how, what it cost), kept across runs, claims and machines' restarts of this clone.
What a row means (the failure signature, the streak, what is left of the request's limits) is
``vaultops.run.streak``'s."""

from __future__ import annotations

import time
from typing import Any

from vaultops.store.state import StateDB, storable

_COLUMNS = "id, at, claim, profile, kind, signature, detail, tail, cost_usd, turns"
# rows read back per request: a streak or a limit never needs more (older rows stay for `status`)
HISTORY = 200


class AttemptsTable:
    """A request's attempts in one state.db."""

    def __init__(self, state: StateDB) -> None:
        self.state = state

    def add(
        self,
        file: str,
        request_id: str,
        claim: str,
        profile: str,
        kind: str,
        *,
        signature: str = "",
        detail: str = "",
        tail: str = "",
        cost_usd: float | None = None,
        turns: int | None = None,
    ) -> None:
        with self.state.lock:
            self.state.db.execute(
                "INSERT INTO attempts (at, file, request_id, claim, profile, kind, signature, detail, tail,"
                " cost_usd, turns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    time.time(),
                    storable(file),
                    storable(request_id),
                    claim,
                    profile,
                    kind,
                    storable(signature),
                    storable(detail),
                    storable(tail),
                    cost_usd,
                    turns,
                ),
            )

    def of(self, file: str, request_id: str) -> list[dict[str, Any]]:
        """The request's latest rows, oldest first."""
        with self.state.lock:
            cur = self.state.db.execute(
                f"SELECT {_COLUMNS} FROM attempts WHERE file = ? AND request_id = ? ORDER BY id DESC LIMIT ?",
                (storable(file), storable(request_id), HISTORY),
            )
            names = [c[0] for c in cur.description]
            rows = [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
        return rows[::-1]
