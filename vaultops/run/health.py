"""Is a profile there?  Its ``health`` command, run at most every ``[health] ttl`` seconds.

ONLINE: it answered within ``slow`` (5 s).  DEGRADED: it answered slower, or only on the second try.
OFFLINE: it failed twice, or did not answer within ``timeout`` (30 s).  A profile without a health command
is taken as ONLINE until a run says otherwise.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from vaultops.base.redact import redact
from vaultops.config import HealthConfig, ProfileConfig
from vaultops.run.process import run_process
from vaultops.store.state import StateDB


class Health(StrEnum):
    ONLINE = "online"
    DEGRADED = "degraded"
    OFFLINE = "offline"
    UNCHECKED = "unchecked"


@dataclass(frozen=True, slots=True)
class HealthReport:
    profile: str
    state: Health
    checked: float
    duration: float
    detail: str

    @property
    def usable(self) -> bool:
        return self.state is not Health.OFFLINE


def _probe(argv: tuple[str, ...], cwd: Path, timeout: float) -> tuple[bool, float, str]:
    ok, duration, detail = _judge(argv, cwd, timeout)
    return ok, duration, redact(detail)  # the output is raw; the detail is kept in state.db and shown


def _judge(argv: tuple[str, ...], cwd: Path, timeout: float) -> tuple[bool, float, str]:
    proc = run_process(argv, cwd=cwd, timeout=timeout)
    if proc.start_error:
        return False, proc.duration, proc.start_error
    if proc.timed_out:
        return False, proc.duration, f"no answer within {timeout:g} s"
    if proc.exit_code != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()
        return False, proc.duration, f"exit {proc.exit_code}" + (f": {tail[-1][:120]}" if tail else "")
    first = proc.stdout.strip().splitlines()
    return True, proc.duration, first[0][:120] if first else "ok"


def check(
    name: str, profile: ProfileConfig, settings: HealthConfig, state: StateDB, cwd: Path
) -> HealthReport:
    """The profile's health, from the cache when it is fresh enough."""
    if not profile.health:
        return HealthReport(name, Health.UNCHECKED, 0.0, 0.0, "no health command")
    now = time.time()
    cached = state.health(name)
    if cached is not None and now - cached[1] < settings.ttl:
        return HealthReport(name, Health(cached[0]), cached[1], cached[2], cached[3])
    ok, duration, detail = _probe(profile.health, cwd, settings.timeout)
    if ok:
        verdict = Health.ONLINE if duration <= settings.slow else Health.DEGRADED
    elif duration >= settings.timeout:
        verdict = Health.OFFLINE  # it hung: one wait of `timeout` is the bound, not two
    else:
        ok, second, detail_again = _probe(profile.health, cwd, settings.timeout)
        duration += second
        verdict = Health.DEGRADED if ok else Health.OFFLINE
        detail = f"answered only on the second try ({detail_again})" if ok else detail
    state.set_health(name, verdict.value, now, duration, detail)
    return HealthReport(name, verdict, now, duration, detail)


def cached(name: str, profile: ProfileConfig, state: StateDB) -> HealthReport:
    """The last known health, without running anything (for ``status``)."""
    if not profile.health:
        return HealthReport(name, Health.UNCHECKED, 0.0, 0.0, "no health command")
    found = state.health(name)
    if found is None:
        return HealthReport(name, Health.UNCHECKED, 0.0, 0.0, "not checked yet")
    return HealthReport(name, Health(found[0]), found[1], found[2], found[3])
