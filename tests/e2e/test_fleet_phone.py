"""Two machines and a phone, as one product (issue 29): two daemons and a phone clone on one bare remote, a
fake Telegram Bot API on 127.0.0.1 with the token on one machine.  Escalations written by either machine
reach the chat once; one is answered from the phone, one from the chat (a button press, which Telegram
sends back with the message's text); a config typo pushed from the phone and then fixed stops no machine;
the inbox renamed on the phone, with its new path pushed, goes on; nothing runs twice, and the history
stays quiet."""

from __future__ import annotations

import subprocess
from functools import partial
from pathlib import Path

from tests.support.clones import Fleet, after, person_push, request_block
from tests.support.daemon_helpers import Daemon
from tests.support.escalations import (
    FAST,
    ME,
    TOKEN,
    is_state,
    push_config_typo,
    rotate,
    sent_about,
    telegram_config,
    told_once,
    warned,
)
from tests.support.fake_servers import FakeBotAPI
from tests.support.helpers import INBOX, git
from tests.support.waiting import wait_for
from vaultops.scan.note import parse_note


def move_inbox(phone: Path, new: str) -> None:
    """``git mv`` on the phone, and the shared config's ``[inbox] path`` set to where it went, pushed."""
    git(phone, "pull", "-q", "--rebase")
    git(phone, "mv", INBOX, new)
    config = phone / ".vaultops" / "config.toml"
    config.write_text(config.read_text().replace(f'path = "{INBOX}"', f'path = "{new}"', 1))
    git(phone, "commit", "-qam", "person: the inbox moved")
    git(phone, "push", "-q")


def done_in(fleet: Fleet, rel: str, rid: str) -> bool:
    try:
        text = git(fleet.remote, "show", f"{fleet.branch}:{rel}")
    except subprocess.CalledProcessError:  # not there yet
        return False
    found = [r for r in parse_note(rel, text.encode()).requests if r.id == rid]
    return bool(found) and found[0].state.value == "done"


def test_two_machines_and_a_phone_as_one_product(tmp_path: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        fleet = Fleet(tmp_path, 2, "# Inbox\n", extra=FAST)
        telegram = telegram_config(api)
        with (fleet.clones[0] / ".vaultops" / "local.toml").open("a") as fh:
            fh.write(telegram)
        start = git(fleet.remote, "rev-parse", fleet.branch).strip()
        phone = fleet.person()
        daemons = [Daemon(clone, fleet.env) for clone in fleet.clones]
        try:
            for d in daemons:
                d.wait_ready()
            asks, work = ["REQ-key-a", "REQ-key-b"], ["REQ-sum-a", "REQ-sum-b"]
            for rid in asks:
                person_push(phone, lambda t, rid=rid: t + rotate(rid))
            for rid in work:
                person_push(phone, lambda t, rid=rid: t + request_block(rid, f"Summarise {rid}."))
            for rid in asks:
                assert wait_for(partial(is_state, fleet, rid, "escalated")), daemons[0].explain()
                assert wait_for(partial(told_once, api, rid)), daemons[0].explain()
            for rid in work:
                assert wait_for(partial(is_state, fleet, rid, "done")), daemons[0].explain()
            # one answer typed on the phone, one pressed in the chat
            person_push(phone, after(asks[0], "- decision: approve"))
            [message] = sent_about(api, asks[1])
            api.press(message, "Approve once", user_id=ME)
            for rid in asks:
                assert wait_for(partial(is_state, fleet, rid, "done")), daemons[0].explain()
            # a typo pushed from the phone, work meanwhile, then the fix: no machine stops
            push_config_typo(phone, typo=True)
            for d in daemons:
                assert wait_for(partial(warned, d, "setle")), d.explain()
            person_push(phone, lambda t: t + request_block("REQ-during", "Summarise the typo."))
            assert wait_for(partial(is_state, fleet, "REQ-during", "done")), daemons[0].explain()
            push_config_typo(phone, typo=False)
            # the inbox renamed on the phone, its new path pushed with it, and a request saved there
            move_inbox(phone, "Inbox.md")
            with (phone / "Inbox.md").open("a") as fh:
                fh.write(request_block("REQ-moved", "Summarise the move."))
            git(phone, "commit", "-qam", "person: a request in the moved inbox")
            git(phone, "push", "-q")
            assert wait_for(partial(done_in, fleet, "Inbox.md", "REQ-moved")), daemons[0].explain()
            assert all(d.proc.poll() is None for d in daemons), "no machine stopped"
        finally:
            codes = [d.stop() for d in daemons]
        assert codes == [0, 0], [d.errors() for d in daemons]
        everything = [*asks, *work, "REQ-during", "REQ-moved"]
        assert fleet.runs() == dict.fromkeys(everything, 1), "each ran once"
        assert all(len(sent_about(api, rid)) == 1 for rid in asks), "each escalation told once"
        assert not any(sent_about(api, rid) for rid in everything if rid not in asks), "nothing else"
        subjects = git(fleet.remote, "log", "--format=%s", f"{start}..{fleet.branch}").splitlines()
        mine = [s for s in subjects if s.startswith("vaultops:")]
        per_request = len(mine) / len(everything)
        print(f"{len(mine)} vaultops commits for {len(everything)} requests: {per_request:.2f} per request")
        assert per_request <= 3.0, mine  # an escalated one: its escalation, its approval's claim, its result
