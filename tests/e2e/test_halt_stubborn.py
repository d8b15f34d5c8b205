"""The kill switch against an agent that will not stop: it ignores SIGTERM (and so do the helpers it
starts).  The person types ``halt: yes`` into the dashboard note in Obsidian on the machine itself (saved,
not committed): the save wakes the daemon (nothing else does here: no git, a long timer), whose pass stops
the agent anyway (SIGTERM, then SIGKILL after the grace), records the request as interrupted saying it was
the halt, and starts nothing new while it stands."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import time
from functools import partial
from pathlib import Path

from tests.support.daemon_helpers import Daemon, add_request, block, state_of
from tests.support.halt import DASHBOARD, set_halt, state_is
from tests.support.helpers import inbox_path, vault_with
from tests.support.waiting import wait_for
from vaultops.run.process import TERM_GRACE

STUBBORN = """#!/bin/sh
trap '' TERM
echo "$VAULTOPS_REQUEST $$" >> "{log}"
while :; do sleep 0.1; done
"""


def profiles(command: Path) -> str:
    return "".join(
        f'[profiles.{name}]\ncommand = ["{command}", "{{prompt}}"]\noutput = "text"\ntimeout = 120\n'
        'health = []\ngate = "none"\n\n'
        for name in ("worker-code", "worker-research")
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def drawn_with(vault: Path, rid: str) -> bool:
    return rid in (vault / DASHBOARD).read_text(encoding="utf-8")


def started(log: Path) -> list[tuple[str, int]]:
    lines = log.read_text().split() if log.exists() else []
    return [(lines[i], int(lines[i + 1])) for i in range(0, len(lines) - 1, 2)]


def test_an_agent_that_ignores_sigterm_is_stopped_by_a_halt_typed_on_the_machine(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    agent = tmp_path / "stubborn-agent"
    agent.write_text(STUBBORN.format(log=log))
    agent.chmod(agent.stat().st_mode | stat.S_IXUSR)
    daemon_cfg = "[inbox]\nsettle = 0\n\n[daemon]\nreconcile = 120\ngrace = 10\n"  # the save wakes it
    vault = vault_with(tmp_path / "v", "# Inbox\n" + block("REQ-stubborn", "Summarise the notes."), "")
    (vault / ".vaultops" / "local.toml").write_text(profiles(agent) + daemon_cfg)
    shutil.rmtree(vault / ".git")  # no commit of its own wakes the daemon: only the person's save can
    daemon = Daemon(vault)
    try:
        daemon.wait_ready()
        assert wait_for(lambda: len(started(log)) == 1), daemon.explain()
        [(_, pid)] = started(log)
        assert wait_for(lambda: (vault / DASHBOARD).exists())
        set_halt(vault, "halt: yes", "halt_reason: it will not stop")
        saved = time.monotonic()
        interrupted = partial(state_is, vault, "REQ-stubborn", "interrupted")
        assert wait_for(interrupted, timeout=60), daemon.explain()
        took = time.monotonic() - saved
        print(f"\nhalt saved on the machine -> a SIGTERM-proof agent stopped and recorded: {took:.2f} s")
        assert took < TERM_GRACE + 15
        assert not alive(pid)  # killed, not left behind
        reason = [ln for ln in inbox_path(vault).read_text().splitlines() if "status: interrupted" in ln][-1]
        assert "halt" in reason and "it will not stop" in reason, reason
        add_request(vault, "REQ-later")  # while halted: never started
        # the pass that read it drew the dashboard after it decided: that pass is over
        assert wait_for(partial(drawn_with, vault, "REQ-later")), daemon.explain()
        assert "[!danger] HALTED by the person, on" in (vault / DASHBOARD).read_text(encoding="utf-8")
        assert [rid for rid, _ in started(log)] == ["REQ-stubborn"]
        assert state_of(vault, "REQ-later") == "open"
    finally:
        if daemon.proc.poll() is None:
            daemon.proc.send_signal(signal.SIGTERM)
            daemon.proc.send_signal(signal.SIGTERM)
        daemon.stop(timeout=60)
