"""The vault lock (vaultops.store.lock) is held on the vault folder: no file under it can let a second
pass in, and the refusal names the holder."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from vaultops.base.errors import LockBusy
from vaultops.store.lock import flock_holder, vault_lock


def state_of(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / ".vaultops").mkdir(parents=True)
    return vault / ".vaultops" / "state"


@pytest.mark.parametrize("damage", ["nothing", "lock", "json", "folder"])
def test_a_second_holder_is_refused_and_told_who_holds_it(tmp_path: Path, damage: str) -> None:
    state = state_of(tmp_path)
    with vault_lock(state, wait=0, command="vaultops run"):
        if damage == "lock":
            (state / "vault.lock").unlink()
        elif damage == "json":
            (state / "vault.lock.json").unlink()
        elif damage == "folder":  # the whole state folder, files and all
            shutil.rmtree(state)
        with pytest.raises(LockBusy) as busy, vault_lock(state, wait=0.1, command="vaultops tick"):
            pass
        assert f"pid {os.getpid()}" in busy.value.message
        if damage in ("nothing", "lock"):  # else from the kernel, and this process's command line
            assert "the vaultops daemon holds this vault" in busy.value.message
    with vault_lock(state, wait=0, command="vaultops tick"):  # let go: the next pass takes it
        pass


def test_the_holder_is_read_from_the_kernels_list_of_locks(tmp_path: Path) -> None:
    folder = tmp_path / "vault"
    folder.mkdir()
    st = os.stat(folder)
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    locks = tmp_path / "locks"
    locks.write_text(
        f"1: POSIX  ADVISORY  WRITE 11 {where} 0 EOF\n"
        f"2: FLOCK  ADVISORY  WRITE 4242 {where} 0 EOF\n"
        f"2: -> FLOCK  ADVISORY  WRITE 4343 {where} 0 EOF\n"
    )
    assert flock_holder(folder, locks) == 4242
    locks.write_text("1: FLOCK  ADVISORY  WRITE 4242 00:00:1 0 EOF\n")
    assert flock_holder(folder, locks) is None
    assert flock_holder(folder, tmp_path / "none") is None
