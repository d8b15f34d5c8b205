"""At most once with sync tools: their conflict copies of a plan note (or of the inbox) never run, and the
person is told once per copy that they are there and what to do."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import make_vault, with_plans
from vaultops.engine.copies import SAID, tell_copies
from vaultops.engine.driver import Pass
from vaultops.engine.tick import tick
from vaultops.store.state import StateDB
from vaultops.vault import Vault

QUEUE = "executor-queue"
NOTE = "---\ntype: research\n---\nSummarise the open threads in this vault.\n"
COPIES = [
    "research 2.md",  # iCloud
    "research (conflicted copy 2026-01-02).md",  # Dropbox
    "research (Ann's conflicted copy 2026-01-02).md",  # Dropbox, with the person's name
    "research (conflict 2026-01-02).md",  # Dropbox
    "research.sync-conflict-20260102-101010-ABCDEFG.md",  # Syncthing
    "research (Conflicted copy Pixel 7 202601021010).md",  # Obsidian Sync
    "research (conflicted copy 2026-01-02 101010).md",  # Nextcloud
    "research-DESKTOP-AB12CD.md",  # OneDrive
    "research (1).md",  # Google Drive
    "research (conflicted copy 2026-01-02) (1).md",  # a copy of a copy
    "orphan (conflict 2026-01-02).md",  # a tool's own marker: a copy though its original is gone
]
OWN = ["plan 2.md", "deploy-EU.md", "notes (draft).md"]  # numbered or suffixed, but no original beside them
INBOX_COPY = "_System/COO-Inbox (conflicted copy 2026-01-02).md"


def vault_with_copies(tmp_path: Path) -> Path:
    vault = make_vault(tmp_path / "v", "# Inbox\n")
    (vault / INBOX_COPY).write_text("# Inbox\n\n## REQ-copied\n- type: research\n- ready: yes\nSummarise.\n")
    return with_plans(vault, {name: NOTE for name in ["research.md", *COPIES, *OWN]})


def told(vault: Path) -> list[str]:
    """The warnings of one pass's telling (as the pass makes them, with a state.db of its own)."""
    state = StateDB(vault / ".vaultops" / "state" / "state.db")
    try:
        one = Pass(Vault.open(vault), state)
        tell_copies(one.ctx)
        return [w for w in one.report.warnings if "conflict copy" in w]
    finally:
        state.close()


def test_conflict_copies_never_run_and_notes_of_their_own_do(tmp_path: Path, runs: Path) -> None:
    vault = vault_with_copies(tmp_path)
    tick(Vault.open(vault), wait_settle=False)
    ran = sorted(runs.read_text().split("\n")[:-1])
    assert ran == ["PLAN-deploy-EU", "PLAN-notes-draft", "PLAN-plan-2", "PLAN-research"]
    for name in COPIES:  # not one line written into a copy
        assert (vault / QUEUE / name).read_text() == NOTE
    assert "locked-by" not in (vault / INBOX_COPY).read_text()


def test_each_copy_is_told_once_with_its_original_and_what_to_do(tmp_path: Path) -> None:
    vault = vault_with_copies(tmp_path)
    first = told(vault)
    assert len(first) == len(COPIES) + 1  # and the inbox's copy
    for name in COPIES[:-1]:
        [line] = [w for w in first if w.startswith(f"{QUEUE}/{name} ")]
        assert f"copy of {QUEUE}/research.md;" in line
        assert "compare the two, merge what differs into research.md by hand, then delete the copy" in line
    [orphan] = [w for w in first if w.startswith(f"{QUEUE}/orphan ")]
    assert "orphan.md, which is not there" in orphan and "rename it to orphan.md" in orphan
    [inbox] = [w for w in first if w.startswith(INBOX_COPY)]
    assert "copy of _System/COO-Inbox.md; vaultops reads only the inbox" in inbox
    assert told(vault) == [], "said once, not on every pass"
    # a copy that goes away is forgotten: made again later, it is told of again
    (vault / QUEUE / "research 2.md").unlink()
    assert told(vault) == []
    (vault / QUEUE / "research 2.md").write_text(NOTE)
    [again] = told(vault)
    assert again.startswith(f"{QUEUE}/research 2.md ")


def test_a_damaged_record_of_what_was_told_tells_again(tmp_path: Path) -> None:
    vault = vault_with_copies(tmp_path)
    state = StateDB(vault / ".vaultops" / "state" / "state.db")
    state.set(SAID, "{not json")
    state.close()
    assert len(told(vault)) == len(COPIES) + 1
