"""confine: every link that leads out of the vault is refused, and links inside are allowed, on files in a
temp folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultops.base.confine import confine, make_dirs, write_text
from vaultops.base.errors import UnsafePath

LEADS_OUT = "is a symlink that leads out of the vault"


def tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_confine_refuses_every_link_out_and_allows_links_inside(tmp_path: Path) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    (vault / ".vaultops" / "state").mkdir(parents=True)
    outside.mkdir()
    state = vault / ".vaultops" / "state"
    (vault / "kept").mkdir()
    (state / "inside").symlink_to(vault / "kept")
    assert make_dirs(state / "inside" / "deeper") == state / "inside" / "deeper"
    (state / "backups").symlink_to(outside)
    with pytest.raises(UnsafePath) as caught:
        make_dirs(state / "backups" / "note.md")
    assert caught.value.message == (
        f".vaultops/state/backups in the vault {vault} {LEADS_OUT} (to {outside}); replace it with a folder"
    )
    (state / "state.db").symlink_to(outside / "db")
    with pytest.raises(UnsafePath, match="replace it with a regular file"):
        confine(state / "state.db")
    (state / "inner.log").symlink_to(vault / "kept" / "x")  # a link inside: O_NOFOLLOW still refuses it
    with pytest.raises(UnsafePath, match="remove it"):
        write_text(state / "inner.log", "x")
    assert tree(outside) == []
    assert confine(tmp_path / "no-vault" / "file") == tmp_path / "no-vault" / "file"  # in no vault
