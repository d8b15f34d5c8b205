"""A secret in a request's title never leaves the person's own line (issue 27: a Vault ``hvs.`` token in a
title reached the daily note's heading, the dashboard and a commit).  Whole passes of the real driver on the
engine's twins: afterwards no commit of the vault (its message, or any file but the person's own lines of the
inbox), no note vaultops wrote, no notice and nothing the pass reported holds any piece of the secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import INBOX, inserted_lines
from tests.support.secret_formats import FORMATS
from tests.support.twin import TwinFleet, no_processes  # noqa: F401
from tests.unit.test_secrets_matrix import leaked

pytestmark = pytest.mark.usefixtures("no_processes")

VAULT = "hvs.CAESI" + "Jq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7"
TITLED = {  # name -> (the title's secret, its core)
    "vault": (VAULT, VAULT),
    **{name: FORMATS[name] for name in ("stripe-live", "telegram", "github-ghp", "aws-akia", "huggingface")},
}


def _inbox(secret: str) -> str:
    return (
        "# Inbox\n\n"
        f"## REQ-rotate Rotate {secret} today\n- ready: yes\nplease look into the title\n\n"
        f"## REQ-check Is {secret} | set? #now\n- type: env-check\n- ready: yes\nIs git installed?\n\n"
        f"## REQ-plain {secret}\n- ready: yes\nSummarise the notes folder in two lines\n"
    )


@pytest.mark.parametrize("name", sorted(TITLED))
def test_after_passes_over_requests_titled_with_a_secret_nothing_vaultops_wrote_holds_it(
    tmp_path: Path, name: str
) -> None:
    secret, core = TITLED[name]
    inbox = _inbox(secret)
    fleet = TwinFleet(tmp_path, 1, inbox)
    reports = [fleet.tick(), fleet.tick()]
    machine = fleet[0]
    assert machine.checks.jobs, "the env-check ran: its result and daily entry were written"
    assert fleet.sent(), "the escalation was told"
    # every commit of the vault: its message, and every file but the inbox the person wrote
    origin = fleet.origin
    for sha, commit in origin.commits.items():
        assert leaked(core, commit.message) == [], (sha, commit.message)
        for rel, raw in commit.tree.items():
            if rel != INBOX:
                assert leaked(core, raw.decode("utf-8", "replace")) == [], (sha, rel)
    # the inbox: the secret only in the person's own lines
    added = inserted_lines(inbox.encode(), fleet.remote_text().encode())
    assert added and leaked(core, b"\n".join(added).decode()) == [], added
    # every note on the machine's disk (the daily note, the dashboard, its machine note)
    for rel in machine.tree:
        if rel != INBOX:
            assert leaked(core, machine.tree[rel].decode("utf-8", "replace")) == [], rel
    # what was told and what the pass said (the CLI's and the log's lines)
    for notice in (n for m in fleet.machines for n in m.chat.sent):
        assert leaked(core, f"{notice.title}\n{notice.body}") == [], notice
    for report in reports:
        said = [*report.warnings, *report.settling, *(" ".join(o) for o in report.outcomes)]
        assert leaked(core, "\n".join(said)) == [], said
