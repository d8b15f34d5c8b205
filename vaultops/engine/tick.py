"""``vaultops tick``: one full pass, holding the vault lock."""

from __future__ import annotations

from vaultops.base.confine import confine_state
from vaultops.engine.driver import Clock, Pass, PassReport, local_now
from vaultops.store.lock import vault_lock
from vaultops.store.state import StateDB
from vaultops.vault import Vault

__all__ = ["PassReport", "local_now", "tick"]

BATCH_PER_SLOT = 2  # a batch keeps every slot busy and records soon after


def tick(vault: Vault, *, clock: Clock = local_now, wait_settle: bool = True) -> PassReport:
    confine_state(vault.root)  # a state folder linked out of the vault: stop before anything is written
    with vault_lock(vault.state_dir, wait=vault.config.limits.lock_wait, command="vaultops tick"):
        state = StateDB(vault.state_dir / "state.db")
        try:
            one = Pass(vault, state, clock)
            one.recover()
            report = one.run(wait_settle, batch(vault))
            seen = {o.request_id for o in report.outcomes}
            while report.more:  # each batch is recorded and committed before the next is claimed
                later = Pass(vault, state, clock).run(False, batch(vault))
                report = report.then(later)
                fresh = {o.request_id for o in later.outcomes} - seen
                if not fresh:  # the same work again (a job told to wait, say): the next tick takes it
                    break
                seen |= fresh
            return report
        finally:
            state.close()


def batch(vault: Vault) -> int:
    """Agents' jobs a tick claims at once: a killed tick loses no result of a batch it recorded."""
    return BATCH_PER_SLOT * max(1, vault.config.limits.max_concurrent)
