"""The note writer: the one place that changes notes on disk.

Every change is an insertion of whole lines (see ``store.placement``).  Before replacing a note the
writer keeps a rotated backup, writes a temp file in the same folder, fsyncs it, checks that the note
has not changed since it was parsed, ``os.replace``s it and fsyncs the folder.  If the person changed the
note in between, it parses the new version and applies its insertions again, so it never writes over a
newer version.  A kill -9 at any instant leaves the old note or the new one.

Given a ``NoteBytes`` (the engine's ``Notes`` port, ``engine.memory.MemoryNotes`` in tests), the writer
reads and replaces a note's bytes through it instead, with the same checks around it: the engine's pass
runs on its in-memory twin so.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from vaultops.base import faults
from vaultops.base.confine import confine, make_dirs, open_fd
from vaultops.base.errors import VaultopsError
from vaultops.base.redact import redact_lines
from vaultops.scan.note import ParsedNote, content_hash, parse_note
from vaultops.scan.plan import as_plan_note
from vaultops.scan.text import split_raw_lines
from vaultops.store.placement import Edit
from vaultops.vault import Vault

TEMP_SUFFIX = ".vaultops.tmp"
# An editor saving in place truncates the file and writes it again; vaultops does not replace a note that
# was written this recently, so that it never reads half a save and never swaps the file away under one.
QUIET = 0.02
QUIET_LIMIT = 2.0
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}" + re.escape(TEMP_SUFFIX) + "$")
MAX_ATTEMPTS = 8
VANISHED_TRIES = 5  # looks for a note that vanished while read (git's checkout rewrites files so)
VANISHED_WAIT = 0.02  # seconds between them

Plan = Callable[[ParsedNote], Sequence[Edit]]


class NoteTooLarge(VaultopsError):
    pass


class NoteBytes(Protocol):
    """A note's bytes, read and replaced whole (``engine.ports.Notes`` holds what else the engine asks)."""

    def read(self, rel: str) -> bytes | None: ...
    def replace(self, rel: str, expected: bytes | None, new: bytes) -> bool: ...


def conflict_message(note: ParsedNote) -> str:
    line = (note.conflict_line or 0) + 1
    return (
        f"{note.rel}:{line} holds git conflict markers (<<<<<<< … >>>>>>>) left by another tool; vaultops "
        "leaves the note alone until you resolve them"
    )


@dataclass(frozen=True)
class WriteResult:
    rel: str
    changed: bool
    attempts: int
    raw: bytes  # the note's bytes as written (or as found, when nothing changed)


def read_raw(path: Path, *, max_bytes: int, rel: str) -> bytes:
    size = path.stat().st_size
    if size > max_bytes:
        raise NoteTooLarge(
            f"{rel} is {size / 1e6:.1f} MB, over the {max_bytes / 1e6:.0f} MB limit; "
            "move old requests to an archive note (or raise [inbox] max_mb)"
        )
    return path.read_bytes()


def splice(raw: bytes, newline: str, edits: Sequence[Edit]) -> bytes:
    """``raw`` with the edits' lines inserted; every byte of ``raw`` stays, in order."""
    if not edits:
        return raw
    nl = newline.encode()
    pieces = raw.split(b"\n") if b"\r" not in raw else None
    count = (
        (len(pieces) - (1 if pieces[-1] == b"" else 0)) if pieces is not None else len(split_raw_lines(raw))
    )
    by_line: dict[int, list[Edit]] = {}
    for edit in edits:
        if not -1 <= edit.after < count:
            raise ValueError(f"edit after line {edit.after} is outside the note ({count} lines)")
        by_line.setdefault(edit.after, []).append(edit)

    def text(after: int, ending: bytes) -> list[bytes]:
        # vaultops's own lines may quote a note's undecodable bytes (a title, say): never write those raw;
        # and never a secret (they are redacted when made; this is the last look before the disk)
        return [
            ending.join(s.encode("utf-8", "replace") for s in redact_lines(e.lines)) + ending
            for e in by_line.get(after, [])
        ]

    out: list[bytes] = text(-1, nl)
    if pieces is None:
        for i, piece in enumerate(split_raw_lines(raw)):
            out.append(piece)
            if i in by_line:
                # Inserted lines end like the line before them: after a lone CR, a line feed would fuse
                # with it into one CRLF ending and the inserted blank line would vanish.
                ending = _ending(piece)
                if not ending:
                    out.append(nl)
                out.extend(text(i, ending or nl))
        return b"".join(out)
    # Only "\n" endings: join whole runs of lines at C speed between the insertion points.
    start = 0
    for after in sorted(a for a in by_line if a >= 0):  # the lines before the first (-1) are out already
        out.append(b"\n".join(pieces[start : after + 1]))
        out.append(b"\n" if after + 1 < len(pieces) else nl)
        out.extend(text(after, nl))
        start = after + 1
    out.append(b"\n".join(pieces[start:]))
    return b"".join(out)


