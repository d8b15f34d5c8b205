"""A clock that does not jump, for leases: seconds since boot, and which boot.

Another machine's claim may be taken over once this machine has seen it for longer than its lease.  Judged
on the wall clock, a jump forward (a person setting the time, NTP after a suspend, a restored VM) takes
over a live claim within seconds, and the job runs twice.  Linux's ``CLOCK_BOOTTIME`` counts seconds
since boot, suspend included (the other machine's job went on meanwhile), and is never set; it starts
again at a reboot, so each reading says which boot it is of (``/proc/sys/kernel/random/boot_id``) and a
time stamped in another boot is not compared with it: the count starts again, so a lease only ever lasts
longer, never ends early.  Elsewhere ``time.monotonic`` (on macOS it stops while the machine sleeps: a
lease lasts longer), with the boot told by when it began as the wall clock puts it, to the hour: a jump of
the wall clock then changes the boot, which again only makes the count start again.

Standard library only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


@dataclass(frozen=True, slots=True)
class Reading:
    boot: str  # which boot the seconds count from
    seconds: float


@cache
def _boot_id() -> str | None:
    """This boot's id (Linux), read once: a process lives within one boot."""
    try:
        return BOOT_ID.read_text().strip() or None
    except OSError:
        return None


def now() -> Reading:
    boot = _boot_id()
    boottime = getattr(time, "CLOCK_BOOTTIME", None)
    if boot is not None and boottime is not None:
        return Reading(boot, time.clock_gettime(boottime))
    seconds = time.monotonic()
    return Reading(f"~{round((time.time() - seconds) / 3600)}", seconds)


def since_boot() -> float | None:
    """Seconds since this boot on the clock the kernel's process start times count on (Linux's
    ``CLOCK_BOOTTIME``), or None where there is none."""
    boottime = getattr(time, "CLOCK_BOOTTIME", None)
    return None if boottime is None or _boot_id() is None else time.clock_gettime(boottime)
