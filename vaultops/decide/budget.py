"""The daily budget: what heavy work may cost per local day.  Pure, given what was spent."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

WARN_AT = 0.8


def day_start(now: datetime) -> float:
    """The timestamp of the local midnight that began ``now``'s day."""
    return now.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()


@dataclass(frozen=True, slots=True)
class Budget:
    limit: float  # [limits] daily_budget_usd; 0 means no limit
    spent: float  # today, from state.db

    @property
    def exhausted(self) -> bool:
        return self.limit > 0 and self.spent >= self.limit

    @property
    def past_warning(self) -> bool:
        return self.limit > 0 and self.spent >= WARN_AT * self.limit

    def waiting_reason(self) -> str:
        return (
            f"daily budget reached (${self.limit:.2f}); heavy work runs tomorrow, or now if "
            "[limits] daily_budget_usd is raised"
        )

    def warning(self) -> str:
        return f"daily budget {self.spent / self.limit:.0%} used (${self.spent:.2f} of ${self.limit:.2f})"