def _ending(piece: bytes) -> bytes:
    if piece.endswith(b"\r\n"):
        return b"\r\n"
    return piece[-1:] if piece.endswith((b"\r", b"\n")) else b""


def writers_of(path: Path) -> list[int]:
    """Other processes that have ``path`` open for writing (Linux, from /proc; elsewhere unknown: [])."""
    if not sys.platform.startswith("linux"):
        return []
    target = os.path.realpath(path)
    me = os.getpid()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        fd_dir = f"/proc/{entry.name}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") != target:
                    continue
                with open(f"/proc/{entry.name}/fdinfo/{fd}") as info:
                    flags = next((int(ln.split()[1], 8) for ln in info if ln.startswith("flags:")), 0)
            except (OSError, ValueError):
                continue
            if flags & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR):
                found.append(int(entry.name))
    return found


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE).  False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False  # a file system that cannot exchange: the plain replace will do
    raise OSError(err, os.strerror(err), str(b))


def wait_quiet(path: Path) -> None:
    """Until nobody is writing ``path``: on Linux, until no other process has it open for writing;
    elsewhere, until it has not been written for QUIET seconds.  At most QUIET_LIMIT."""
    deadline = time.monotonic() + QUIET_LIMIT
    exact = sys.platform.startswith("linux")
    while time.monotonic() < deadline:
        if exact:
            if not writers_of(path):
                return
            time.sleep(0.005)
            continue
        try:
            age = time.time() - path.stat().st_mtime
        except FileNotFoundError:
            return
        if age >= QUIET or age < -1.0:  # old enough, or a clock that jumped: do not wait forever
            return
        time.sleep(QUIET - age)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temps(folder: Path) -> list[Path]:
    """Temp files left by a writer that was killed (its process is gone)."""
    removed = []
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            m = _TEMP.match(entry.name)
            if m and not _pid_alive(int(m["pid"])):
                with contextlib.suppress(OSError):
                    entry.unlink()
                    removed.append(entry)
    return removed


class Backups:
    """Rotated copies of notes as they were before each write, under ``.vaultops/state/backups``."""

    def __init__(self, root: Path, keep: int) -> None:
        self.root = root
        self.keep = keep

    def folder(self, rel: str) -> Path:
        return self.root / rel.replace("/", "__")

    def save(self, rel: str, raw: bytes) -> Path | None:
        """Keep ``raw`` as ``rel``'s newest backup, in a file named for its hash and written whole, so that
        a full disk or a kill leaves no part of a version under that version's name.  The newest backup
        stands for ``raw`` again only while its bytes still match its name."""
        if not raw:
            return None
        folder = make_dirs(self.folder(rel))
        remove_stale_temps(folder)  # a backup cut short by a kill
        digest = content_hash(raw)[:12]
        existing = sorted(folder.glob("*.md"))
        if existing and existing[-1].name.endswith(f"-{digest}.md"):
            if _holds(existing[-1], digest):
                return existing[-1]
            with contextlib.suppress(OSError):  # damaged (left by an older version on a full disk)
                existing.pop().unlink()
        stamp = datetime.now().strftime("%Y%m%dT%H%M%S%f")
        path = folder / f"{stamp}-{digest}.md"
        write_whole(path, raw)
        for old in existing[: max(0, len(existing) + 1 - self.keep)]:
            with contextlib.suppress(OSError):
                old.unlink()
        return path


