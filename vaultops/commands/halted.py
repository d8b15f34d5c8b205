"""``vaultops status`` while the fleet is halted: HALTED, by whom, why and since when, first of all.

What the dashboard note (or the inbox) on this machine says now (``decide.halt``), with who set it and
when this machine's passes first saw it (``engine.halt`` remembers both in state.db); a halt no pass has
seen yet (the daemon is stopped, say) is said too: the next pass honours it.
"""

from __future__ import annotations

from typing import Any

from vaultops.commands.status import _state
from vaultops.decide.halt import Halted, marked
from vaultops.engine.halt import HALT_KEY, remembered
from vaultops.store.state import StateError
from vaultops.vault import Vault


def halt_row(vault: Vault) -> dict[str, Any] | None:
    """The halt standing on this machine, or None when the fleet runs."""
    marks = [marked(_raw(vault, rel)) for rel in (vault.dashboard_rel, vault.inbox_rel) if rel is not None]
    mark = next((m for m in marks if m.halted), None)  # either note halts, as a pass reads them
    if mark is None:
        return None
    state = _state(vault)
    seen: dict[str, object] = {}
    if state is not None:
        try:
            seen = remembered(state.get(HALT_KEY))
        except StateError:
            seen = {}
        finally:
            state.close()
    by = str(seen.get("by") or "someone (no pass on this machine has seen it yet)")
    return {"halted": True, "by": by, "reason": mark.reason, "since": str(seen.get("since") or "")}


def halt_line(row: dict[str, Any], dashboard: str) -> str:
    """The line ``status`` prints first."""
    said = Halted(str(row["reason"]), str(row["by"])).sentence()
    since = f" (since {row['since']})" if row["since"] else ""
    return f"{said}{since}; nothing is claimed and no job starts until `halt: no` in {dashboard}"


def _raw(vault: Vault, rel: str) -> bytes | None:
    try:
        return vault.resolve(rel).read_bytes()
    except OSError:
        return None
