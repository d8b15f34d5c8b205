"""Commits per request on a fleet: two daemons and a phone on one bare remote.

The phone pushes N research requests (the fake agent answers them); both daemons run until every request
is done; then the remote's history since the start is counted, and its subjects shown by how often each
came.  Once with ``[git] batch = 0`` (every pass commits the daily note and dashboard it drew: the baseline),
once as configured.  Issue 29 found 183 commits for about 35 requests.

    .venv/bin/python benchmarks/commits.py [N]
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.clones import Fleet, person_push, request_block
from tests.support.daemon_helpers import Daemon
from tests.support.helpers import git
from tests.support.waiting import wait_for

FAST = "[daemon]\nreconcile = 2\nfetch = 1\ngrace = 10\n"


def main(n: int) -> None:
    before = trial(n, "[git]\nbatch = 0\n")  # the baseline: every pass commits what it drew
    after = trial(n, "")
    print(f"ratio: {after / before:.2f} (commits per request with [git] batch, against without)")


def trial(n: int, extra: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        fleet = Fleet(Path(tmp), 2, "# Inbox\n", extra=FAST + extra)
        start = git(fleet.remote, "rev-parse", fleet.branch).strip()
        daemons = [Daemon(clone, fleet.env) for clone in fleet.clones]
        began = time.monotonic()
        try:
            for d in daemons:
                d.wait_ready()
            phone = fleet.person()
            for i in range(n):
                person_push(phone, lambda t, i=i: t + request_block(f"REQ-{i:03d}", f"Summarise part {i}."))
            ids = {f"REQ-{i:03d}" for i in range(n)}

            def all_done() -> bool:
                got = fleet.remote_requests()
                return all(rid in got and got[rid].state.value == "done" for rid in ids)

            assert wait_for(all_done, timeout=300), "not every request finished"
            # the fleet settles: the last dashboards and daily notes are pushed
            time.sleep(5)
        finally:
            for d in daemons:
                d.stop()
        took = time.monotonic() - began
        subjects = git(fleet.remote, "log", "--format=%s", f"{start}..{fleet.branch}").splitlines()
        mine = [s for s in subjects if not s.startswith("person:")]
    print(f"{extra.strip() or '[git] batch as configured'}:")
    print(
        f"{n} requests, 2 daemons and a phone: {len(mine)} vaultops commits "
        f"({len(mine) / n:.2f} per request), {len(subjects) - len(mine)} by the phone, {took:.1f} s"
    )
    for subject, count in Counter(
        s.split(":", 1)[0] + ": " + s.split(":", 1)[1][:50] if ":" in s else s for s in mine
    ).most_common(12):
        print(f"{count:5d}  {subject}")
    return len(mine) / n


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
