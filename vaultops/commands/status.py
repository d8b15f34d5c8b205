"""``vaultops status``: every request and job, read from the notes (and state.db for what runs)."""

from __future__ import annotations

from typing import Any

from vaultops.errors import VaultopsError
from vaultops.model import Request, State
from vaultops.store.notes import NoteWriter
from vaultops.vault import Vault


def _kind_and_safety(request: Request, vault: Vault) -> tuple[str | None, str | None]:
    if request.outcomes:
        last = request.outcomes[-1]
        return last.type or None, last.safety_class or None
    explicit = request.fields.get("type") or None
    if request.state is State.ESCALATED and request.statuses:
        reason = request.statuses[-1].reason
        safety = reason.split(":", 1)[0] if reason.startswith(("blocked", "unknown")) else None
        return explicit, safety
    if request.text is None or request.problems:
        return explicit, None
    from vaultops.decide.route import decide_text  # only open requests need the classifier

    decision = decide_text(request.text, explicit, vault.config)
    return decision.type, decision.safety_class


def request_rows(vault: Vault) -> tuple[list[dict[str, Any]], list[str]]:
    warnings: list[str] = []
    rows: list[dict[str, Any]] = []
    try:
        note = NoteWriter(vault).read(vault.inbox_rel, full=True)
    except VaultopsError as exc:
        return rows, [exc.message]
    if note is None:
        return rows, [f"{vault.inbox_rel}: no inbox yet; run `vaultops init`"]
    for r in note.requests:
        kind, safety = _kind_and_safety(r, vault)
        lock = r.lock
        rows.append(
            {
                "id": r.id,
                "file": r.file,
                "state": r.state.value,
                "type": kind,
                "safety_class": safety,
                "locked_by": f"{lock.agent}@{lock.host}" if lock else None,
                "updated": r.updated,
            }
        )
        for problem in r.problems:
            if r.state in (State.OPEN, State.ERROR):
                warnings.append(f"{r.file}:{r.start + 1}: {problem}")
    return rows, warnings


def format_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no requests"
    cols = ("id", "state", "type", "safety_class", "locked_by", "updated")
    table = [[str(row.get(c) or "-") for c in cols] for row in rows]
    widths = [max(len(c), *(len(t[i]) for t in table)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(t, widths, strict=True)) for t in table]
    return "\n".join(line.rstrip() for line in lines)
