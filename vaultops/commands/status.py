"""``vaultops status``: every request and job, read from the notes (and state.db for what runs)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING, Any

from vaultops import __version__
from vaultops.base.errors import VaultopsError
from vaultops.base.room import room_problem
from vaultops.model import Request, State
from vaultops.scan.note import ParsedNote, content_hash
from vaultops.scan.pieces import Piece, PieceParse, moved, parse_piece, walk
from vaultops.scan.requests import mark_duplicates
from vaultops.store.state import StateDB, StateError
from vaultops.store.workers_table import WorkersTable
from vaultops.vault import Vault

if TYPE_CHECKING:
    from vaultops.store.notes import NoteWriter


def _kind_and_safety(
    request: Request, vault: Vault, known: dict[str, Any] | None = None
) -> tuple[str | None, str | None]:
    """``known``: the classifier's answers kept from earlier runs, by a hash of what it was asked."""
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
    asked = hashlib.blake2b(
        f"{explicit}\0{request.text}".encode("utf-8", "surrogateescape"), digest_size=16
    ).hexdigest()
    if known is not None:
        answer = known.get(asked)
        if type(answer) is tuple and len(answer) == 2 and all(a is None or type(a) is str for a in answer):
            return answer
    from vaultops.decide.route import decide_text  # only open requests need the classifier

    decision = decide_text(request.text, explicit, vault.config)
    if known is not None:
        known[asked] = (decision.type, decision.safety_class)
    return decision.type, decision.safety_class


def _row(r: Request, vault: Vault, known: dict[str, Any] | None = None) -> list[Any]:
    kind, safety = _kind_and_safety(r, vault, known)
    lock = r.lock
    return [r.id, r.state.value, kind, safety, f"{lock.agent}@{lock.host}" if lock else None, r.updated]


_COLUMNS = ("id", "state", "type", "safety_class", "locked_by", "updated")


def _said(r: Request) -> list[tuple[int, str]]:
    """(line, problem) for each problem worth a warning: those of requests that would run."""
    return [(r.start, p) for p in r.problems] if r.state in (State.OPEN, State.ERROR) else []


def _rows_of(note: ParsedNote, vault: Vault) -> tuple[list[dict[str, Any]], list[str]]:
    rows = [_as_row(note.rel, _row(r, vault)) for r in note.requests]
    warnings = [f"{note.rel}:{line + 1}: {p}" for r in note.requests for line, p in _said(r)]
    return rows, warnings


def _as_row(rel: str, values: list[Any]) -> dict[str, Any]:
    ident, state, kind, safety, locked_by, updated = values
    return {
        "id": ident,
        "file": rel,
        "state": state,
        "type": kind,
        "safety_class": safety,
        "locked_by": locked_by,
        "updated": updated,
    }


def request_rows(vault: Vault) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows for every request: the inbox's, then one per plan note of the queue folder."""
    state = _state(vault)
    writer: list[NoteWriter] = []  # made when a plan note must be parsed
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


def _read(vault: Vault, rel: str) -> bytes | None:
    path = vault.resolve(rel)
    if not path.exists():
        return None
    max_bytes = int(vault.config.inbox.max_mb * 1_000_000)
    if path.stat().st_size > max_bytes:
        from vaultops.store.notes import read_raw  # it says why, in the words every command uses

        return read_raw(path, max_bytes=max_bytes, rel=rel)
    return path.read_bytes()


