"""Where vaultops writes under a vault: never through a symlink that leads out of it.

Every file vaultops makes under the vault (state.db, the lock, backups, logs, worker folders, temp files)
goes through ``confine`` first: each component between the vault root and the target that exists and is
a symlink must resolve inside the vault.  ``.vaultops/state/backups`` linked to another disk would
otherwise scatter copies of the person's notes there.  A symlink that stays inside the vault is allowed.
The last component of a file vaultops opens itself is opened with O_NOFOLLOW, so a link put there between
the check and the open is refused too.

Standard library only: the Claude Code hook imports it, and must start fast.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vaultops.base.errors import UnsafePath, disk_error

MARK = ".vaultops"  # a path under a vault's own folder names its vault: the folder above this one
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
STATE = ".vaultops/state"
# The folders vaultops keeps under STATE; a pass looks at them all before it writes anything.
STATE_FOLDERS = ("backups", "logs", "logs/runs", "workers", "allow")


def vault_of(path: Path) -> Path | None:
    """The vault a path under ``VAULT/.vaultops/`` belongs to, or None for a path that is not in one."""
    parts = path.parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] == MARK:
            return Path(*parts[:i])
    return None


def inside(real: str, root: str) -> bool:
    """Is the resolved path ``real`` the folder ``root`` or below it (both already ``realpath``-ed)?"""
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def confine(path: Path, root: Path | None = None) -> Path:
    """``path``, once it is sure that writing there stays in the vault ``root`` (by default the vault its
    ``.vaultops`` folder belongs to; a path in no vault is returned as it is).  UnsafePath otherwise."""
    root = root if root is not None else vault_of(path)
    if root is None:
        return path
    real_root = os.path.realpath(root)
    try:
        rel = path.relative_to(root)
    except ValueError:
        raise UnsafePath(f"{path} is outside the vault {root}; vaultops writes only inside it") from None
    if ".." in rel.parts:
        raise UnsafePath(f"{path} climbs out of the vault with ..; vaultops writes only inside it")
    current = root
    for i, part in enumerate(rel.parts):
        current = current / part
        if not os.path.islink(current):
            if not os.path.lexists(current):
                break  # nothing further exists yet: what vaultops makes below it is a plain folder
            continue
        real = os.path.realpath(current)
        if not inside(real, real_root):
            # asked of where it leads, not of the link: one removed meanwhile must not change the sentence
            last = i == len(rel.parts) - 1 and not os.path.isdir(real)
            fix = "replace it with a regular file (or remove it)" if last else "replace it with a folder"
            raise UnsafePath(
                f"{current.relative_to(root).as_posix()} in the vault {root} is a symlink that leads out of"
                f" the vault (to {real}); {fix}"
            )
    return path


def confine_state(root: Path) -> None:
    """Before a pass writes anything: the state folder and each folder vaultops keeps in it stay inside
    the vault, so that a pass stops at its start, with one sentence, rather than halfway."""
    for folder in ("", *STATE_FOLDERS):
        confine(root / STATE / folder, root)


@contextmanager
def refusals(path: Path) -> Iterator[None]:
    """A write to ``path`` that the disk refuses (full, over quota, read-only) raised as the ``DiskError``
    that says so, naming ``path``; any other failure as it is."""
    try:
        yield
    except OSError as exc:
        mapped = disk_error(exc, path)
        if mapped is None or mapped is exc:
            raise
        raise mapped from exc


def make_dirs(folder: Path, root: Path | None = None) -> Path:
    """``mkdir -p`` inside the vault; checked before and after, so a link raced in is still refused."""
    confine(folder, root)
    with refusals(folder):
        folder.mkdir(parents=True, exist_ok=True)
    return confine(folder, root)


def open_fd(path: Path, flags: int, mode: int = 0o644, root: Path | None = None) -> int:
    """``os.open`` of a file vaultops writes: its folder confined, and the file itself never a symlink."""
    confine(path, root)
    try:
        with refusals(path):
            return os.open(path, flags | NOFOLLOW | CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(
                f"{path} is a symlink; vaultops writes its own files only as regular files, so remove it"
            ) from None
        raise


def write_bytes(
    path: Path, data: bytes, root: Path | None = None, *, append: bool = False, mode: int = 0o644
) -> None:
    """Write (or append, in one ``write``) ``data`` to a file vaultops owns, through ``open_fd``."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    fd = open_fd(path, flags, mode, root)
    with refusals(path):
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)


def write_text(
    path: Path, text: str, root: Path | None = None, *, append: bool = False, mode: int = 0o644
) -> None:
    write_bytes(path, text.encode("utf-8", "replace"), root, append=append, mode=mode)
