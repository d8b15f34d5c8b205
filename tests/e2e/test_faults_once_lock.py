"""At most once on one clone: a second daemon or tick refuses, whatever happened to the lock file.

A person who reads "the daemon holds this vault" may delete ``.vaultops/state/vault.lock`` (or its
``.json``, or put a new file there).  None of that may let a second pass in: its recovery would kill the
first daemon's agent as a leftover, and the first daemon would run the job again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.daemon_helpers import Daemon, block, daemon_vault, requests
from tests.support.helpers import inbox_path, vaultops
from tests.support.waiting import wait_for

QUICK = {"VAULTOPS_LIMITS_LOCK_WAIT": "0.3"}


def _delete_lock(state: Path) -> None:
    (state / "vault.lock").unlink()


def _replace_lock(state: Path) -> None:
    (state / "vault.lock").unlink()
    (state / "vault.lock").write_text("")


def _delete_both(state: Path) -> None:
    (state / "vault.lock").unlink()
    (state / "vault.lock.json").unlink()


def _forge_json(state: Path) -> None:
    for name in ("vault.lock", "vault.lock.json"):
        (state / name).unlink()
    (state / "vault.lock.json").write_text('{"pid": 1, "host": "elsewhere", "command": "vaultops tick"}')


def second_run(vault: Path) -> subprocess.CompletedProcess[str]:
    """A second ``vaultops run``: refused at once, or (on a broken lock) stopped after 30 s."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultops", "--vault", str(vault), "run"],
        env={**os.environ, **QUICK},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.terminate()
        out, err = proc.communicate(timeout=60)
        raise AssertionError(f"a second daemon ran on the clone: {err}") from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize(
    "damage",
    [_delete_lock, _replace_lock, _delete_both, _forge_json],
    ids=["deleted", "replaced", "json-too", "json-forged"],
)
def test_a_second_pass_refuses_whatever_happened_to_the_lock_file(
    tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    log = tmp_path / "agent.log"
    vault = daemon_vault(tmp_path / "v", "# Inbox\n" + block("REQ-long", "Summarise the archive."))
    state = vault / ".vaultops" / "state"
    daemon = Daemon(vault, {"FAKE_AGENT_LOG": str(log), "FAKE_AGENT_SCRIPT": "hang"})
    try:
        daemon.wait_ready()
        assert wait_for(lambda: log.exists() and log.read_text() == "REQ-long\n")  # its agent runs
        damage(state)
        tick = vaultops("--vault", str(vault), "tick", env=QUICK)
        assert tick.returncode == 75, tick.stderr
        assert "the vaultops daemon holds this vault" in tick.stderr
        assert f"pid {daemon.proc.pid}" in tick.stderr
        run = second_run(vault)
        assert run.returncode == 75, run.stderr
        assert f"pid {daemon.proc.pid}" in run.stderr and "stop it first" in run.stderr
        # the first daemon's agent was left alone: still running, never started again
        assert daemon.proc.poll() is None
        assert requests(vault)["REQ-long"].state.value == "running"
        assert log.read_text() == "REQ-long\n"
    finally:
        daemon.kill()


def test_once_the_daemon_is_gone_a_tick_takes_the_vault(tmp_path: Path) -> None:
    """The folder lock ends with its holder: nothing left on disk keeps the next pass out."""
    vault = daemon_vault(tmp_path / "v")
    daemon = Daemon(vault)
    daemon.wait_ready()
    _delete_both(vault / ".vaultops" / "state")
    daemon.kill()  # SIGKILL: no clean-up ran
    tick = vaultops("--vault", str(vault), "tick", env=QUICK)
    assert tick.returncode == 0, tick.stderr
    assert inbox_path(vault).exists()
