"""The daemon's own log cannot be written (its file became a folder, ``.vaultops/`` was deleted, a value
cannot be shown): the daemon goes on, records the agent's result in the note, says so on stderr once, and
says in the log, once it can be written again, from when to when it could not."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from tests.support.daemon_helpers import (
    Daemon,
    add_request,
    daemon_vault,
    state_of,
)
from tests.support.helpers import git
from tests.support.waiting import wait_for
from vaultops.daemon.log import DaemonLog


def _make_folder_of(path: Path) -> None:
    """``path`` (a file the daemon appends to) replaced by a folder: each write of it fails with EISDIR."""
    while True:
        path.unlink(missing_ok=True)
        try:
            path.mkdir()
            return
        except FileExistsError:  # the daemon wrote a line in between: again
            continue


def test_a_log_that_cannot_be_written_stops_nothing_and_is_said_then_caught_up(tmp_path: Path) -> None:
    vault = daemon_vault(tmp_path / "v")
    daemon = Daemon(vault)
    log = daemon.log
    try:
        daemon.wait_ready()
        _make_folder_of(log)
        add_request(vault, "REQ-while-broken")
        assert wait_for(lambda: state_of(vault, "REQ-while-broken") == "done"), daemon.errors()
        # committed too: the result is not only in the working tree
        assert wait_for(lambda: "REQ-while-broken" in git(vault, "show", "HEAD:_System/COO-Inbox.md"))
        errors = daemon.errors()
        assert f"the log {log} cannot be written: Is a directory" in errors, errors
        assert errors.count("cannot be written") == 1, errors  # once for the whole incident
        assert "started request=REQ-while-broken" in errors  # its lines still reach stderr

        log.rmdir()
        add_request(vault, "REQ-after")
        assert wait_for(lambda: state_of(vault, "REQ-after") == "done"), daemon.errors()
        assert wait_for(lambda: log.is_file() and "REQ-after" in log.read_text()), daemon.errors()
    finally:
        assert daemon.stop() == 0, daemon.errors()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    said = [
        r["message"] for r in records if r["event"] == "warning" and "could not be written" in r["message"]
    ]
    assert len(said) == 1, records
    assert said[0].startswith("the log could not be written from ") and ": Is a directory;" in said[0], said
    assert "vaultops: the log could not be written from" in daemon.errors()
    # the line that says so comes first: what follows it was written as it happened
    events = [r["event"] for r in records]
    assert events.index("warning") < events.index("started"), events


def test_a_deleted_vaultops_folder_is_made_again_for_the_log(tmp_path: Path) -> None:
    vault = daemon_vault(tmp_path / "v")
    daemon = Daemon(vault)
    try:
        daemon.wait_ready()
        shutil.rmtree(vault / ".vaultops")  # as a person cleaning up might, while the daemon runs
        add_request(vault, "REQ-after-delete")
        assert wait_for(lambda: state_of(vault, "REQ-after-delete") == "done"), daemon.errors()
        assert wait_for(lambda: daemon.log.is_file() and "REQ-after-delete" in daemon.log.read_text())
        assert not (vault / ".vaultops").is_symlink() and (vault / ".vaultops" / "state" / "logs").is_dir()
    finally:
        assert daemon.stop() == 0, daemon.errors()
    assert "cannot be written" not in daemon.errors()  # nothing was lost: the folder was made again


def test_a_vaultops_folder_linked_out_of_the_vault_gets_no_log_line(tmp_path: Path) -> None:
    """Made again only inside the vault: a ``.vaultops`` that now leads elsewhere is never written through."""
    vault = daemon_vault(tmp_path / "v")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    daemon = Daemon(vault)
    try:
        daemon.wait_ready()
        shutil.rmtree(vault / ".vaultops")
        (vault / ".vaultops").symlink_to(outside)
        add_request(vault, "REQ-linked")
        assert wait_for(lambda: "leads out of the vault" in daemon.errors()), daemon.errors()
        assert daemon.proc.poll() is None, daemon.errors()
    finally:
        assert daemon.stop() == 0, daemon.errors()
    assert list(outside.rglob("*")) == [], list(outside.rglob("*"))


class Unshowable:
    def __str__(self) -> str:
        raise RuntimeError("no text for this")

    __repr__ = __str__


def test_the_log_never_raises_and_keeps_the_event(tmp_path: Path) -> None:
    path = tmp_path / "v" / ".vaultops" / "state" / "logs" / "daemon.jsonl"
    stream = io.StringIO()
    log = DaemonLog(path, stream)
    log.info("odd", value=Unshowable())
    _make_folder_of(path)
    log.info("lost", n=1)
    log.info("lost", n=2)
    path.rmdir()
    log.info("back")
    events = [json.loads(line)["event"] for line in path.read_text().splitlines()]
    assert events == ["warning", "back"], events  # "odd" was in the file that became a folder
    message = json.loads(path.read_text().splitlines()[0])["message"]
    assert ": Is a directory; 2 lines of that time are only on stderr" in message, message
    shown = stream.getvalue()
    assert "odd (fields not shown" in shown and "lost n=2" in shown, shown
