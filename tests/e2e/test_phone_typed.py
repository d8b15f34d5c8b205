"""A phone's typing on a real fleet (issue 29): two machines and a phone clone on one bare remote, real git
and ``vaultops tick`` processes.  The phone pushes a request whose heading has a non-breaking space after
``##`` and an approval typed with a phone's capitals, non-breaking spaces and period.  The heading is named
once, never merged into the request above; the approval runs the escalation once, on the machine that
escalated it."""

from __future__ import annotations

from pathlib import Path

from tests.support.clones import Fleet, after, person_push, statuses
from tests.support.helpers import ROTATE

ENV = "## REQ-env\n- type: env-check\n- ready: yes\nIs git installed?\n"
PHONE = "\n##\u00a0REQ-disk\n- type: env-check\n- ready: yes\nHow full is the disk?\n"


def test_a_phone_s_heading_and_approval_on_a_fleet(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 2, f"# Inbox\n\n{ROTATE}\n{ENV}")
    assert fleet.tick(0).returncode == 0
    assert fleet.remote_requests()["REQ-rotate"].state.value == "escalated"
    phone = fleet.person()
    person_push(phone, lambda text: text.rstrip("\n") + "\n" + PHONE)
    person_push(phone, after("REQ-rotate", "-\u00a0Decision:\u00a0Approve."))
    for i in (1, 0, 1, 0):
        proc = fleet.tick(i)
        assert proc.returncode == 0, proc.stderr
    text = fleet.remote_inbox()
    requests = fleet.remote_requests()
    assert fleet.runs() == {"REQ-rotate": 1}, text
    said = [s.split()[0] for s in statuses(text, "REQ-rotate")]
    assert said == ["escalated", "approved", "running", "done"], text
    assert requests["REQ-env"].end == text.splitlines().index("##\u00a0REQ-disk"), text
    said = statuses(text, "REQ-disk")
    assert len(said) == 1 and "is almost a request" in said[0], said
    assert "retype it as `## REQ-disk`" in said[0]
    fleet.fsck()
