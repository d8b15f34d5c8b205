"""``vaultops status``: every request and job, read from the notes (and state.db for what runs)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from typing import Any

from vaultops import __version__
from vaultops.base.errors import VaultopsError
from vaultops.model import Request, State
from vaultops.scan.note import ParsedNote, content_hash
from vaultops.store.notes import NoteWriter, read_raw
from vaultops.store.state import StateDB
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


def _rows_of(note: ParsedNote, vault: Vault) -> tuple[list[dict[str, Any]], list[str]]:
    warnings: list[str] = []
    rows: list[dict[str, Any]] = []
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


def request_rows(vault: Vault) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows for every request: the inbox's, then one per plan note of the queue folder."""
    writer = NoteWriter(vault)
    state = _state(vault)
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    try:
        for rel in [vault.inbox_rel, *vault.plan_notes()]:
            more, said = _note_rows(vault, rel, writer, state)
            rows += more
            warnings += said
    finally:
        if state is not None:
            state.close()
    return rows, warnings


def _note_rows(
    vault: Vault, rel: str, writer: NoteWriter, state: StateDB | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """One note's rows.  They depend only on the note's bytes, so they are kept in state.db under the
    note's content hash: asking again about an unchanged note does not parse it again."""
    try:
        path = vault.resolve(rel)
        if not path.exists():
            return [], [f"{rel}: no inbox yet; run `vaultops init`"] if rel == vault.inbox_rel else []
        raw = read_raw(path, max_bytes=writer.max_bytes, rel=rel)
    except VaultopsError as exc:
        return [], [exc.message]
    key = f"status-rows:{__version__}:{rel}"
    digest = content_hash(raw)
    if state is not None:
        cached = state.get(key)
        if cached is not None:
            doc = json.loads(cached)
            if doc.get("hash") == digest:
                return doc["rows"], doc["warnings"]
    rows, warnings = _rows_of(writer.parse(rel, raw, full=True), vault)
    if state is not None:
        with contextlib.suppress(sqlite3.Error):
            state.set(key, json.dumps({"hash": digest, "rows": rows, "warnings": warnings}))
    return rows, warnings


def worker_rows(vault: Vault) -> list[dict[str, Any]]:
    """The workers as ``vaultops worker list`` shows them (``stale`` after ``[workers] stale_after`` of
    silence, ``lost`` when the process is gone); none without a state.db, which status does not create."""
    if not (vault.state_dir / "state.db").exists():
        return []
    from vaultops.workers.control import list_workers

    try:
        return list_workers(vault, commits=False)
    except sqlite3.Error:
        return []


def _state(vault: Vault) -> StateDB | None:
    try:
        return StateDB(vault.state_dir / "state.db")
    except (OSError, sqlite3.Error):
        return None  # a read-only vault still gets its status, just without the cache


def profile_rows(vault: Vault) -> list[dict[str, Any]]:
    """Each executor profile: its last known health, its error rate over 5 minutes and its active runs."""
    from vaultops.run import health  # status reads the cache only; it never runs a health check

    state = _state(vault)
    if state is None:
        return []
    try:
        activity = state.profile_activity(time.time() - 300)
        rows = []
        for name, profile in sorted(vault.config.profiles.items()):
            report = health.cached(name, profile, state)
            attempts, failed, active = activity.get(name, (0, 0, 0))
            rows.append(
                {
                    "name": name,
                    "gate": "policy" if profile.gated else "NONE",
                    "state": report.state.value,
                    "detail": report.detail,
                    "attempts_5min": attempts,
                    "error_rate_5min": round(failed / attempts, 3) if attempts else 0.0,
                    "active_runs": active,
                }
            )
        return rows
    finally:
        state.close()


def format_profiles(rows: list[dict[str, Any]]) -> str:
    table = [
        [
            r["name"],
            r["gate"],
            r["state"],
            f"{r['error_rate_5min']:.0%} of {r['attempts_5min']}",
            str(r["active_runs"]),
            r["detail"],
        ]
        for r in rows
    ]
    return _table(("profile", "gate", "state", "errors (5 min)", "running", "detail"), table)


def _table(cols: tuple[str, ...], table: list[list[str]]) -> str:
    widths = [max(len(c), *(len(t[i]) for t in table)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(t, widths, strict=True)) for t in table]
    return "\n".join(line.rstrip() for line in lines)


def format_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no requests"
    cols = ("id", "state", "type", "safety_class", "locked_by", "updated")
    return _table(cols, [[str(row.get(c) or "-") for c in cols] for row in rows])
