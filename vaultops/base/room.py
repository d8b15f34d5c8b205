"""Whether the disk holding vaultops's state has room to write: asked of the disk, not learnt from a
failed write, so a machine can say it before its writes fail.  Standard library only."""

from __future__ import annotations

import os
from pathlib import Path

from vaultops.base.errors import read_only_disk

LOW_SPACE = 50_000_000  # bytes: below this, vaultops may soon fail to write its state, backups and logs


def size(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.1f} MB"


def free_bytes(folder: Path) -> int | None:
    try:
        return _free(os.statvfs(folder))
    except OSError:
        return None


def _free(st: os.statvfs_result) -> int:
    return st.f_bavail * st.f_frsize


def room_problem(folder: Path) -> str | None:
    """One sentence when the disk holding ``folder`` is read-only or nearly full, else None.  It names no
    figure that changes from one write to the next: a machine's note that shows it is not rewritten on
    every pass while the disk fills."""
    try:
        st = os.statvfs(folder)  # asked once: its flags and its room are of one moment
    except OSError:  # not there (yet): the write that makes it says what is wrong
        return None
    if st.f_flag & os.ST_RDONLY:
        return read_only_disk(folder).message
    if _free(st) < LOW_SPACE:
        return (
            f"the disk holding {folder} has less than {size(LOW_SPACE)} free; free space on it (vaultops may"
            " soon fail to write its state, backups and logs)"
        )
    return None
