"""Two machines and a phone, as one product (issue 29): two daemons and a phone clone on one bare remote, a
fake Telegram Bot API on 127.0.0.1 with the token on one machine.  Escalations written by either machine
reach the chat once; one is answered from the phone, one from the chat (a button press, which Telegram
sends back with the message's text); a config typo pushed from the phone and then fixed stops no machine;
nothing runs twice, and the history stays quiet."""

from __future__ import annotations

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
from tests.support.helpers import git
from tests.support.waiting import wait_for


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
            assert all(d.proc.poll() is None for d in daemons), "no machine stopped"
        finally:
            codes = [d.stop() for d in daemons]
        assert codes == [0, 0], [d.errors() for d in daemons]
        everything = [*asks, *work, "REQ-during"]
        assert fleet.runs() == dict.fromkeys(everything, 1), "each ran once"
        assert all(len(sent_about(api, rid)) == 1 for rid in asks), "each escalation told once"
        assert not any(sent_about(api, rid) for rid in [*work, "REQ-during"]), "nothing else about requests"
        subjects = git(fleet.remote, "log", "--format=%s", f"{start}..{fleet.branch}").splitlines()
        mine = [s for s in subjects if s.startswith("vaultops:")]
        per_request = len(mine) / len(everything)
        print(f"{len(mine)} vaultops commits for {len(everything)} requests: {per_request:.2f} per request")
        assert per_request <= 3.0, mine  # an escalated one: its escalation, its approval's claim, its result
