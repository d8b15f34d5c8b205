"""How long a claimed job may take, and so how long its claim holds other machines off.  Pure.

A claim's lease is the job's budget plus ``[git] lease_margin``: the dispatcher stops a job when its budget
runs out, so a lease never expires while its job still runs, and another machine may take a claim over
only once its lease has passed as that machine measures it: from when it first saw the claim, on a clock
that does not jump (``base.steady``, read in ``engine.decide``), so setting a machine's wall clock
forward never ends a lease early.
"""

from __future__ import annotations

from vaultops.config import Config
from vaultops.model import Lock

LIGHT_BUDGET = 60.0  # seconds: built-in checks answer in well under this


def job_budget(config: Config, route: tuple[str, ...], timeout: float | None) -> float:
    """The longest a job may take, all attempts together: the retry table allows a timeout and one
    fallback after it, plus the rate-limit waits.  The dispatcher stops the job when this runs out, so
    that a claim's lease (this plus a margin) never expires while its job is still running."""
    limits = [config.profiles[name].timeout for name in route if name in config.profiles]
    if not limits:
        return LIGHT_BUDGET
    longest = max(min(timeout, t) if timeout else t for t in limits)
    return 2 * longest + sum(config.retry.rate_limit_delays)


def worker_budget(config: Config, timeout: float | None) -> float:
    """The longest a worker running a plan note may take: the note's ``timeout:``, else [workers] timeout.
    Past it the worker is stopped and the note says so (vaultops.engine.follow)."""
    return timeout or config.workers.timeout


def light_lease(config: Config) -> float:
    """The lease of a claim on a built-in check."""
    return LIGHT_BUDGET + config.git.lease_margin


def lease_of(lock: Lock, config: Config) -> float:
    """Seconds another machine's claim holds; locks from before leases get the longest any job here
    could take."""
    if lock.lease is not None:
        return lock.lease
    return job_budget(config, tuple(config.profiles), None) + config.git.lease_margin
