"""A full disk during a backup (issue 25, "The person's bytes"): the backups folder is a tiny tmpfs, filled
so that the backup of the note runs out of space half-way.  Nothing is left under the name of the version
it was writing, and once there is room again the next write's backup is whole.  Root only (mounting a file
system); skipped elsewhere, with the file-size-limit variant in tests/unit/test_faults_bytes_backups.py."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultops.config import Config
from vaultops.model import State, Target
from vaultops.scan.note import content_hash
from vaultops.store.inserts import Insert, edits_for
from vaultops.store.notes import NoteWriter
from vaultops.vault import Vault

REL = "_System/COO-Inbox.md"
RAW = ("# Inbox\n\n## REQ-a\n- type: research\nSummarise the note.\n" + "filler line\n" * 4000).encode()

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="mounting a small tmpfs to fill takes root (CI runs as root); the file-size-limit variant "
    "(tests/unit/test_faults_bytes_backups.py) runs anywhere",
)


@contextlib.contextmanager
def tiny_disk(folder: Path, size: str) -> Iterator[None]:
    folder.mkdir(parents=True)
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path, leave: int) -> Path:
    """A file taking all the space of ``folder``'s file system but about ``leave`` bytes."""
    filler = folder / "filler"
    stat = os.statvfs(folder)
    filler.write_bytes(b"\0" * max(0, stat.f_bavail * stat.f_frsize - leave))
    return filler


def test_a_full_disk_during_a_backup_leaves_no_truncated_backup_and_the_next_one_is_whole(
    tmp_path: Path,
) -> None:
    vault = Vault(tmp_path.resolve(), Config())
    (tmp_path / "_System").mkdir()
    (tmp_path / REL).write_bytes(RAW)
    writer = NoteWriter(vault)
    backups = vault.state_dir / "backups"
    with tiny_disk(backups, "256k"):
        folder = writer.backups.folder(REL)
        folder.mkdir()
        filler = fill(backups, 16 * 1024)  # room for a third of the note
        inserts = [Insert(Target("REQ-a"), ("- status: done @ t",), frozenset(State))]
        with pytest.raises(OSError) as failed:
            writer.apply(REL, lambda note: edits_for(note, inserts))
        assert failed.value.errno == errno.ENOSPC
        assert list(folder.iterdir()) == [], "a part of the version was left behind"
        assert (tmp_path / REL).read_bytes() == RAW  # the note itself is as it was
        filler.unlink()
        writer.apply(REL, lambda note: edits_for(note, inserts))
        [kept] = list(folder.iterdir())
        assert kept.read_bytes() == RAW and kept.stem.endswith(content_hash(RAW)[:12])
        assert (tmp_path / REL).read_bytes() == RAW + b"- status: done @ t\n"
