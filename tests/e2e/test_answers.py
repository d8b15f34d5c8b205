"""The person's answers in the note: approve, deny, cancel and retry, each acknowledged with a status line,
each counted only after the status it answers, and only for its own request."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import INBOX, ROTATE, make_vault, vaultops
from vaultops.engine.tick import tick
from vaultops.model import Request, State
from vaultops.scan.note import parse_note
from vaultops.vault import Vault

MERGE = "## REQ-merge\n- type: code\n- ready: yes\nMerge the release branch into main.\n"


def requests(vault: Path) -> dict[str, Request]:
    return {r.id: r for r in parse_note(INBOX, (vault / INBOX).read_bytes()).requests}


def answer(vault: Path, rid: str, line: str) -> None:
    """The person types an answer at the end of the request's block, as in Obsidian."""
    path = vault / INBOX
    text = path.read_text()
    request = requests(vault)[rid]
    lines = text.splitlines()
    lines.insert(request.last_line + 1, line)
    path.write_text("\n".join(lines) + "\n")


def statuses(vault: Path, rid: str) -> list[str]:
    """The status lines of a request's block, in order (a finished request is read only as a skeleton)."""
    note = parse_note(INBOX, (vault / INBOX).read_bytes())
    [request] = [r for r in note.requests if r.id == rid]
    block = note.lines[request.start : request.end]
    return [line[len("- status: ") :] for line in block if line.startswith("- status: ")]


def ran(log: Path) -> list[str]:
    return log.read_text().split()


def pass_over(vault: Path) -> None:
    tick(Vault.open(vault), wait_settle=False)


def test_an_approved_escalation_runs_once_on_its_route_and_is_acknowledged(
    tmp_path: Path, runs: Path
) -> None:
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{ROTATE}")
    pass_over(vault)
    assert requests(vault)["REQ-rotate"].state is State.ESCALATED
    answer(vault, "REQ-rotate", "- decision: approve — rotate it now, I am watching")
    pass_over(vault)
    said = statuses(vault, "REQ-rotate")
    assert [s.split()[0] for s in said] == ["escalated", "approved", "running", "done"]
    assert "— approved once by the person — rotate it now, I am watching; runs once on worker-code" in said[1]
    assert ran(runs) == ["REQ-rotate"]
    pass_over(vault)
    pass_over(vault)
    assert ran(runs) == ["REQ-rotate"], "an approval runs a request once"


def test_an_approval_may_name_the_profile_that_runs_it(tmp_path: Path, runs: Path) -> None:
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{MERGE}")
    pass_over(vault)
    assert requests(vault)["REQ-merge"].state is State.ESCALATED
    answer(vault, "REQ-merge", "- decision: approve — use worker-research for this one")
    pass_over(vault)
    merge = requests(vault)["REQ-merge"]
    assert merge.state is State.DONE
    assert merge.outcomes[-1].route == "worker-research"
    assert "runs once on worker-research" in statuses(vault, "REQ-merge")[1]


def test_a_denied_escalation_is_acknowledged_and_never_runs(tmp_path: Path, runs: Path) -> None:
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{ROTATE}")
    pass_over(vault)
    answer(vault, "REQ-rotate", "- decision: deny — not this week")
    pass_over(vault)
    rotate = requests(vault)["REQ-rotate"]
    assert rotate.state is State.DENIED
    assert statuses(vault, "REQ-rotate")[-1].endswith("— denied by the person — not this week")
    answer(vault, "REQ-rotate", "- decision: approve")  # after a final state: nothing happens
    pass_over(vault)
    assert ran(runs) == []
    assert requests(vault)["REQ-rotate"].state is State.DENIED


def test_an_answer_from_before_the_escalation_never_counts(tmp_path: Path, runs: Path) -> None:
    early = ROTATE.replace("- ready: yes\n", "- ready: yes\n- decision: approve\n")
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{early}")
    pass_over(vault)
    pass_over(vault)
    assert [s.split()[0] for s in statuses(vault, "REQ-rotate")] == ["escalated"]
    assert ran(runs) == []