def _holds(path: Path, digest: str) -> bool:
    """The backup at ``path`` holds the version its name says (a truncated one does not)."""
    try:
        return content_hash(path.read_bytes())[:12] == digest
    except OSError:
        return False


def write_whole(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` whole, or stays as it was: a temp file in the same folder (named so that
    ``remove_stale_temps`` clears one left by a kill), fsynced, renamed over it, the folder fsynced.  A
    write that fails (a full disk) leaves nothing behind and raises."""
    folder = path.parent
    tmp = folder / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
    try:
        fd = open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            faults.reach("backup.before_fsync")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, confine(path))
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    _fsync_dir(folder)


def _kept_changing(rel: str) -> VaultopsError:
    return VaultopsError(f"{rel} kept changing while vaultops tried to write it; it will try again next pass")


class NoteWriter:
    def __init__(self, vault: Vault, notes: NoteBytes | None = None) -> None:
        self.vault = vault
        self.notes = notes  # None: the vault's folder, with backups and the checks against editors
        self.backups = Backups(vault.state_dir / "backups", vault.config.record.backups)
        self.max_bytes = int(vault.config.inbox.max_mb * 1_000_000)
        self._parsed: dict[tuple[str, bool, bool], ParsedNote] = {}

    def parse(self, rel: str, raw: bytes, *, requests: bool = True, full: bool = False) -> ParsedNote:
        """Parse, reusing the last parse of this note when its bytes have not changed since.  Passes need
        only skeletons of finished requests; ``status`` asks for ``full``."""
        key = (rel, requests, full)
        known = self._parsed.get(key)
        if known is not None and known.raw == raw:
            return known
        if requests and self.vault.is_plan_note(rel):
            note = as_plan_note(parse_note(rel, raw, requests=False), datetime.now().astimezone())
        else:
            note = parse_note(rel, raw, requests=requests, full=full)
        self._parsed[key] = note
        return note

    def read(self, rel: str, *, requests: bool = True, full: bool = False) -> ParsedNote | None:
        """The note parsed, or None when there is none.  A note that vanishes while it is read (git's
        checkout removes a file and writes it anew) is looked for again, briefly."""
        if self.notes is not None:
            raw = self.notes.read(rel)
            return None if raw is None else self.parse(rel, raw, requests=requests, full=full)
        path = self.vault.resolve(rel)
        for _ in range(VANISHED_TRIES):
            if not path.exists():
                return None
            faults.reach("note.before_read")
            try:
                raw = read_raw(path, max_bytes=self.max_bytes, rel=rel)
            except FileNotFoundError:
                time.sleep(VANISHED_WAIT)
                continue
            return self.parse(rel, raw, requests=requests, full=full)
        return None

    def apply(self, rel: str, plan: Plan, *, create: bool = False, requests: bool = True) -> WriteResult:
        """Parse the note, ask ``plan`` for insertions, and write them safely (see the module doc)."""
        if self.notes is not None:
            return self._apply_to(self.notes, rel, plan, create=create, requests=requests)
        path = self.vault.resolve(rel)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            exists = path.exists()
            if not exists and not create:
                raise VaultopsError(f"{rel} does not exist; nothing was written")
            wait_quiet(path)
            try:
                stamp = path.stat().st_mtime_ns if exists else None
                raw = read_raw(path, max_bytes=self.max_bytes, rel=rel) if exists else b""
            except FileNotFoundError:  # gone between the look and the read: look again
                time.sleep(VANISHED_WAIT)
                continue
            note = self.parse(rel, raw, requests=requests)
            if note.conflict_line is not None:
                raise VaultopsError(conflict_message(note))
            edits = plan(note)
            if not edits:
                return WriteResult(rel, False, attempt, raw)
            new = splice(raw, note.text.newline, edits)
            if exists:
                self.backups.save(rel, raw)
            if self._replace(path, raw if exists else None, new, stamp):
                faults.reach("write.after_replace")
                return WriteResult(rel, True, attempt, new)
        raise _kept_changing(rel)

    def own(self, rel: str, new: bytes) -> bool:
        """Make a note vaultops owns whole (the dashboard, a machine's note) hold ``new``; False when it
        already did.  Written like any note: atomically, and never through a symlink out of the vault."""
        if self.notes is not None:
            return self._own_in(self.notes, rel, new)
        path = self.vault.resolve(rel)
        for _ in range(MAX_ATTEMPTS):
            try:
                stamp = path.stat().st_mtime_ns if path.exists() else None
                raw = read_raw(path, max_bytes=self.max_bytes, rel=rel) if stamp is not None else None
            except FileNotFoundError:
                continue
            if raw == new:
                return False
            if self._replace(path, raw, new, stamp):
                return True
        raise _kept_changing(rel)

    def replace(self, rel: str, expected: bytes | None, new: bytes) -> bool:
        """Write ``new`` whole over the note if it still holds ``expected`` (None: if it still does not
        exist), with the same checks and atomic replace as ``apply``; False when it changed since it was
        read (nothing is written).  The engine's ``Notes`` port (``engine.ports``) names this."""
        if self.notes is not None:
            return self.notes.replace(rel, expected, new)
        return self._replace(self.vault.resolve(rel), expected, new)

    def _apply_to(
        self, notes: NoteBytes, rel: str, plan: Plan, *, create: bool, requests: bool
    ) -> WriteResult:
        """``apply`` through ``notes``: read, plan, and a checked replace, again while the note changes."""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            found = notes.read(rel)
            if found is None and not create:
                raise VaultopsError(f"{rel} does not exist; nothing was written")
            note = self.parse(rel, found or b"", requests=requests)
            if note.conflict_line is not None:
                raise VaultopsError(conflict_message(note))
            edits = plan(note)
            if not edits:
                return WriteResult(rel, False, attempt, note.raw)
            new = splice(note.raw, note.text.newline, edits)
            if notes.replace(rel, found, new):
                return WriteResult(rel, True, attempt, new)
        raise _kept_changing(rel)

    def _own_in(self, notes: NoteBytes, rel: str, new: bytes) -> bool:
        """``own`` through ``notes``."""
        for _ in range(MAX_ATTEMPTS):
            raw = notes.read(rel)
            if raw == new:
                return False
            if notes.replace(rel, raw, new):
                return True
        raise _kept_changing(rel)

    def _replace(self, path: Path, expected: bytes | None, new: bytes, stamp: int | None = None) -> bool:
        """Write ``new`` over ``path`` if it still holds ``expected`` (None: if it still does not exist) and
        has not been written since ``stamp`` (its mtime when read)."""
        folder = make_dirs(path.parent, self.vault.root)
        remove_stale_temps(folder)
        tmp = folder / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        try:
            fd = open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, self.vault.root)
            try:
                view = memoryview(new)
                while view:
                    view = view[os.write(fd, view) :]
                faults.reach("write.after_temp")
                os.fsync(fd)
            finally:
                os.close(fd)
            with contextlib.suppress(OSError):
                os.chmod(tmp, path.stat().st_mode & 0o7777)
            faults.reach("write.before_check")
            if writers_of(path):
                return False  # an editor is saving it right now: swapping the file would lose its save
            # the last checks, as close to the replace as can be: any save since we read means read again
            try:
                current = path.read_bytes() if path.exists() else None
                if current != expected or (stamp is not None and path.stat().st_mtime_ns != stamp):
                    return False
            except FileNotFoundError:  # removed under us (git's checkout): read again
                return False
            faults.reach("write.before_replace")
            try:
                swapped = expected is not None and exchange(tmp, path)
            except FileNotFoundError:  # removed at the last moment: ours must not take its place
                return False
            if swapped:
                # The old note now sits at `tmp`.  A save that began before the swap went on writing into
                # it: then put it back, so that the save stands, and start again from its bytes.
                wait_quiet(tmp)
                if tmp.read_bytes() != expected:
                    exchange(tmp, path)
                    return False
            else:
                os.replace(tmp, path)
            _fsync_dir(folder)
            return True
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
