"""A corrupt state.db, as a crash, a bad disk or a sync tool leaves one: every command that meets it says so
in one sentence (the file, what to do, what is lost), exit 65, never "internal error"; doctor finds it."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from tests.support.daemon_helpers import Daemon
from tests.support.helpers import make_vault, vaultops
from tests.support.waiting import wait_for

INBOX = "# Inbox\n\n## REQ-a\n- type: research\n- ready: yes\nSummarise the notes.\n"


def _state_db(tmp_path: Path) -> tuple[Path, Path]:
    """A vault that has run a pass (its state.db holds runs), with the WAL folded into the file."""
    vault = make_vault(tmp_path / "v", INBOX)
    assert vaultops("--vault", str(vault), "tick").returncode == 0
    path = vault / ".vaultops" / "state" / "state.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return vault, path


def _overwrite(path: Path, start: int, end: int) -> None:
    with path.open("r+b") as fh:
        fh.seek(start)
        fh.write(b"\xab" * (end - start))


def _damage(path: Path, how: str) -> None:
    page = sqlite3.connect(path).execute("PRAGMA page_size").fetchone()[0]
    if how == "garbage":  # not a database at all
        path.write_bytes(os.urandom(page * 3))
    elif how == "schema":  # page 1 past the header: the list of tables
        _overwrite(path, 100, page)
    else:  # the runs table's first page
        (root,) = (
            sqlite3.connect(path).execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs'").fetchone()
        )
        _overwrite(path, (root - 1) * page, root * page)
    for side in ("-wal", "-shm"):
        path.with_name(path.name + side).unlink(missing_ok=True)


def _says_corrupt(text: str, path: Path) -> None:
    assert f"{path} is corrupt" in text, text
    assert "rename it" in text and "makes a new one" in text, text
    assert "internal error" not in text and "Traceback" not in text, text


@pytest.mark.parametrize("how", ["garbage", "schema", "runs"])
def test_tick_status_and_the_daemon_say_a_corrupt_state_db_with_exit_65(tmp_path: Path, how: str) -> None:
    vault, path = _state_db(tmp_path)
    _damage(path, how)
    for command in ("tick", "status"):
        proc = vaultops("--vault", str(vault), command)
        _says_corrupt(proc.stderr, path)
        assert proc.returncode == 65, (command, proc.stderr)
    # the daemon says it: at start-up when state.db cannot be opened (stderr is what journald keeps), else
    # when a pass meets the damage; then it keeps watching
    daemon = Daemon(vault)
    try:
        if how == "runs":  # opened fine: the first pass meets the damaged table
            assert wait_for(lambda: "is corrupt" in daemon.errors()), daemon.errors()
            assert daemon.proc.poll() is None, daemon.errors()
        else:
            assert daemon.proc.wait(timeout=60) == 65, daemon.errors()
        _says_corrupt(daemon.errors(), path)
    finally:
        assert daemon.stop() == (0 if how == "runs" else 65), daemon.errors()


@pytest.mark.parametrize("how", ["garbage", "schema", "runs"])
def test_doctor_finds_a_corrupt_state_db_and_still_runs_its_other_checks(tmp_path: Path, how: str) -> None:
    vault, path = _state_db(tmp_path)
    _damage(path, how)
    proc = vaultops("--vault", str(vault), "doctor")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    problems = [line for line in proc.stdout.splitlines() if line.startswith("problem: ")]
    assert len(problems) == 1, proc.stdout  # said once, though several checks read state.db
    _says_corrupt(problems[0], path)
    assert "ok: git: repository found" in proc.stdout  # the other checks ran
    assert "ok: state folder: .vaultops/state is writable" in proc.stdout


def test_doctor_calls_a_sound_state_db_sound(tmp_path: Path) -> None:
    vault, _ = _state_db(tmp_path)
    proc = vaultops("--vault", str(vault), "doctor")
    assert "ok: state.db: sound (SQLite quick_check)" in proc.stdout, proc.stdout
    assert "ok: disk: " in proc.stdout, proc.stdout


def test_a_state_db_moved_aside_is_made_again_and_the_vault_works(tmp_path: Path) -> None:
    """What the sentence tells the person to do works: rename it, and the next pass makes a new one."""
    vault, path = _state_db(tmp_path)
    _damage(path, "garbage")
    path.rename(path.with_name("state.db.corrupt"))
    inbox = vault / "_System" / "COO-Inbox.md"
    inbox.write_text(inbox.read_text() + "\n## REQ-b\n- type: research\n- ready: yes\nSummarise the week.\n")
    proc = vaultops("--vault", str(vault), "tick")
    assert proc.returncode == 0, proc.stderr
    assert "REQ-b: done" in proc.stdout and "REQ-a" not in proc.stdout, proc.stdout


def test_a_state_db_that_is_a_folder_is_said_with_exit_74(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", INBOX)
    path = vault / ".vaultops" / "state" / "state.db"
    path.mkdir(parents=True)
    proc = vaultops("--vault", str(vault), "tick")
    assert proc.returncode == 74, proc.stderr
    assert f"{path} cannot be opened" in proc.stderr and "regular file" in proc.stderr, proc.stderr