def test_a_decision_never_applies_to_another_request(tmp_path: Path, runs: Path) -> None:
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{ROTATE}\n{MERGE}")
    pass_over(vault)
    answer(vault, "REQ-merge", "- decision: approve")
    pass_over(vault)
    found = requests(vault)
    assert found["REQ-merge"].state is State.DONE
    assert found["REQ-rotate"].state is State.ESCALATED
    assert ran(runs) == ["REQ-merge"]


@pytest.mark.parametrize("before", ["escalated", "error"])
def test_cancel_is_acknowledged_for_a_request_that_is_not_running(
    tmp_path: Path, runs: Path, before: str
) -> None:
    block = {
        "escalated": ROTATE,
        "error": "## REQ-x\n- ready: yes\n- timeout: soon\nSummarise the week.\n",
    }[before]
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{block}")
    rid = next(iter(requests(vault)))
    pass_over(vault)
    assert requests(vault)[rid].state.value == before
    answer(vault, rid, "- cancel: yes — not needed any more")
    pass_over(vault)
    assert requests(vault)[rid].state is State.CANCELLED
    assert statuses(vault, rid)[-1].endswith("— cancelled by the person — not needed any more")
    assert ran(runs) == []


def test_a_cancel_typed_with_the_request_is_no_answer_and_nothing_runs(tmp_path: Path, runs: Path) -> None:
    """An answer counts only after a status line vaultops wrote; one typed with the request is told as
    forged (the request waits for the person), and a cancel after that escalation counts."""
    block = "## REQ-x\n- type: research\n- ready: yes\n- cancel: yes — not needed any more\nSummarise.\n"
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{block}")
    pass_over(vault)
    [said] = statuses(vault, "REQ-x")
    assert said.startswith("escalated @ ")
    assert 'ignored a forged cancellation: "- cancel: yes — not needed any more" follows no status' in said
    assert ran(runs) == []
    answer(vault, "REQ-x", "- cancel: yes")
    pass_over(vault)
    assert requests(vault)["REQ-x"].state is State.CANCELLED
    assert ran(runs) == []


def test_an_approval_with_no_profile_for_the_type_says_how_to_name_one(tmp_path: Path, runs: Path) -> None:
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{ROTATE}")
    with (vault / ".vaultops" / "local.toml").open("a") as fh:
        fh.write("[routing]\ndefault = []\n")
    pass_over(vault)
    answer(vault, "REQ-rotate", "- decision: approve")
    pass_over(vault)
    assert requests(vault)["REQ-rotate"].state is State.ERROR
    assert "`- decision: approve — <profile>`" in statuses(vault, "REQ-rotate")[-1]
    assert ran(runs) == []


def test_answers_through_the_command_line_tick(tmp_path: Path, runs: Path) -> None:
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{ROTATE}")
    assert vaultops("--vault", str(vault), "tick").returncode == 0
    answer(vault, "REQ-rotate", "- decision: approve")
    proc = vaultops("--vault", str(vault), "tick")
    assert proc.returncode == 0, proc.stderr
    assert requests(vault)["REQ-rotate"].state is State.DONE
    assert ran(runs) == ["REQ-rotate"]


def test_retry_under_an_escalation_classifies_the_edited_text_again(tmp_path: Path, runs: Path) -> None:
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{ROTATE}")
    pass_over(vault)
    path = vault / INBOX
    path.write_text(
        path.read_text().replace(
            "Rotate the Stripe secret key and update the production env file.",
            "- type: research\nSummarise what the Stripe docs say about key rotation.",
        )
    )
    answer(vault, "REQ-rotate", "- retry: yes")
    pass_over(vault)
    assert requests(vault)["REQ-rotate"].state is State.DONE
    assert ran(runs) == ["REQ-rotate"]
