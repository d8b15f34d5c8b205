"""A renamed inbox with real git (issue 29): the pass names the setting; once it is set, an escalation
vaultops wrote in the note before the move is still vaultops's, and the person's approval under it runs it
once.  The pass logic is tests/unit/test_twin_inbox_moved.py's."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import INBOX, ROTATE, git, make_vault
from vaultops.engine.tick import tick
from vaultops.model import State
from vaultops.scan.note import parse_note
from vaultops.vault import Vault

NEW = "Inbox/Requests.md"


def state_of(vault: Path, rel: str) -> State:
    [request] = parse_note(rel, (vault / rel).read_bytes()).requests
    return request.state


def test_an_escalation_in_a_moved_inbox_is_answered_once_the_setting_follows_it(
    tmp_path: Path, runs: Path
) -> None:
    vault = make_vault(tmp_path / "vault", f"# Inbox\n\n{ROTATE}")
    tick(Vault.open(vault), wait_settle=False)
    assert state_of(vault, INBOX) is State.ESCALATED
    (vault / "Inbox").mkdir()
    git(vault, "mv", INBOX, NEW)
    git(vault, "commit", "-qam", "vault backup")  # as obsidian-git commits a rename

    report = tick(Vault.open(vault), wait_settle=False)
    assert any(f'`[inbox] path = "{NEW}"` in .vaultops/config.toml' in w for w in report.warnings)
    assert not (vault / INBOX).exists(), "no second inbox"

    config = vault / ".vaultops" / "config.toml"
    config.write_text(config.read_text().replace(f'path = "{INBOX}"', f'path = "{NEW}"'))
    with (vault / NEW).open("a") as note:
        note.write("- decision: approve\n")
    git(vault, "commit", "-qam", "vault backup")
    report = tick(Vault.open(vault), wait_settle=False)
    assert state_of(vault, NEW) is State.DONE, report.warnings
    assert runs.read_text().split() == ["REQ-rotate"]