def _note_rows(
    vault: Vault, rel: str, writer: list[NoteWriter], state: StateDB | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """One note's rows.  They depend only on the note's bytes, so they are kept in state.db: a plan note's
    under its content hash, other notes' per piece (``vaultops.scan.pieces``), so that after an edit only
    the pieces that changed are parsed again."""
    try:
        raw = _read(vault, rel)
    except VaultopsError as exc:
        return [], [exc.message]
    if raw is None:
        if rel != vault.inbox_rel:
            return [], []
        from vaultops.engine.moved import gone_here  # git is asked only when the inbox is not there

        gone = gone_here(vault)
        return [], [gone.sentence()] if gone is not None else []
    rows, warnings = _kept_rows(vault, rel, raw, writer, state)
    return _as_vetted(vault, rel, raw, rows, writer, state), warnings


def _as_vetted(
    vault: Vault,
    rel: str,
    raw: bytes,
    rows: list[dict[str, Any]],
    writer: list[NoteWriter],
    state: StateDB | None,
) -> list[dict[str, Any]]:
    """``rows`` with each request's real state: a status or lock line vaultops did not write changes
    nothing (``engine.provenance``), here as in a pass.  Without a state.db nothing here was written by
    vaultops on this machine, and status creates none: the rows stay as the lines read."""
    if state is None:
        return rows
    from vaultops.engine.provenance import Vetter
    from vaultops.sync.git import Git

    if not writer:
        from vaultops.store.notes import NoteWriter

        writer.append(NoteWriter(vault))
    parse = writer[0].parse
    note = parse(rel, raw, full=True)
    try:
        vetted, _ = Vetter(state, Git(vault.root), vault.config.answers.authors, parse).note(note)
    except StateError:
        return rows
    if not vetted.disowned or len(vetted.requests) != len(rows):
        return rows
    out = list(rows)
    for n, request in enumerate(vetted.requests):
        if request.start in vetted.disowned and out[n]["id"] == request.id:
            out[n] = _as_row(rel, _row(request, vault))
    return out


def _kept_rows(
    vault: Vault, rel: str, raw: bytes, writer: list[NoteWriter], state: StateDB | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """A note's rows as its lines read, kept between runs."""
    if not vault.is_plan_note(rel):
        return _piece_rows(vault, rel, raw)
    key = f"status-rows:{__version__}:{rel}"
    digest = content_hash(raw)
    if state is not None:
        cached = state.get(key)
        if cached is not None:
            doc = json.loads(cached)
            if doc.get("hash") == digest:
                return doc["rows"], doc["warnings"]
    if not writer:
        from vaultops.store.notes import NoteWriter  # it knows how to read a plan note

        writer.append(NoteWriter(vault))
    rows, warnings = _rows_of(writer[0].parse(rel, raw, full=True), vault)
    if state is not None:
        with contextlib.suppress(StateError):
            state.set(key, json.dumps({"hash": digest, "rows": rows, "warnings": warnings}))
    return rows, warnings


# A piece's rows as kept: [its key, lines, rows, warnings ((line, problem))], line numbers counted from the
# piece's first line, in one file per note (vaultops.store.kept).
Kept = list[Any]
_KEYS = frozenset(("id", "file", "state", "type", "safety_class", "locked_by", "updated"))


def _usable(entry: object, key: str, rel: str) -> Kept | None:
    """A kept piece if it has the shape of one; anything else is parsed again.  (The file's hash already
    rules out damage; this rules out a file some other version of vaultops wrote.)"""
    if not (type(entry) is list and len(entry) == 4 and entry[0] == key):
        return None
    n, rows, said = entry[1], entry[2], entry[3]
    if not (type(n) is int and n >= 0):
        return None
    if not (type(rows) is list and type(said) is list):
        return None
    if not all(
        type(v) is dict and v.keys() == _KEYS and type(v["id"]) is str and v["file"] == rel for v in rows
    ):
        return None
    if not all(type(w) is tuple and len(w) == 2 and type(w[0]) is int and type(w[1]) is str for w in said):
        return None
    return entry


def _part(doc: dict[str, Any], name: str) -> dict[str, Any]:
    part = doc.get(name)
    return part if type(part) is dict else {}


def _piece_rows(
    vault: Vault, rel: str, raw: bytes, spread: int = 0
) -> tuple[list[dict[str, Any]], list[str]]:
    """A note's rows, each piece's from the kept ones when the piece is unchanged.  A piece whose ids are
    also used elsewhere in the note is parsed again (its rows depend on the rest of the note)."""
    from vaultops.store import kept as keep

    where = keep.path_for(vault.state_dir, f"status-{__version__}", rel)
    doc = keep.load(where)
    kept, known = _part(doc, "pieces"), dict(_part(doc, "classes"))
    if len(known) > 10_000:  # answers for texts long gone
        known = {}
    now: dict[str, Kept] = {}
    # (piece, its first line, its kept rows or its parse)
    got: list[tuple[Piece, int, Kept | PieceParse]] = []

    def step(piece: Piece, line: int) -> tuple[int, bool]:
        entry = _usable(kept.get(piece.key), piece.key, rel)
        if entry is not None:
            got.append((piece, line, entry))
            now[piece.key] = entry
            return entry[1], True
        parse = parse_piece(raw, piece, rel, line, full=True)
        if parse.joins:
            got.append((piece, line, parse))
        return parse.n_lines, parse.joins

    walk(raw, step, spread)
    ids = [
        i
        for _, _, one in got
        for i in ([r.id for r in one.requests] if isinstance(one, PieceParse) else [v["id"] for v in one[2]])
    ]
    counts = Counter(ids) if len(set(ids)) < len(ids) else None
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    for piece, line, one in got:
        if not isinstance(one, PieceParse):
            if counts is None or all(counts[v["id"]] == 1 for v in one[2]):
                rows += one[2]
                warnings += [f"{rel}:{line + at + 1}: {p}" for at, p in one[3]]
                continue
            one = parse_piece(raw, piece, rel, line, full=True)
        by = line if one.movable else 0
        done = mark_duplicates([moved(r, by) for r in one.requests], counts)
        rows += [_as_row(rel, _row(r, vault, known)) for r in done]
        warnings += [f"{rel}:{at + 1}: {p}" for r in done for at, p in _said(r)]
        if one.movable and one.key not in now:
            # kept without the duplicate problems: those depend on the rest of the note
            alone = [_as_row(rel, _row(r, vault, known)) for r in one.requests]
            now[piece.key] = [piece.key, one.n_lines, alone, [w for r in one.requests for w in _said(r)]]
    if now != kept or known != _part(doc, "classes"):
        keep.save(where, {"pieces": now, "classes": known})
    return rows, warnings


def worker_rows(vault: Vault) -> list[dict[str, Any]]:
    """The workers as ``vaultops worker list`` shows them (``stale`` after ``[workers] stale_after`` of
    silence, ``lost`` when the process is gone); none without a state.db, which status does not create."""
    if not (vault.state_dir / "state.db").exists():
        return []
    state = _state(vault)
    if state is None:
        return []
    try:  # no worker has ever run here (the usual case): no need to load the workers' code
        if not WorkersTable(state).any():
            return []
    except StateError:
        return []
    finally:
        state.close()
    from vaultops.workers.control import list_workers

    try:
        return list_workers(vault, commits=False)
    except StateError:
        return []


def _state(vault: Vault) -> StateDB | None:
    try:
        return StateDB(vault.state_dir / "state.db")
    except (OSError, StateError):
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


def channel_rows(vault: Vault) -> list[dict[str, Any]]:
    """The notifier targets that are failing (``[notify] failing_after`` tries in a row), oldest first."""
    from vaultops.notify.channels import Channels  # status reads state.db only; it sends nothing

    state = _state(vault)
    if state is None:
        return []
    try:
        failing = Channels(state, vault.config.notify.failing_after).failing()
    finally:
        state.close()
    return [
        {
            "channel": c.label,
            "state": "failing",
            "failures": c.failures,
            "since": datetime.fromtimestamp(c.failing_since or 0).astimezone().isoformat(timespec="seconds"),
            "last_error": c.last_error,
        }
        for c in failing
    ]


def remote_rows(vault: Vault) -> tuple[str | None, list[str]]:
    """The remote problem the last pass on this machine found: ("unreachable" or "refused", and its
    sentence with since when), or (None, [])."""
    from vaultops.engine.publish import remote_problem  # state.db is read, the remote is not asked

    state = _state(vault)
    if state is None:
        return None, []
    try:
        problem = remote_problem(state)
    finally:
        state.close()
    if problem is None:
        return None, []
    since = datetime.fromtimestamp(problem.since).astimezone().isoformat(timespec="seconds")
    return problem.kind, [f"{problem.sentence} (since {since})"]


def machine_rows(vault: Vault) -> tuple[list[dict[str, Any]], list[str]]:
    """Each machine's own note (``_System/vaultops/<host>.md``), as the dashboard shows it, and a sentence
    for each that cannot be read; this machine's row says when its remote cannot be reached or refuses
    its pushes (then its note on the remote is stale: the other machines see it quiet)."""
    from vaultops.render.dashboard import is_up
    from vaultops.render.machines import read_machine
    from vaultops.scan.note import split_frontmatter
    from vaultops.scan.text import NoteText

    remote, problems = remote_rows(vault)
    if (room := room_problem(vault.state_dir)) is not None:  # this machine's disk, asked now
        problems.append(room)
    folder = vault.machines_folder
    path = vault.resolve(folder) if folder is not None else None
    if folder is None or path is None or not path.is_dir():
        return [], problems
    now = datetime.now().astimezone()
    rows: list[dict[str, Any]] = []
    for entry in sorted(path.glob("*.md")):
        rel = f"{folder}/{entry.name}"
        try:
            lines = NoteText.from_bytes(_read(vault, rel) or b"").lines
        except (OSError, VaultopsError) as exc:
            problems.append(f"{rel}: cannot be read ({exc})")
            continue
        _, meta, error = split_frontmatter(lines)
        facts = read_machine(rel, meta) if error is None else f"{rel}: {error}"
        if isinstance(facts, str):
            problems.append(facts)
            continue
        rows.append(
            {
                "host": facts.host,
                "file": rel,
                "up": is_up(facts, now),
                "remote": remote if facts.host == vault.host else None,
                "last_pass": facts.last_pass,
                "version": facts.version,
                "agent": facts.agent,
                "profiles": {p.name: p.health for p in facts.profiles},
                "workers": [w.name for w in facts.workers],
                "spend_today_usd": facts.spend_usd,
                "budget_usd": facts.budget_usd,
            }
        )
    return rows, problems


def format_machines(rows: list[dict[str, Any]]) -> str:
    table = [
        [
            r["host"],
            ("up" if r["up"] else "quiet") + (f", remote {r['remote']}" if r.get("remote") else ""),
            r["last_pass"],
            r["version"],
            ", ".join(f"{n} {h}" for n, h in r["profiles"].items()) or "-",
            f"${r['spend_today_usd']:.2f}",
        ]
        for r in rows
    ]
    return _table(("machine", "state", "last pass", "version", "profiles", "spend today"), table)


def format_channels(rows: list[dict[str, Any]]) -> str:
    table = [[r["channel"], r["state"], r["since"], str(r["failures"]), r["last_error"]] for r in rows]
    return _table(("notifier", "state", "since", "tries", "last error"), table)


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


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    if seconds < 172800:
        return f"{seconds / 3600:.0f}h"
    return f"{seconds / 86400:.0f}d"


def format_workers(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no workers"
    head = ("NAME", "STATE", "PID", "PARENT", "AGE", "DIR", "COMMIT")
    body = []
    for r in rows:
        state = r["state"] + (f" ({r['exit_code']})" if r["exit_code"] is not None else "")
        pid = "" if r["pid"] is None else str(r["pid"])
        body.append((r["name"], state, pid, r["parent"], _age(r["age"]), r["dir"], r["commit"] or ""))
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [head, *body]
    )
