"""From a push on the phone to the notice on the chat: two daemons on one remote, the bot's token on one.

Each trial, the phone pushes a request that must be escalated; whichever machine sees it first writes the
escalation, and the machine with the channel tells the person (the fake Bot API on 127.0.0.1 records when
the message came).  A notice from the machine that wrote it is the baseline; one relayed by the machine
with the channel, for an escalation the other machine wrote, costs about one more fetch.  Both machines
fetch every ``FETCH`` seconds (``[daemon] fetch``, 10 s by default: the figures scale with it).

    .venv/bin/python benchmarks/phone_to_chat.py [TRIALS]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.clones import Fleet, person_push
from tests.support.daemon_helpers import Daemon
from tests.support.fake_servers import FakeBotAPI
from tests.support.helpers import git
from tests.support.waiting import wait_for

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
FETCH = 2.0


def rotate(rid: str) -> str:
    return f"\n## {rid}\n- ready: yes\nRotate the Stripe secret key and update the production env file.\n"


def told(api: FakeBotAPI, rid: str) -> bool:
    return any(rid in str(m.get("text")) for m in api.sent)


def main(trials: int) -> None:
    times: dict[str, list[float]] = {"agent0": [], "agent1": []}
    with tempfile.TemporaryDirectory() as tmp, FakeBotAPI(TOKEN) as api:
        extra = f"[daemon]\nreconcile = 5\nfetch = {FETCH}\ngrace = 10\n"
        fleet = Fleet(Path(tmp), 2, "# Inbox\n", extra=extra)
        telegram = f'[notify.telegram]\ntoken = "{TOKEN}"\nchat_ids = [4242]\napi_base = "{api.base}"\n'
        with (fleet.clones[0] / ".vaultops" / "local.toml").open("a") as fh:
            fh.write("\n" + telegram)
        daemons = [Daemon(clone, fleet.env) for clone in fleet.clones]
        try:
            for d in daemons:
                d.wait_ready()
            phone = fleet.person()
            for i in range(trials):
                rid = f"REQ-key-{i}"
                person_push(phone, lambda t, rid=rid: t + rotate(rid))
                pushed = time.monotonic()
                assert wait_for(partial(told, api, rid), timeout=120)
                took = time.monotonic() - pushed
                author = git(
                    fleet.remote, "log", "-1", "--format=%an", f"--grep={rid} escalated", fleet.branch
                )
                writer = "agent1" if "agent1" in author else "agent0"
                times[writer].append(took)
        finally:
            for d in daemons:
                d.stop()
    direct, relayed = times["agent0"], times["agent1"]
    for name, got in (
        ("told by the machine that wrote it", direct),
        ("relayed for the other machine", relayed),
    ):
        if got:
            print(f"{name}: median {statistics.median(got):.2f} s over {len(got)} (max {max(got):.2f} s)")
    if direct and relayed:
        print(f"ratio relayed/direct: {statistics.median(relayed) / statistics.median(direct):.2f}")
    print(f"fetch every {FETCH:g} s on both machines")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
