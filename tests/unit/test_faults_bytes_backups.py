"""Backups are written whole and checked before reuse (issue 25, "The person's bytes"): a write cut short (a
full disk, a file-size limit, a kill) leaves nothing under the name of the version it was writing, and a
damaged file found under that name is never taken for the version's backup.  Real files, a real child
process for the cut-short write (a file-size limit, which needs no root; the full disk itself is
tests/e2e/test_faults_bytes_backups.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from vaultops.config import Config
from vaultops.model import State, Target
from vaultops.scan.note import content_hash
from vaultops.store.inserts import Insert, edits_for
from vaultops.store.notes import Backups, NoteWriter
from vaultops.vault import Vault

REL = "_System/COO-Inbox.md"
RAW = ("# Inbox\n\n## REQ-a\n- type: research\nSummarise the note.\n" + "filler line\n" * 4000).encode()


def backups_at(tmp: Path) -> Backups:
    return Backups(tmp / ".vaultops" / "state" / "backups", keep=5)


def all_whole(folder: Path) -> None:
    """Every file in the folder is a backup whose bytes match its name, and no temp file is left."""
    for path in folder.iterdir():
        assert path.suffix == ".md", f"left behind: {path.name}"
        digest = path.stem.rsplit("-", 1)[1]
        assert content_hash(path.read_bytes())[:12] == digest, f"{path.name} does not hold its version"


def test_a_truncated_backup_left_under_a_versions_name_is_not_reused(tmp_path: Path) -> None:
    backups = backups_at(tmp_path)
    folder = backups.folder(REL)
    folder.mkdir(parents=True)
    damaged = folder / f"20260101T000000000000-{content_hash(RAW)[:12]}.md"
    damaged.write_bytes(RAW[:4096])  # what a full disk left, under the whole version's name
    path = backups.save(REL, RAW)
    assert path is not None and path.read_bytes() == RAW
    assert not damaged.exists()
    all_whole(folder)
    assert backups.save(REL, RAW) == path  # a whole one is reused


CHILD = r"""
import resource, signal, sys
from pathlib import Path
from vaultops.store.notes import Backups
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
raw = Path(sys.argv[2]).read_bytes()
try:
    Backups(Path(sys.argv[1]), keep=5).save("_System/COO-Inbox.md", raw)
except OSError as exc:
    print(f"failed: {exc.errno}")
else:
    print("saved")
"""


def test_a_backup_write_cut_short_leaves_nothing_under_the_versions_name(tmp_path: Path) -> None:
    """A child process whose files may not grow past 16 KB writes a 48 KB backup: the write fails half-way,
    as on a full disk.  Nothing may be left that the next save would take for the whole version."""
    backups = backups_at(tmp_path)
    source = tmp_path / "note.md"
    source.write_bytes(RAW)
    limit = 16 * 1024
    assert len(RAW) > 2 * limit
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(backups.root), str(source), str(limit)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.stdout.strip().startswith("failed"), proc.stdout + proc.stderr
    folder = backups.folder(REL)
    assert list(folder.iterdir()) == [], [p.name for p in folder.iterdir()]
    path = backups.save(REL, RAW)
    assert path is not None and path.read_bytes() == RAW
    all_whole(folder)


def test_a_backup_killed_before_its_rename_leaves_a_temp_that_the_next_save_clears(tmp_path: Path) -> None:
    vault = Vault(tmp_path.resolve(), Config())
    (tmp_path / "_System").mkdir()
    (tmp_path / REL).write_bytes(RAW)
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from vaultops.store.notes import Backups\n"
        "Backups(Path(sys.argv[1]), keep=5).save('_System/COO-Inbox.md', Path(sys.argv[2]).read_bytes())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(vault.state_dir / "backups"), str(tmp_path / REL)],
        env={"VAULTOPS_FAULT": "backup.before_fsync", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    writer = NoteWriter(vault)
    folder = writer.backups.folder(REL)
    assert not list(folder.glob("*.md"))  # the kill left a temp file only, never a file named as a version
    inserts = [Insert(Target("REQ-a"), ("- status: done @ t",), frozenset(State))]
    writer.apply(REL, lambda note: edits_for(note, inserts))
    all_whole(folder)
    assert [p.read_bytes() for p in folder.iterdir()] == [RAW]
