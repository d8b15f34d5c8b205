"""Nothing waits in silence: an escalation still open after ``[notify] remind`` is reminded once, and a
daily digest lists what waits, what failed, the spend and what is unwell.  Both go out once across
passes, restarts and two machines on one remote (each machine's daily-note line is pushed as a
compare-and-swap before it sends).  Passes run in process with a clock the test sets; the bot is the
loopback Bot API and the remote a bare repository on disk."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from tests.support.clones import Fleet
from tests.support.fake_servers import FakeBotAPI
from tests.support.helpers import INBOX, ROTATE, git, vault_with
from vaultops.engine.tick import tick
from vaultops.model import State
from vaultops.scan.note import parse_note
from vaultops.vault import Vault

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
ME = 4242
NOW = datetime.now().astimezone().replace(microsecond=0)


def telegram(api: FakeBotAPI, extra: str = "") -> str:
    return (
        f"[notify]\n{extra}\n[notify.telegram]\n"
        f'token = "{TOKEN}"\nchat_ids = [{ME}]\napi_base = "{api.base}"\npoll_timeout = 0\n'
    )


def at(when: datetime):  # type: ignore[no-untyped-def]
    return lambda: when


def titles(api: FakeBotAPI) -> list[str]:
    return [m["text"].split("\n", 1)[0] for m in api.sent]


def daily_text(vault: Path, when: datetime) -> str:
    path = vault / "Daily" / f"{when.strftime('%Y-%m-%d')}.md"  # the template's daily-note settings
    return path.read_text() if path.exists() else ""


def test_an_open_escalation_is_reminded_once_and_its_buttons_still_work(tmp_path: Path, runs: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        config = telegram(api, 'remind = "4h"')
        vault = vault_with(tmp_path / "v", f"# Inbox\n\n{ROTATE}", config, fake_profiles=True)
        tick(Vault.open(vault), clock=at(NOW - timedelta(hours=5)), wait_settle=False)
        assert len(api.sent) == 1
        tick(Vault.open(vault), clock=at(NOW - timedelta(hours=2)), wait_settle=False)
        assert len(api.sent) == 1, "not due yet"
        tick(Vault.open(vault), clock=at(NOW), wait_settle=False)
        first = "v: REQ-rotate escalated (blocked)"
        assert titles(api) == [first, f"{first} — reminder"]
        reminder = api.sent[1]
        assert "has waited 5 h for you" in reminder["text"]
        assert "reminded on" in daily_text(vault, NOW) and "REQ-rotate" in daily_text(vault, NOW)
        for later in (NOW, NOW + timedelta(hours=5), NOW + timedelta(hours=20)):
            tick(Vault.open(vault), clock=at(later), wait_settle=False)
        assert len(api.sent) == 2, "reminded once, ever"
        query = api.press(reminder, "Approve once")
        tick(Vault.open(vault), clock=at(NOW + timedelta(hours=21)), wait_settle=False)
        assert api.toasts[query]["text"].startswith("Approved once"), api.toasts[query]
        [request] = parse_note(INBOX, (vault / INBOX).read_bytes()).requests
        assert request.state is State.DONE and runs.read_text().split() == ["REQ-rotate"]


def test_remind_zero_never_reminds(tmp_path: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        config = telegram(api, "remind = 0")
        vault = vault_with(tmp_path / "v", f"# Inbox\n\n{ROTATE}", config, fake_profiles=True)
        tick(Vault.open(vault), clock=at(NOW - timedelta(days=3)), wait_settle=False)
        tick(Vault.open(vault), clock=at(NOW), wait_settle=False)
        assert len(api.sent) == 1


def test_one_reminder_and_one_digest_across_two_machines(tmp_path: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        config = telegram(api, 'remind = "4h"\ndigest = "08:00"')
        fleet = Fleet(tmp_path, 2, f"# Inbox\n\n{ROTATE}", extra=config)
        morning = NOW.replace(hour=9, minute=0, second=0)
        a, b = (Vault.open(clone) for clone in fleet.clones)
        tick(a, clock=at(morning - timedelta(hours=5)), wait_settle=False)  # escalated on machine 0
        assert len(api.sent) == 1
        tick(b, clock=at(morning - timedelta(hours=5)), wait_settle=False)
        assert len(api.sent) == 1, "the other machine did not write the escalation: it does not tell it"
        for clone in (b, a, b, a):  # machine 1 first this time: whoever is up sends, once
            tick(Vault.open(clone.root), clock=at(morning), wait_settle=False)
        said = titles(api)
        assert said.count("machine0: REQ-rotate escalated (blocked) — reminder") + said.count(
            "machine1: REQ-rotate escalated (blocked) — reminder"
        ) == 1, said
        digests = [t for t in said if "digest for" in t]
        assert len(digests) == 1, said
        [digest] = [m["text"] for m in api.sent if "digest for" in m["text"]]
        assert "Waiting for you (1), oldest first:" in digest and "REQ-rotate" in digest
        assert "obsidian://open?vault=" in digest
        remote_daily = git(fleet.remote, "show", f"{fleet.branch}:Daily/{morning.strftime('%Y-%m-%d')}.md")
        assert remote_daily.count("reminded on host1") + remote_daily.count("reminded on host0") == 1
        assert remote_daily.count("- digest sent on host") == 1

        next_day = morning + timedelta(days=1)
        tick(a, clock=at(next_day), wait_settle=False)
        tick(b, clock=at(next_day), wait_settle=False)
        assert len([t for t in titles(api) if "digest for" in t]) == 2, "one digest per day"


def test_the_digest_waits_for_its_time_and_lists_failures_and_spend(tmp_path: Path) -> None:
    failing = "## REQ-broken\n- type: research\n- ready: yes\nResearch it.\n"
    with FakeBotAPI(TOKEN) as api:
        config = telegram(api, 'digest = "08:00"')
        vault = vault_with(tmp_path / "v", f"# Inbox\n\n{ROTATE}\n{failing}", config, fake_profiles=True)
        early = NOW.replace(hour=7, minute=30, second=0)
        tick(Vault.open(vault), clock=at(early), wait_settle=False)
        assert not [t for t in titles(api) if "digest" in t], "not before 08:00"
        tick(Vault.open(vault), clock=at(early.replace(hour=8, minute=5)), wait_settle=False)
        [digest] = [m["text"] for m in api.sent if "digest for" in m["text"]]
        assert "Waiting for you (1), oldest first:\n- REQ-rotate since " in digest
        assert "Spent today on " in digest and "of $10.00" in digest


def test_a_daily_note_that_cannot_be_written_puts_the_reminder_off_and_says_why(tmp_path: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        config = telegram(api, 'remind = "4h"')
        vault = vault_with(tmp_path / "v", f"# Inbox\n\n{ROTATE}", config, fake_profiles=True)
        tick(Vault.open(vault), clock=at(NOW - timedelta(hours=5)), wait_settle=False)
        daily = vault / "Daily" / f"{NOW.strftime('%Y-%m-%d')}.md"
        daily.parent.mkdir(exist_ok=True)
        daily.write_text("# Today\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other\n")
        report = tick(Vault.open(vault), clock=at(NOW), wait_settle=False)
        assert len(api.sent) == 1, "no reminder without its line in the daily note"
        assert any(w.startswith("reminders and the digest wait:") for w in report.warnings), report.warnings
        daily.write_text("# Today\n")
        tick(Vault.open(vault), clock=at(NOW + timedelta(minutes=1)), wait_settle=False)
        assert len(api.sent) == 2 and "reminded on" in daily.read_text()


def test_with_nobody_to_tell_no_line_says_a_reminder_went_out(tmp_path: Path) -> None:
    vault = vault_with(tmp_path / "v", f"# Inbox\n\n{ROTATE}", '[notify]\nremind = "4h"\ndigest = "00:00"\n')
    tick(Vault.open(vault), clock=at(NOW - timedelta(hours=5)), wait_settle=False)
    tick(Vault.open(vault), clock=at(NOW), wait_settle=False)
    assert "reminded on" not in daily_text(vault, NOW) and "digest sent" not in daily_text(vault, NOW)
