"""``vaultops tick``: one pass (``vaultops.engine.tick``), said as lines."""

from __future__ import annotations

import contextlib
import time

from vaultops.base.errors import VaultopsError
from vaultops.commands.output import Output
from vaultops.engine.publish import RemoteProblem, remote_problem
from vaultops.engine.tick import tick as one_pass
from vaultops.notify.check import unlinked
from vaultops.notify.heartbeat import ping
from vaultops.store.state import StateDB, StateError
from vaultops.vault import Vault

EX_UNAVAILABLE = 69  # the remote could not be reached or refused the push: nothing went through it


def tick(vault: Vault, *, wait_settle: bool = True) -> Output:
    """A line per request acted on, one per request still settling, the commit; warnings apart.  Exits 69
    when the remote could not be reached or refused this pass's push, with the reason as the last line."""
    url = vault.config.daemon.heartbeat_url.get_secret_value()
    started = time.time()
    try:
        report = one_pass(vault, wait_settle=wait_settle)
    except Exception:
        if url:
            ping(url, ok=False)
        raise
    problem = _found_since(vault, started)
    if url and (why := ping(url, ok=problem is None and not _failed(report.warnings))):
        report.warnings.append(why)
    lines = [f"{rid}: {state}" + (f" — {detail}" if detail else "") for rid, state, detail in report.outcomes]
    lines += [f"waiting: {line}" for line in report.settling]
    if report.commit:
        lines.append(f"committed {report.commit[:10]}")
    warnings = list(report.warnings)
    if problem is not None:  # said on stdout, where "nothing to do" would have been: not twice
        lines.append(problem.sentence)
        warnings = [w for w in warnings if w != problem.sentence]
    elif not report.outcomes and not report.settling:
        lines.append("nothing to do")
    if step := unlinked(vault.config.notify.telegram):  # as doctor says it: the one step the bot lacks
        warnings.append(step)
    return Output(lines, warnings=warnings, exit_code=0 if problem is None else EX_UNAVAILABLE)


def _found_since(vault: Vault, started: float) -> RemoteProblem | None:
    """The remote problem this pass found (the publisher keeps it in state.db), if any."""
    with contextlib.suppress(StateError, OSError, VaultopsError):
        state = StateDB(vault.state_dir / "state.db")
        try:
            problem = remote_problem(state)
        finally:
            state.close()
        return problem if problem is not None and problem.seen >= started else None
    return None


def _failed(warnings: list[str]) -> bool:
    """A pass whose work could not reach git: the monitor hears it as a failure."""
    return any(w.startswith(("could not commit", "could not push")) for w in warnings)
