"""``vaultops tick``: one full pass, holding the vault lock."""

from __future__ import annotations

from vaultops.base.confine import confine_state
from vaultops.pipeline.passes import Clock, Pass, PassReport, local_now
from vaultops.store.lock import vault_lock
from vaultops.store.state import StateDB
from vaultops.vault import Vault

__all__ = ["PassReport", "local_now", "tick"]


def tick(vault: Vault, *, clock: Clock = local_now, wait_settle: bool = True) -> PassReport:
    confine_state(vault.root)  # a state folder linked out of the vault: stop before anything is written
    with vault_lock(vault.state_dir, wait=vault.config.limits.lock_wait, command="vaultops tick"):
        state = StateDB(vault.state_dir / "state.db")
        try:
            one = Pass(vault, state, clock)
            one.recover()
            return one.run(wait_settle)
        finally:
            state.close()
