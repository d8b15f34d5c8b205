"""At most once when a machine's wall clock jumps: leases are judged on a clock that does not jump.

Machine A's claims reach this machine (B) as the remote would bring them; B's passes run with the wall
clock they are given (``clock=``), jumped a day forward or back.  A live claim is never taken over because
of a jump; one whose lease truly passed, as B's clock since boot counts, is.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from tests.support.helpers import INBOX, git, make_vault
from tests.support.waiting import wait_for
from vaultops.base import steady
from vaultops.engine.tick import local_now, tick
from vaultops.render import results
from vaultops.scan.note import parse_note
from vaultops.vault import Vault

AT = datetime(2026, 12, 1, 8, 0).astimezone()


def claimed(rid: str, claim: str, lease: float) -> str:
    """A request machine A claimed and runs, as its lines reach B."""
    lines = results.lock_and_start("hermes-a", "machine-a", claim, AT, lease)
    return f"\n## {rid}\n- type: research\n- ready: yes\nSummarise the archive.\n" + "\n".join(lines) + "\n"


def arrive(vault: Path, text: str) -> None:
    """``text`` added to the inbox by machine A's vaultops, as its commit reaches B: a lock line typed by
    anyone else holds nothing."""
    with (vault / INBOX).open("a") as fh:
        fh.write(text)
    git(vault, "add", INBOX)
    git(vault, "commit", "-qm", "vaultops: claimed", "--author", "vaultops (hermes-a) <vaultops@machine-a>")


def states(vault: Path) -> dict[str, str]:
    note = parse_note(INBOX, (vault / INBOX).read_bytes())
    return {r.id: r.state.value for r in note.requests}


def jumped(delta: timedelta):  # type: ignore[no-untyped-def]
    return lambda: local_now() + delta


def test_a_wall_clock_jump_never_takes_over_a_live_claim_and_a_passed_lease_is_taken_over(
    tmp_path: Path, runs: Path
) -> None:
    vault = make_vault(tmp_path / "v", "# Inbox\n")
    arrive(vault, claimed("REQ-long", "aaaaaa", 3600))
    tick(Vault.open(vault), wait_settle=False)  # B first sees the claim
    assert states(vault) == {"REQ-long": "running"}
    tick(Vault.open(vault), clock=jumped(timedelta(days=1)), wait_settle=False)
    assert states(vault) == {"REQ-long": "running"}, "a day's jump of the wall clock took over a live claim"
    # a claim with a one-second lease: once B has truly seen it for longer, it is taken over, even with the
    # wall clock jumped back a day
    arrive(vault, claimed("REQ-short", "bbbbbb", 1))
    tick(Vault.open(vault), wait_settle=False)
    seen = steady.now()
    assert states(vault) == {"REQ-long": "running", "REQ-short": "running"}
    assert wait_for(lambda: steady.now().seconds > seen.seconds + 1.0)  # the lease passes, truly
    tick(Vault.open(vault), clock=jumped(timedelta(days=-1)), wait_settle=False)
    assert states(vault) == {"REQ-long": "running", "REQ-short": "interrupted"}
    assert "taken over: claim bbbbbb" in (vault / INBOX).read_text()
    assert runs.read_text() == "", "the work is not run again by the machine that took the claim over"
