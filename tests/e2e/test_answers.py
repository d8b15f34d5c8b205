"""The person's answer in the note through ``vaultops tick`` as a process: the approval is acknowledged and
runs the request once.  Approve, deny, cancel and retry, each counted only after the status it answers
and only for its own request, run whole passes on the engine's twin: tests/unit/test_twin_answers.py."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import INBOX, ROTATE, make_vault, vaultops
from vaultops.model import Request, State
from vaultops.scan.note import parse_note


def requests(vault: Path) -> dict[str, Request]:
    return {r.id: r for r in parse_note(INBOX, (vault / INBOX).read_bytes()).requests}


def answer(vault: Path, rid: str, line: str) -> None:
    """The person types an answer at the end of the request's block, as in Obsidian."""
    path = vault / INBOX
    lines = path.read_text().splitlines()
    lines.insert(requests(vault)[rid].last_line + 1, line)
    path.write_text("\n".join(lines) + "\n")


def test_answers_through_the_command_line_tick(tmp_path: Path, runs: Path) -> None:
    vault = make_vault(tmp_path / "v", f"# Inbox\n\n{ROTATE}")
    assert vaultops("--vault", str(vault), "tick").returncode == 0
    answer(vault, "REQ-rotate", "- decision: approve")
    proc = vaultops("--vault", str(vault), "tick")
    assert proc.returncode == 0, proc.stderr
    assert requests(vault)["REQ-rotate"].state is State.DONE
    assert runs.read_text().split() == ["REQ-rotate"]
