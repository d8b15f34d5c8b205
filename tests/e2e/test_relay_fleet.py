"""Notices from any machine (issue 29): two daemons on one remote and a phone, the bot's token on one
machine only.  An escalation written by the machine without a channel reaches Telegram all the same, from
the machine with one, once; and an answered one is never sent again."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.clones import Fleet, after, person_push
from tests.support.daemon_helpers import Daemon
from tests.support.escalations import (
    FAST,
    TOKEN,
    rotate,
    sent_about,
    state_on_remote,
    telegram_config,
)
from tests.support.fake_servers import FakeBotAPI
from tests.support.helpers import git
from tests.support.waiting import wait_for


def test_an_escalation_written_by_a_machine_without_a_channel_is_told_once_by_the_one_with_it(
    tmp_path: Path,
) -> None:
    with FakeBotAPI(TOKEN) as api:
        telegram = telegram_config(api)
        fleet = Fleet(tmp_path, 2, "# Inbox\n", extra=FAST)
        with (fleet.clones[0] / ".vaultops" / "local.toml").open("a") as fh:
            fh.write(telegram)
        phone = fleet.person()
        quiet = Daemon(fleet.clones[1], fleet.env)  # no channel on this machine
        told: Daemon | None = None
        try:
            quiet.wait_ready()
            person_push(phone, lambda t: t + rotate("REQ-rotate-a"))
            assert wait_for(lambda: state_on_remote(fleet, "REQ-rotate-a") == "escalated"), quiet.explain()
            assert api.sent == [], "nobody could be told yet"
            told = Daemon(fleet.clones[0], fleet.env)
            told.wait_ready()
            assert wait_for(lambda: len(sent_about(api, "REQ-rotate-a")) == 1), told.explain()
            # the person answers on the phone: the machine that wrote the escalation runs it
            person_push(phone, after("REQ-rotate-a", "- decision: approve"))
            assert wait_for(lambda: state_on_remote(fleet, "REQ-rotate-a") == "done"), quiet.explain()
            person_push(phone, lambda t: t + rotate("REQ-rotate-b"))
            assert wait_for(lambda: state_on_remote(fleet, "REQ-rotate-b") == "escalated")
            assert wait_for(lambda: len(sent_about(api, "REQ-rotate-b")) == 1), told.explain()
        finally:
            assert quiet.stop() == 0, quiet.errors()
            if told is not None:
                assert told.stop() == 0, told.errors()
        assert len(sent_about(api, "REQ-rotate-a")) == 1, "an answered escalation is not told again"
        assert len(sent_about(api, "REQ-rotate-b")) == 1, "told once across the fleet"
        assert fleet.runs() == {"REQ-rotate-a": 1}


def test_a_machine_that_can_tell_says_so_to_the_fleet_at_once_not_after_a_batch(tmp_path: Path) -> None:
    """The teller is chosen from the machine notes, and a daemon holds its drawn notes for [git] batch
    seconds (120): a machine whose channel was just set up must not wait that long to say it tells."""
    with FakeBotAPI(TOKEN) as api:
        fleet = Fleet(tmp_path, 1, "# Inbox\n", extra=FAST)
        machine = fleet.clones[0]
        daemon = Daemon(machine, fleet.env)
        try:
            daemon.wait_ready()
            assert not tells_on_remote(fleet, "host0")
            with (machine / ".vaultops" / "local.toml").open("a") as fh:
                fh.write(telegram_config(api))  # picked up without a restart
            assert wait_for(lambda: tells_on_remote(fleet, "host0")), daemon.explain()
        finally:
            assert daemon.stop() == 0, daemon.errors()


def tells_on_remote(fleet: Fleet, host: str) -> bool:
    try:
        text = git(fleet.remote, "show", f"{fleet.branch}:_System/vaultops/{host}.md")
    except subprocess.CalledProcessError:
        return False
    return "\ntells: true\n" in text
