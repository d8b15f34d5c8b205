"""state.db: runs, events, settle times and small flags.  SQLite in WAL mode, one file per vault."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Self

from vaultops.base.confine import confine, make_dirs
from vaultops.base.errors import (
    DiskError,
    DiskFull,
    NotWritable,
    ReadOnlyDisk,
    StateBusy,
    VaultopsError,
    corrupt_state,
    disk_full,
    disk_refuses,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    file TEXT NOT NULL,
    request_id TEXT NOT NULL,
    claim TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    handler TEXT NOT NULL,  -- the profile's name, or "direct" (named before "profile" was the one word)
    host TEXT NOT NULL,
    pid INTEGER,
    started REAL NOT NULL,
    ended REAL,
    exit_code INTEGER,
    duration REAL,
    outcome TEXT,
    cost_usd REAL,
    log TEXT,
    job_pid INTEGER,
    job_start INTEGER
);
CREATE INDEX IF NOT EXISTS runs_request ON runs (file, request_id);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    file TEXT,
    request_id TEXT,
    detail TEXT
);
CREATE INDEX IF NOT EXISTS events_request ON events (file, request_id);
CREATE TABLE IF NOT EXISTS seen (
    file TEXT NOT NULL,
    request_id TEXT NOT NULL,
    person_hash TEXT NOT NULL,
    first_seen REAL NOT NULL,
    PRIMARY KEY (file, request_id, person_hash)
);
-- Status lines (and Telegram answers) vaultops wrote into notes, by a hash of the note, the request and the
-- line's exact text: how vaultops knows its own lines from look-alikes typed into a request.  ``seen``: a
-- hash of the request's text when vaultops wrote the line (an approval holds for that text only);
-- ``consumed``: when vaultops acted on the answer to the line (no answer to it counts after that).
CREATE TABLE IF NOT EXISTS own_lines (
    digest TEXT PRIMARY KEY,
    written REAL NOT NULL,
    seen TEXT,
    consumed REAL
);
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS health (
    profile TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    checked REAL NOT NULL,
    duration REAL NOT NULL,
    detail TEXT NOT NULL
);
-- Notices to the person (vaultops.notify.outbox): a row per key, kept after it is sent so that a key is
-- never sent twice; ``reached`` lists the targets that already have it, so a retry skips them.
CREATE TABLE IF NOT EXISTS outbox (
    key TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    queued REAL NOT NULL,
    sent REAL,
    attempts INTEGER NOT NULL DEFAULT 0,
    retry_at REAL NOT NULL DEFAULT 0,
    last_error TEXT,
    reached TEXT NOT NULL DEFAULT '[]',
    sender TEXT NOT NULL DEFAULT '',  -- '': the vault's notifiers; 'worker:NAME': that worker's persona
    extra TEXT NOT NULL DEFAULT '{}'  -- the notice's ask and topic (vaultops.notify.message), as JSON
);
-- Each notifier target's failed tries in a row (vaultops.notify.channels): failing once it has too many.
CREATE TABLE IF NOT EXISTS channels (
    target TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    failures INTEGER NOT NULL DEFAULT 0,
    failing_since REAL,
    last_error TEXT
);
-- Messages between the orchestrator and workers (vaultops.bus): kept after they are acked, so that
-- ``bus log`` shows the whole conversation.  ``recipient``, not ``to``: TO is an SQL keyword.
CREATE TABLE IF NOT EXISTS bus (
    id INTEGER PRIMARY KEY,
    sender TEXT NOT NULL,
    recipient TEXT NOT NULL,
    text TEXT NOT NULL,
    priority TEXT NOT NULL,
    sent_at REAL NOT NULL,
    delivered_at REAL,
    deliveries INTEGER NOT NULL DEFAULT 0,
    acked_at REAL
);
-- An inbox reads only the unacked messages of one name; acked ones pile up and must not slow it down.
CREATE INDEX IF NOT EXISTS bus_pending ON bus (recipient) WHERE acked_at IS NULL;
-- Long-lived workers (vaultops.workers.registry): a row per name.  A pid counts only with its start time
-- (clock ticks since boot), so a reused pid is never taken for the worker.  sup_pid is its supervisor, the
-- leader of the process group that terminate signals.
CREATE TABLE IF NOT EXISTS workers (
    name TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    pid INTEGER,
    pid_start INTEGER,
    sup_pid INTEGER,
    sup_start INTEGER,
    parent TEXT NOT NULL,
    dir TEXT NOT NULL,
    command TEXT NOT NULL,
    persona TEXT,
    notify TEXT NOT NULL DEFAULT '[]',
    files TEXT NOT NULL DEFAULT '[]',
    input TEXT NOT NULL DEFAULT 'text',
    started REAL NOT NULL,
    last_line_at REAL,
    ended REAL,
    exit_code INTEGER,
    stop_requested REAL,
    plan TEXT,
    claim TEXT,
    reports_after INTEGER NOT NULL DEFAULT 0
);
-- Model triage (vaultops.run.triage): one answer per version of a request, keyed by a hash of its text,
-- its type, the profile and the prompt version; ``cost_usd`` counts in the daily budget as runs do.
CREATE TABLE IF NOT EXISTS triage (
    key TEXT PRIMARY KEY,
    at REAL NOT NULL,
    profile TEXT NOT NULL,
    file TEXT,
    request_id TEXT,
    answer TEXT,
    failure TEXT,
    cost_usd REAL,
    duration REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS triage_at ON triage (at);
-- Each attempt of a request as its next retry reads it (vaultops.run.streak): ``kind`` failed, done or
-- aside; a failure's ``signature`` (its error class and failing check, without times, pids or paths), its
-- error and the tail of its output or failing check (redacted), its cost and turns, across runs and claims.
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    file TEXT NOT NULL,
    request_id TEXT NOT NULL,
    claim TEXT NOT NULL,
    profile TEXT NOT NULL,
    kind TEXT NOT NULL,
    signature TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '',
    tail TEXT NOT NULL DEFAULT '',
    cost_usd REAL,
    turns INTEGER
);
CREATE INDEX IF NOT EXISTS attempts_request ON attempts (file, request_id);
"""

