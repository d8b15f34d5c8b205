"""Git's bounds against the service unit's: a call to the remote ends within WatchdogSec, and a stop ends
local git within the smallest stop timeout."""

from __future__ import annotations

import re
from pathlib import Path

from vaultops.service.units import systemd_unit
from vaultops.sync import git as git_module


def test_the_bounds_fit_the_service_unit() -> None:
    """A call to the remote ends within WatchdogSec even without pings, and a stop ends local plumbing
    (STOP_WAIT, then SIGTERM and SIGKILL) within the smallest stop timeout the unit gives (grace 0)."""
    unit = systemd_unit("vaultops", Path("/vault"), grace=0)
    watchdog = float(re.findall(r"^WatchdogSec=(\S+)$", unit, re.MULTILINE)[0])
    stop = float(re.findall(r"^TimeoutStopSec=(\S+)$", unit, re.MULTILINE)[0])
    assert watchdog >= git_module.NETWORK_TIMEOUT
    assert stop > git_module.STOP_WAIT + 2 * git_module.KILL_WAIT
