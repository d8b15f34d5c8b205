"""Errors that reach the person.  Each carries one sentence that says what is wrong and what to do."""

from __future__ import annotations

import errno
import os


class VaultopsError(Exception):
    """An error the CLI prints as one line and turns into a non-zero exit."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(VaultopsError):
    exit_code = 2


class VaultError(VaultopsError):
    exit_code = 2


class LockBusy(VaultopsError):
    """Another vaultops pass holds the vault; try again later (EX_TEMPFAIL)."""

    exit_code = 75


class UnsafePath(VaultopsError):
    exit_code = 2


class DiskError(VaultopsError, OSError):
    """The disk refused a write of vaultops's own (EX_IOERR).  Still an ``OSError``, with the errno and file
    of the one it stands for, so that code which copes with a failed write goes on coping with it."""

    exit_code = 74

    def __init__(self, message: str, code: int | None = None, filename: str | None = None) -> None:
        super().__init__(message)
        # OSError's own fields, as those of the error it stands for
        self.errno, self.filename = code, filename
        self.strerror = os.strerror(code) if code else message

    def __str__(self) -> str:  # the sentence, not OSError's "[Errno 28] …": it is what a reader needs
        return self.message


class DiskFull(DiskError):
    """No space left (ENOSPC) or the disk quota used up (EDQUOT)."""


class ReadOnlyDisk(DiskError):
    """The disk (file system) holding the file is mounted read-only (EROFS)."""


class NotWritable(DiskError):
    """A file of vaultops's own that its permissions keep it from writing."""


class CorruptState(VaultopsError):
    """state.db is not an SQLite database, or is damaged (EX_DATAERR): restarting cannot fix it."""

    exit_code = 65


class StateBusy(VaultopsError):
    """Another program holds state.db locked past vaultops's wait (EX_TEMPFAIL): it is tried again."""

    exit_code = 75


def disk_full(path: object, code: int = errno.ENOSPC) -> DiskFull:
    if code == getattr(errno, "EDQUOT", None):
        return DiskFull(
            f"{path} cannot be written: the disk quota is used up ({os.strerror(code)}); free space or raise"
            " the quota",
            code,
            str(path),
        )
    return DiskFull(
        f"{path} cannot be written: the disk holding it is full ({os.strerror(code)}); free space on that"
        " disk (`df` shows how much is left)",
        code,
        str(path),
    )


def read_only_disk(path: object) -> ReadOnlyDisk:
    return ReadOnlyDisk(
        f"{path} cannot be written: the disk holding it is read-only ({os.strerror(errno.EROFS)}); remount"
        " it read-write, or move the vault to a writable disk",
        errno.EROFS,
        str(path),
    )


def corrupt_state(path: object, detail: str) -> CorruptState:
    """The one sentence for a damaged state.db: what to do, and what moving it aside loses."""
    name = os.path.basename(str(path))
    return CorruptState(
        f"{path} is corrupt ({detail}); stop vaultops and rename it (to {name}.corrupt, say): vaultops"
        " then makes a new one, forgetting this clone's run history, its queued notices and bus messages,"
        " and which status lines it wrote (answers under older escalations stop counting)"
    )


_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


def disk_error(exc: OSError, path: object = None) -> DiskError | None:
    """The ``DiskError`` a failed write's ``OSError`` stands for (a full or read-only disk), naming ``path``
    (by default the error's own file); None for any other failure, which keeps its own meaning."""
    if isinstance(exc, DiskError):
        return exc
    where = path if path is not None else exc.filename
    if where is None:
        return None  # a sentence must name the file: one without it says nothing the person can act on
    if exc.errno in _FULL:
        return disk_full(where, exc.errno or errno.ENOSPC)
    if exc.errno == errno.EROFS:
        return read_only_disk(where)
    return None


def disk_refuses(path: str | os.PathLike[str]) -> DiskError | None:
    """For a failure whose cause is not said (SQLite's "disk I/O error", "unable to open database file"):
    the file system holding ``path`` asked whether it is read-only or has no space left; None otherwise."""
    folder = os.fspath(path)
    while folder and not os.path.exists(folder):  # the nearest folder that exists is on the same disk
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    try:
        disk = os.statvfs(folder)
    except (OSError, ValueError):
        return None
    if disk.f_flag & os.ST_RDONLY:
        return read_only_disk(path)
    # no block, or no inode, left to this user (a file system without an inode count says 0 of 0)
    if disk.f_bavail == 0 or (disk.f_files and disk.f_favail == 0):
        return disk_full(path)
    return None
