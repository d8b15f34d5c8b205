"""A machine that goes quiet is said once for the whole fleet, and once when it is back.  Three clones of
one bare remote; passes run in process with a clock the test sets; the bot is the loopback Bot API."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from tests.support.clones import Fleet
from tests.support.fake_servers import FakeBotAPI
from tests.support.helpers import git
from vaultops.engine.tick import tick
from vaultops.vault import Vault

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
ME = 4242
NOW = datetime.now().astimezone().replace(microsecond=0, second=0, minute=5)


def at(when: datetime):  # type: ignore[no-untyped-def]
    return lambda: when


def config(api: FakeBotAPI) -> str:
    return (
        '[daemon]\npeer_silent = "30m"\n\n[notify.telegram]\n'
        f'token = "{TOKEN}"\nchat_ids = [{ME}]\napi_base = "{api.base}"\npoll_timeout = 0\n'
    )


def titles(api: FakeBotAPI) -> list[str]:
    return [m["text"].split("\n", 1)[0] for m in api.sent]


def pass_on(fleet: Fleet, i: int, when: datetime) -> list[str]:
    return tick(Vault.open(fleet.clones[i]), clock=at(when), wait_settle=False).warnings


def test_a_quiet_machine_is_said_once_for_the_fleet_and_once_when_back(tmp_path: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        fleet = Fleet(tmp_path, 3, "# Inbox\n", extra=config(api))
        for i in (0, 1, 2):
            pass_on(fleet, i, NOW)
        for i in (0, 1):  # each sees host2's last pass, and starts counting from here on its own clock
            pass_on(fleet, i, NOW + timedelta(minutes=1))
        for minutes in (10, 20, 29):  # host0 and host1 go on; host2 has stopped
            for i in (0, 1):
                assert not [w for w in pass_on(fleet, i, NOW + timedelta(minutes=minutes)) if "peer" in w]
        assert not [t for t in titles(api) if "quiet" in t]
        later = NOW + timedelta(minutes=45)
        said = [w for i in (1, 0, 1, 0) for w in pass_on(fleet, i, later) if w.startswith("peer:")]
        quiet = [t for t in titles(api) if t.endswith("host2 is quiet")]
        assert len(quiet) == 1, titles(api)
        assert len(said) == 1 and "host2 is quiet since" in said[0], said
        assert not [t for t in titles(api) if "host0" in t or "host1" in t], "both kept making passes"
        message = next(m["text"] for m in api.sent if m["text"].split("\n", 1)[0].endswith("is quiet"))
        assert "obsidian://open?vault=" in message and "vaultops" in message
        day = f"Daily/{later.strftime('%Y-%m-%d')}.md"
        remote_daily = git(fleet.remote, "show", f"{fleet.branch}:{day}")
        assert remote_daily.count("- host2 quiet · last pass ") == 1
        for i in (0, 1):  # not again, however long it stays quiet
            pass_on(fleet, i, later + timedelta(hours=3))
        assert len([t for t in titles(api) if t.endswith("host2 is quiet")]) == 1

        back = later + timedelta(hours=4)
        pass_on(fleet, 2, back)  # host2 makes a pass: its note says so
        for i in (0, 1, 0):
            pass_on(fleet, i, back + timedelta(minutes=1))
        assert len([t for t in titles(api) if t.endswith("host2 is back")]) == 1, titles(api)
        for i in (0, 1):
            pass_on(fleet, i, back + timedelta(minutes=2))
        assert len([t for t in titles(api) if t.endswith("host2 is back")]) == 1


def test_a_machine_that_cannot_reach_the_remote_finds_nobody_quiet(tmp_path: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        fleet = Fleet(tmp_path, 2, "# Inbox\n", extra=config(api))
        for i in (0, 1):
            pass_on(fleet, i, NOW)
        pass_on(fleet, 0, NOW + timedelta(minutes=1))
        fleet.remote.rename(fleet.remote.with_name("gone.git"))  # the remote is unreachable from here on
        warnings = pass_on(fleet, 0, NOW + timedelta(hours=2))
        assert not [w for w in warnings if w.startswith("peer:")], warnings
        assert not [t for t in titles(api) if "quiet" in t]
