"""``vaultops tick``: one full pass, holding the vault lock."""

from __future__ import annotations

from collections.abc import Callable

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
            return passes(vault, lambda: Pass(vault, state, clock), wait_settle=wait_settle)
        finally:
            state.close()


def passes(vault: Vault, new_pass: Callable[[], Pass], *, wait_settle: bool = True) -> PassReport:
    """What a tick does under the lock: recover, then passes (each made by ``new_pass``) in batches until the
    queue is empty.  The engine's twins (``engine.memory``) run a tick so, with a pass of theirs."""
    one = new_pass()
    one.recover()
    report = one.run(wait_settle, batch(vault))
    seen = {o.request_id for o in report.outcomes}
    while report.more:  # each batch is recorded and committed before the next is claimed
        later = new_pass().run(False, batch(vault))
        report = report.then(later)
        fresh = {o.request_id for o in later.outcomes} - seen
        if not fresh:  # the same work again (a job told to wait, say): the next tick takes it
            break
        seen |= fresh
    return report


def batch(vault: Vault) -> int:
    """Agents' jobs a tick claims at once: a killed tick loses no result of a batch it recorded."""
    return BATCH_PER_SLOT * max(1, vault.config.limits.max_concurrent)