# (table, column, type) added after the first release of their table
_ADDED_COLUMNS = (
    ("runs", "job_pid", "INTEGER"),
    ("runs", "job_start", "INTEGER"),
    ("workers", "plan", "TEXT"),
    ("workers", "claim", "TEXT"),
    ("workers", "reports_after", "INTEGER NOT NULL DEFAULT 0"),
    ("outbox", "sender", "TEXT NOT NULL DEFAULT ''"),
    ("outbox", "extra", "TEXT NOT NULL DEFAULT '{}'"),
    ("own_lines", "seen", "TEXT"),
    ("own_lines", "consumed", "REAL"),
)


@dataclass(frozen=True, slots=True)
class OwnLine:
    seen: str | None  # hash of the request's text when the line was written; None when not recorded
    consumed: bool  # vaultops has acted on the answer to it


def _line_digest(file: str, request_id: str, line: str) -> str:
    joined = "\0".join((file, request_id, line)).encode("utf-8", "surrogateescape")
    return hashlib.blake2b(joined, digest_size=20).hexdigest()


def storable(text: str) -> str:
    """Text as SQLite can store it: bytes that were not UTF-8 in a note (surrogate escapes) become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _safe(value: Any) -> Any:
    return storable(value) if isinstance(value, str) else value


# SQLite's errors by the ledger's names: what a caller outside store/ catches, so that only store/ imports
# sqlite3.  (The errors ``state_error`` maps to are vaultops's and still these.)
StateError = sqlite3.Error
StateOperationalError = sqlite3.OperationalError

# SQLite's primary result codes (an extended code's low byte) that say what is wrong with the file or disk
_READONLY, _IOERR, _CORRUPT, _CANTOPEN, _FULL, _NOTADB = 8, 10, 11, 14, 13, 26
_BUSY, _LOCKED = 5, 6  # another connection holds it past the wait: not the file's fault, nor vaultops's
_READONLY_DBMOVED = _READONLY | 4 << 8  # the file was deleted or moved while it was open


class _Busy(StateBusy, sqlite3.OperationalError):
    pass


# The disk's refusals as they come from SQLite: vaultops's errors, and still SQLite's (code that copes with
# a failed cache write, as ``status`` does, goes on coping).
class _Full(DiskFull, sqlite3.OperationalError):
    pass


class _ReadOnly(ReadOnlyDisk, sqlite3.OperationalError):
    pass


class _NotWritable(NotWritable, sqlite3.OperationalError):
    pass


_FROM_SQLITE: dict[type[DiskError], type[DiskError]] = {
    DiskFull: _Full,
    ReadOnlyDisk: _ReadOnly,
    NotWritable: _NotWritable,
}


def state_error(exc: sqlite3.Error, path: Path) -> Exception:
    """What an SQLite error on ``path`` stands for: a corrupt state.db, a full or read-only disk, a file
    vaultops may not write (each one sentence that names the file); any other error as it is."""
    if isinstance(exc, VaultopsError):
        return exc
    code = getattr(exc, "sqlite_errorcode", 0)
    primary = code & 0xFF
    found: DiskError | None
    if primary in (_CORRUPT, _NOTADB):
        return corrupt_state(path, str(exc))
    if primary in (_BUSY, _LOCKED):
        return _Busy(
            f"{path} is held locked by another program ({exc}); close what holds it (a database browser, "
            "a backup or sync tool), and vaultops tries again by itself"
        )
    if primary == _FULL:
        found = disk_full(path)
    elif primary in (_READONLY, _IOERR, _CANTOPEN):  # SQLite does not say why: the disk is asked
        found = disk_refuses(path)
        if found is None and code == _READONLY_DBMOVED:
            found = NotWritable(f"{path} was deleted or moved while vaultops had it open; restart vaultops")
        elif found is None and primary != _IOERR:  # the file or its folder as they are
            found = NotWritable(
                f"{path} cannot be {'written' if primary == _READONLY else 'opened'} ({exc}); make it a"
                " regular file that the user vaultops runs as may read and write, in a folder it may write"
            )
    else:
        return exc
    if found is None:  # an I/O error of the disk itself, which vaultops cannot explain
        return exc
    return _FROM_SQLITE[type(found)](found.message, found.errno, found.filename)


def _raise_for(exc: sqlite3.Error, path: Path | None) -> NoReturn:
    mapped = exc if path is None else state_error(exc, path)
    if mapped is exc:
        raise exc
    raise mapped from exc


class _Cursor(sqlite3.Cursor):
    """A cursor of state.db whose failures that say what is wrong with the file or its disk are raised as
    vaultops's errors (``state_error``), whichever of store/'s modules wrote the query."""

    def _path(self) -> Path | None:
        return getattr(self.connection, "path", None)

    def execute(self, sql: str, parameters: Any = (), /) -> Self:
        try:
            return super().execute(sql, parameters)
        except sqlite3.Error as exc:
            _raise_for(exc, self._path())

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> Self:
        try:
            return super().executemany(sql, seq_of_parameters)
        except sqlite3.Error as exc:
            _raise_for(exc, self._path())

    def executescript(self, sql_script: str, /) -> sqlite3.Cursor:
        try:
            return super().executescript(sql_script)
        except sqlite3.Error as exc:
            _raise_for(exc, self._path())

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.Error as exc:
            _raise_for(exc, self._path())

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size)
        except sqlite3.Error as exc:
            _raise_for(exc, self._path())

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.Error as exc:
            _raise_for(exc, self._path())

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.Error as exc:
            _raise_for(exc, self._path())


class _Connection(sqlite3.Connection):
    """state.db's connection: every statement runs on a ``_Cursor``."""

    path: Path | None = None

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return self.cursor(_Cursor).execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        return self.cursor(_Cursor).executemany(sql, parameters)

    def executescript(self, sql_script: str, /) -> sqlite3.Cursor:
        return self.cursor(_Cursor).executescript(sql_script)


