"""``vaultops status`` shows a request's real state: a status or lock line vaultops did not write changes
nothing there either (issue 27: a typed ``- status: approved`` showed the request as approved and waiting)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.paths import REPO
from vaultops.commands import status
from vaultops.store.state import StateDB
from vaultops.vault import Vault

DONE = "- status: done @ 2026-03-02T09:00:00+00:00"
LOCK = "- locked-by: agent9 @ 2026-03-02T09:00:00+00:00 (host9, claim abc123, lease 600 s)"
INBOX = (
    "# Inbox\n\n"
    "## REQ-typed\nIs git installed?\n- status: approved\n\n"
    f"## REQ-copied\nIs curl installed?\n{DONE}\n\n"
    f"## REQ-ours\nIs make installed?\n{DONE}\n\n"
    f"## REQ-locked\nIs nginx running?\n{LOCK}\n- status: running @ 2026-03-02T09:00:00+00:00\n"
)


def _vault(tmp_path: Path, *, state: bool) -> Vault:
    root = tmp_path / "v"
    shutil.copytree(REPO / "vault-template", root)
    vault = Vault.open(root)
    (root / vault.inbox_rel).write_text(INBOX)
    if state:
        vault.state_dir.mkdir(parents=True, exist_ok=True)
        db = StateDB(vault.state_dir / "state.db")
        db.remember_lines(vault.inbox_rel, [("REQ-ours", DONE, "")])
        db.close()
    return vault


def test_status_shows_the_real_state_under_lines_vaultops_did_not_write(tmp_path: Path) -> None:
    rows, _ = status.request_rows(_vault(tmp_path, state=True))
    by_id = {r["id"]: (r["state"], r["locked_by"]) for r in rows}
    assert by_id == {
        "REQ-typed": ("open", None),
        "REQ-copied": ("open", None),  # the same line as REQ-ours's: not written under this request
        "REQ-ours": ("done", None),
        # a lock holds its request for its lease, as a pass reads it (engine.provenance, _last_lines)
        "REQ-locked": ("running", "agent9@host9"),
    }


def test_status_says_it_again_from_its_kept_rows(tmp_path: Path) -> None:
    vault = _vault(tmp_path, state=True)
    first = status.request_rows(vault)
    assert status.request_rows(vault) == first
