"""A disk that is full or read-only, for real: a small tmpfs, remounted read-only.  The daemon outlives it and
says so; every command says it in one sentence with exit 74, never "internal error"; doctor finds it.

Mounting needs root: CI runs the tests as root; elsewhere these are skipped, and say why.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import pytest

from tests.support.daemon_helpers import (
    Daemon,
    add_request,
    daemon_vault,
    state_of,
)
from tests.support.helpers import make_vault, vaultops
from tests.support.waiting import wait_for

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="mounting a small tmpfs or remounting one read-only needs root (CI is root)"
)

INBOX = "# Inbox\n\n## REQ-a\n- type: research\n- ready: yes\nSummarise the notes.\n"


def _mount(*args: str) -> None:
    proc = subprocess.run(["mount", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"mount {' '.join(args)}: {proc.stderr.strip()}")


@contextmanager
def small_disk(folder: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted on ``folder`` (made, empty) for the block; unmounted after, whatever
    happened (lazily if something still holds it, so that no mount outlives the test)."""
    folder.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here ({proc.stderr.strip()}), as in a container without CAP_SYS_ADMIN"
        )
    try:
        yield folder
    finally:
        if subprocess.run(["umount", str(folder)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(folder)], check=True)


def read_only(folder: Path, ro: bool = True) -> None:
    _mount("-o", f"remount,{'ro' if ro else 'rw'}", str(folder))


def fill(folder: Path, *appended: Path) -> Path:
    """A file that takes every byte left on the disk holding ``folder``; then the room left in the last page
    of each file of ``appended`` (a file that grows by appending, such as a log, has some) is taken with
    blank lines, so that the very next byte written anywhere on that disk is refused."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as fh:
        for size in (65536, 4096, 1):
            _until_full(fh, b"\0" * size)
    for path in appended:
        with path.open("ab", buffering=0) as fh:
            _until_full(fh, b"\n")
    return filler


def _until_full(fh: BinaryIO, chunk: bytes) -> None:
    try:
        while True:
            fh.write(chunk)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC, exc


def _clear(text: str) -> None:
    assert "internal error" not in text and "Traceback" not in text, text


def _doctor_problems(vault: Path) -> tuple[int, list[str]]:
    proc = vaultops("--vault", str(vault), "doctor")
    _clear(proc.stdout + proc.stderr)
    return proc.returncode, [line for line in proc.stdout.splitlines() if line.startswith("problem: ")]


def test_commands_on_a_full_disk_say_so_with_exit_74(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        vault = make_vault(disk / "v", INBOX)
        fill(disk)
        for args in (("tick",), ("submit", "Summarise the week.")):
            proc = vaultops("--vault", str(vault), *args)
            _clear(proc.stderr)
            assert proc.returncode == 74, (args, proc.stderr)
            assert str(vault) in proc.stderr and "the disk holding it is full (No space left on device)" in (
                proc.stderr
            ), proc.stderr
        code, problems = _doctor_problems(vault)
        assert code == 1
        state = vault / ".vaultops" / "state"
        assert problems == [
            f"problem: {state} cannot be written: the disk holding it is full (No space left on device); free"
            " space on that disk (`df` shows how much is left)"
        ], problems


def test_commands_on_a_read_only_disk_say_so_with_exit_74(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        vault = make_vault(disk / "v", INBOX)
        assert vaultops("--vault", str(vault), "tick").returncode == 0  # state.db, the lock, backups exist
        add_request(vault, "REQ-b")
        read_only(disk)
        for args in (("tick",), ("submit", "Summarise the week.")):
            proc = vaultops("--vault", str(vault), *args)
            _clear(proc.stderr)
            assert proc.returncode == 74, (args, proc.stderr)
            assert "the disk holding it is read-only (Read-only file system); remount it read-write" in (
                proc.stderr
            ), proc.stderr
        status = vaultops("--vault", str(vault), "status")  # what can be read is still shown
        assert status.returncode == 0 and "REQ-b" in status.stdout, status.stderr
        code, problems = _doctor_problems(vault)
        assert code == 1
        state = vault / ".vaultops" / "state"
        assert f"problem: {state} cannot be written: the disk holding it is read-only" in problems[0], (
            problems
        )
        assert len(problems) == 1, problems


def test_doctor_says_when_the_state_disk_is_nearly_full(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", INBOX)
    with small_disk(vault / ".vaultops" / "state", "8m"):
        code, problems = _doctor_problems(vault)
    assert code == 1
    assert len(problems) == 1 and "MB free; free space on it" in problems[0], problems


def _log_says_it_caught_up(log: Path, reason: str) -> bool:
    lines = log.read_text().splitlines() if log.is_file() else []
    records = [json.loads(line) for line in lines if line]  # blank lines: fill()'s
    return any(
        r.get("message", "").startswith("the log could not be written from ") and reason in r["message"]
        for r in records
    )


def test_the_daemon_outlives_a_full_state_disk_and_runs_the_request_once_there_is_room(
    tmp_path: Path,
) -> None:
    vault = daemon_vault(tmp_path / "v")
    with small_disk(vault / ".vaultops" / "state") as state:
        daemon = Daemon(vault)
        try:
            daemon.wait_ready()
            filler = fill(state, daemon.log)
            add_request(vault, "REQ-full")
            assert wait_for(lambda: "the disk holding it is full" in daemon.errors()), daemon.errors()
            assert daemon.proc.poll() is None, daemon.errors()
            filler.unlink()
            assert wait_for(lambda: state_of(vault, "REQ-full") == "done", timeout=90), daemon.errors()
            assert wait_for(lambda: _log_says_it_caught_up(daemon.log, "is full")), daemon.errors()
        finally:
            assert daemon.stop() == 0, daemon.errors()
        _clear(daemon.errors())


def test_the_daemon_records_results_while_its_log_disk_is_read_only(tmp_path: Path) -> None:
    vault = daemon_vault(tmp_path / "v")
    logs = vault / ".vaultops" / "state" / "logs"
    # the daemon's log on a disk of its own; the runs' logs below it on another, which stays writable
    with small_disk(logs), small_disk(logs / "runs"):
        daemon = Daemon(vault)
        try:
            daemon.wait_ready()
            read_only(logs)
            add_request(vault, "REQ-ro")
            assert wait_for(lambda: state_of(vault, "REQ-ro") == "done"), daemon.errors()
            assert "the disk holding it is read-only" in daemon.errors(), daemon.errors()
            read_only(logs, False)
            add_request(vault, "REQ-rw")
            assert wait_for(lambda: state_of(vault, "REQ-rw") == "done"), daemon.errors()
            assert wait_for(lambda: _log_says_it_caught_up(daemon.log, "read-only")), daemon.errors()
        finally:
            assert daemon.stop() == 0, daemon.errors()
        _clear(daemon.errors())