def connect(path: Path) -> sqlite3.Connection:
    """A connection to state.db at ``path`` (made if missing) whose errors name it (``state_error``)."""
    try:
        db = sqlite3.connect(
            path, timeout=10, isolation_level=None, check_same_thread=False, factory=_Connection
        )
    except sqlite3.Error as exc:
        _raise_for(exc, path)
    db.path = path
    return db


def quick_check(path: Path) -> list[str]:
    """What SQLite's quick_check finds wrong in the state.db at ``path`` (nothing: []); ``CorruptState``
    when it is not a database at all."""
    db = connect(path)
    try:
        found = [str(row[0]) for row in db.execute("PRAGMA quick_check").fetchall()]
    finally:
        db.close()
    return [] if found == ["ok"] else found


class StateDB:
    """state.db: the one place its tables are made (``_SCHEMA``), and the SQL of runs, events, settle
    times, own lines, flags, health and triage.  The outbox, channels, bus and workers tables have a
    module each beside this one (``store/<table>_table.py``) that takes a StateDB; no module outside
    store/ writes SQL."""

    def __init__(self, path: Path) -> None:
        make_dirs(path.parent)
        for side in ("", "-wal", "-shm", "-journal"):  # SQLite makes these next to it
            confine(path.with_name(path.name + side))
        self.path = path
        self.db = connect(path)
        # The connection may be shared between threads (check_same_thread=False), and two threads in one
        # connection share one transaction: whoever writes while another thread may be inside
        # ``immediate`` holds this around the statement.  Re-entrant, so that a nested ``immediate`` in
        # one thread fails as SQLite's error (a transaction within a transaction) rather than hanging.
        self.lock = threading.RLock()
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)
        for table, column, kind in _ADDED_COLUMNS:  # state.db files from before these columns
            if column not in {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}:
                try:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
                except sqlite3.OperationalError as exc:  # another process opening it added it first
                    if "duplicate column" not in str(exc):
                        raise

    @contextmanager
    def immediate(self) -> Iterator[sqlite3.Connection]:
        """One write transaction that takes SQLite's write lock before its first read, so that a reader
        in another process waits for it and then sees what it wrote (two inbox reads never hand out one
        message twice; two spawns never both take the last place).  Rolled back if the block raises."""
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")  # waits up to the connection's timeout for other writers
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def _exec(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> sqlite3.Cursor:
        return self.db.execute(sql, tuple(_safe(a) for a in args))

    def close(self) -> None:
        self.db.close()

    # --- runs ---------------------------------------------------------------------------------

    def run_started(
        self, file: str, request_id: str, claim: str, attempt: int, profile: str, host: str, pid: int | None
    ) -> int:
        cur = self._exec(
            "INSERT INTO runs (file, request_id, claim, attempt, handler, host, pid, started)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (file, request_id, claim, attempt, profile, host, pid, time.time()),
        )
        return int(cur.lastrowid or 0)

    def run_ended(
        self, run_id: int, outcome: str, exit_code: int | None, duration: float, log: str | None = None,
        cost_usd: float | None = None,
    ) -> None:  # fmt: skip
        self._exec(
            "UPDATE runs SET ended = ?, outcome = ?, exit_code = ?, duration = ?, log = ?, cost_usd = ?"
            " WHERE id = ?",
            (time.time(), outcome, exit_code, duration, log, cost_usd, run_id),
        )

    def last_heavy_run(self, file: str, request_id: str) -> dict[str, Any] | None:
        """The latest run of an executor profile for this request (built-in checks do not count)."""
        cur = self._exec(
            "SELECT * FROM runs WHERE file = ? AND request_id = ? AND handler != 'direct'"
            " AND outcome IS NOT 'claiming' ORDER BY id DESC LIMIT 1",
            (file, request_id),
        )
        row = cur.fetchone()
        return None if row is None else dict(zip([c[0] for c in cur.description], row, strict=True))

    def claimed(
        self, file: str, request_id: str, claim: str, profile: str, host: str, outcome: str = "claimed"
    ) -> None:
        """A claim that is on disk, before its job starts: if an editor then saves over the claim lines,
        the next pass still knows this request was taken (attempt 0 stands for the claim itself).
        ``claiming``: about to be pushed; it counts as this clone's claim (a kill -9 right after the push
        leaves it in the note) but not as a run until ``confirm_claims``."""
        now = time.time()
        self._exec(
            "INSERT INTO runs (file, request_id, claim, attempt, handler, host, started, ended, outcome)"
            " VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?)",
            (file, request_id, claim, profile, host, now, now, outcome),
        )

    def confirm_claims(self, claims: list[str]) -> None:
        for claim in claims:
            self._exec(
                "UPDATE runs SET outcome = 'claimed' WHERE claim = ? AND outcome = 'claiming'", (claim,)
            )

    def drop_claims(self, claims: list[str]) -> None:
        for claim in claims:
            self._exec("DELETE FROM runs WHERE claim = ? AND outcome = 'claiming'", (claim,))

    def knows_claim(self, claim: str) -> bool:
        """Whether this clone made ``claim`` (its runs are recorded here from the moment it was taken)."""
        return self._exec("SELECT 1 FROM runs WHERE claim = ? LIMIT 1", (claim,)).fetchone() is not None

    def job_started(self, run_id: int, pid: int, start: int | None) -> None:
        self._exec("UPDATE runs SET job_pid = ?, job_start = ? WHERE id = ?", (pid, start, run_id))

    def unfinished_runs(self, host: str) -> list[dict[str, Any]]:
        cur = self._exec("SELECT * FROM runs WHERE ended IS NULL AND host = ? ORDER BY id", (host,))
        names = [c[0] for c in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def runs(self, file: str | None = None, request_id: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM runs"
        args: list[Any] = []
        if file is not None and request_id is not None:
            sql += " WHERE file = ? AND request_id = ?"
            args = [file, request_id]
        cur = self._exec(sql + " ORDER BY id", args)
        names = [c[0] for c in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    # --- events -------------------------------------------------------------------------------

    def event(self, kind: str, file: str | None = None, request_id: str | None = None, **detail: Any) -> None:
        self._exec(
            "INSERT INTO events (at, kind, file, request_id, detail) VALUES (?, ?, ?, ?, ?)",
            (time.time(), kind, file, request_id, json.dumps(detail, default=str) if detail else None),
        )

    def events(self, kind: str | None = None, after: int = 0) -> list[dict[str, Any]]:
        """Events in order (of one kind), those after event id ``after`` only."""
        sql = "SELECT id, at, kind, file, request_id, detail FROM events WHERE id > ?"
        args: tuple[Any, ...] = (after, kind) if kind else (after,)
        cur = self._exec(sql + (" AND kind = ?" if kind else "") + " ORDER BY id", args)
        return [
            {"id": i, "at": at, "kind": k, "file": f, "request_id": r, "detail": json.loads(d) if d else {}}
            for i, at, k, f, r, d in cur.fetchall()
        ]

    def last_event_id(self) -> int:
        return int(self._exec("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()[0])

    # --- settle -------------------------------------------------------------------------------

    def first_seen(self, file: str, request_id: str, person_hash: str, now: float) -> float:
        """When this exact version of the person's lines was first seen."""
        self._exec(
            "INSERT OR IGNORE INTO seen (file, request_id, person_hash, first_seen) VALUES (?, ?, ?, ?)",
            (file, request_id, person_hash, now),
        )
        row = self._exec(
            "SELECT first_seen FROM seen WHERE file = ? AND request_id = ? AND person_hash = ?",
            (file, request_id, person_hash),
        ).fetchone()
        return float(row[0])

    # --- flags --------------------------------------------------------------------------------

    # --- lines vaultops wrote -------------------------------------------------------------------

    def remember_lines(self, file: str, lines: Sequence[tuple[str, str, str]]) -> None:
        """(request id, exact line, hash of the request's text) of the lines vaultops writes under requests
        of ``file``; the hash may be "" (not known, or not needed: the line is not an escalation)."""
        now = time.time()
        self.db.executemany(
            "INSERT OR IGNORE INTO own_lines (digest, written, seen) VALUES (?, ?, ?)",
            [(_line_digest(file, rid, line), now, seen or None) for rid, line, seen in lines],
        )

    def wrote_line(self, file: str, request_id: str, line: str) -> bool:
        """vaultops (this clone) wrote exactly this line under this request of this note."""
        return self.own_line(file, request_id, line) is not None

    def own_line(self, file: str, request_id: str, line: str) -> OwnLine | None:
        """What this clone remembers of a line it wrote under this request of this note; None: not its."""
        digest = _line_digest(file, request_id, line)
        row = self._exec("SELECT seen, consumed FROM own_lines WHERE digest = ?", (digest,)).fetchone()
        return None if row is None else OwnLine(row[0], row[1] is not None)

    def consume(self, file: str, request_id: str, line: str) -> None:
        """vaultops acted on the answer to this status line of its own: no answer to it counts again."""
        digest = _line_digest(file, request_id, line)
        self._exec(
            "UPDATE own_lines SET consumed = ? WHERE digest = ? AND consumed IS NULL", (time.time(), digest)
        )

    def get(self, key: str) -> str | None:
        row = self._exec("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set(self, key: str, value: str) -> None:
        self._exec("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", (key, value))

    # --- profiles -----------------------------------------------------------------------------

    def health(self, profile: str) -> tuple[str, float, float, str] | None:
        """(state, checked, duration, detail) of the last health check of a profile."""
        row = self._exec("SELECT state, checked, duration, detail FROM health WHERE profile = ?", (profile,))
        found = row.fetchone()
        return None if found is None else (str(found[0]), float(found[1]), float(found[2]), str(found[3]))

    def set_health(self, profile: str, state: str, checked: float, duration: float, detail: str) -> None:
        sql = "INSERT OR REPLACE INTO health (profile, state, checked, duration, detail) VALUES (?,?,?,?,?)"
        self._exec(sql, (profile, state, checked, duration, detail))

    def profile_activity(self, since: float) -> dict[str, tuple[int, int, int]]:
        """Per profile: (attempts since ``since``, failed ones among them, runs not ended)."""
        sql = (
            "SELECT handler, SUM(started >= ?),"
            " SUM(started >= ? AND ended IS NOT NULL AND outcome != 'done'),"
            " SUM(ended IS NULL) FROM runs WHERE attempt > 0 GROUP BY handler"
        )
        rows = self._exec(sql, (since, since)).fetchall()
        return {str(h): (int(a or 0), int(f or 0), int(r or 0)) for h, a, f, r in rows}

    def cost_since(self, since: float) -> float:
        """What runs and model triage cost from ``since`` on."""
        sql = (
            "SELECT (SELECT COALESCE(SUM(cost_usd), 0) FROM runs WHERE started >= ?)"
            " + (SELECT COALESCE(SUM(cost_usd), 0) FROM triage WHERE at >= ?)"
        )
        row = self._exec(sql, (since, since)).fetchone()
        return float(row[0] or 0.0)

    # --- model triage -------------------------------------------------------------------------

    def triage(self, key: str) -> dict[str, Any] | None:
        """The cached answer for one version of a request: answer (JSON text or None), failure, cost."""
        cur = self._exec("SELECT * FROM triage WHERE key = ?", (key,))
        row = cur.fetchone()
        return None if row is None else dict(zip([c[0] for c in cur.description], row, strict=True))

    def set_triage(
        self, key: str, profile: str, file: str | None, request_id: str | None, answer: str | None,
        failure: str | None, cost_usd: float | None, duration: float,
    ) -> None:  # fmt: skip
        self._exec(
            "INSERT OR REPLACE INTO triage (key, at, profile, file, request_id, answer, failure, cost_usd,"
            " duration) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, time.time(), profile, file, request_id, answer, failure, cost_usd, duration),
        )
