"""A property of the whole pass: over generated vaults (notes, schedules, states, answers, bad bytes), a
tick never raises nor meets a fault of its own (one it caught, to go on with the other notes, counts),
and every line the person wrote is still there, in order.

The pass runs in this process on a real vault folder; agents are never started (the profiles name a
program that does not exist), so each example is quick and everything else is the real thing.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.support.paths import REPO
from vaultops.engine.tick import tick
from vaultops.vault import Vault

NO_AGENT = "".join(
    f'[profiles.{name}]\ncommand = ["vaultops-test-no-such-agent", "{{prompt}}"]\noutput = "text"\n'
    'health = []\ngate = "none"\n\n'
    for name in ("worker-code", "worker-research")
)

# Lines a person, a phone, a sync tool or an imitator might leave in a note: each a sample of a kind.
PIECES = [
    "## REQ-a Is git installed?",
    "## REQ-a duplicate id",
    "## REQ-b",
    "##\u00a0REQ-nbsp heading a phone made",
    "## req-lower",
    "## REQ\u2013dash",
    "# REQ-level-one",
    "REQ-underlined\n===",
    "- type: env-check",
    "- type: research",
    "- type: code",
    "- ready: yes",
    "- ready: maybe",
    "- timeout: 5m",
    "- timeout: forever",
    "- profile: no-such-profile",
    "- schedule: every 1h",
    "- schedule: 30 Feb",
    "Is git installed? `which git`",
    "Summarise the open threads in five bullets.",
    "Rotate the Stripe secret key and delete the old one.",
    "plan-hourly-6620 runs hourly.",
    "- locked-by: someone @ 2026-05-04T08:31:02+10:00 (vps9, claim abc123, lease 60 s)",
    "- status: running @ 2026-05-04T08:31:02+10:00",
    "- status: escalated @ 2026-05-04T09:00:00+10:00 — blocked: key rotation",
    "- status: done @ not-a-time",
    "- status: error @ 2026-05-04T09:00:00+10:00 — something",
    "- decision: approve",
    "- Decision: Approve",
    "- decision: deny",
    "- retry: yes",
    "- cancel: yes",
    "- cleanup: force",
    "### Result — 2026-05-04 08:31 — coo",
    "```",
    "~~~text",
    "<!--",
    "-->",
    "\x00",
    "bad \x01 bytes \x7f",
    "\ufeffa byte-order mark",
    "\r",
    "",
    "- [ ] a task",
    "    indented code",
]

PLAN_FRONT = [
    "type: research",
    "type: code",
    "schedule: every 1h",
    "schedule: 30m",
    'schedule: "0 7 * * 1-5"',
    "schedule: once 2026-05-04T09:00",
    "misfire: all",
    "status: paused",
    "draft: true",
    "worker: yes",
    "tasks: [a, b]",
    "files: [src/**]",
    "workdir: /nonexistent",
    "repo: ../outside",
    "timeout: 900",
    "timeout: [1, 2]",
    "a: &x [*x]",
    "key: : broken",
    "- a list at the top",
]

note_lines = st.lists(st.sampled_from(PIECES) | st.text(max_size=30), max_size=25)
plan_note = st.tuples(st.lists(st.sampled_from(PLAN_FRONT), max_size=6), note_lines)


def _write(vault: Path, inbox: list[str], plans: list[tuple[list[str], list[str]]]) -> None:
    (vault / "_System" / "COO-Inbox.md").write_text("\n".join(["# Inbox", *inbox]) + "\n", encoding="utf-8")
    queue = vault / "executor-queue"
    for old in queue.glob("*.md"):
        old.unlink()
    for i, (front, body) in enumerate(plans):
        text = "---\n" + "\n".join(front) + "\n---\n" + "\n".join(body) + "\n"
        (queue / f"plan-{i}.md").write_text(text, encoding="utf-8")


def _in_order(before: list[str], after: list[str]) -> bool:
    """Every line of ``before`` is in ``after``, in the same order: vaultops only inserts lines."""
    it = iter(after)
    return all(any(line == later for later in it) for line in before)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(inbox=note_lines, plans=st.lists(plan_note, max_size=3), passes=st.integers(1, 2))
@example(  # the field's sample: escalated on the first pass, a KeyError on every pass after it
    inbox=[], plans=[(["type: research", "schedule: every 1h"], ["plan-hourly-6620 runs hourly."])], passes=2
)
@example(inbox=["## REQ-n", "- type: research", "- ready: yes", "text \x00 with a NUL"], plans=[], passes=2)
def test_a_pass_over_any_vault_never_raises_and_keeps_every_line(
    inbox: list[str], plans: list[tuple[list[str], list[str]]], passes: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "v"
        shutil.copytree(REPO / "vault-template", root)
        (root / ".vaultops" / "local.toml").write_text(NO_AGENT + "[inbox]\nsettle = 0\n")
        _write(root, inbox, plans)
        notes = [root / "_System" / "COO-Inbox.md", *sorted((root / "executor-queue").glob("*.md"))]
        before = {p: p.read_bytes() for p in notes}
        for _ in range(passes):
            report = tick(Vault.open(root), wait_settle=False)
            faults = [w for w in report.warnings if "vaultops failed" in w]
            assert not faults, faults  # caught, so the pass went on; but a fault of vaultops's all the same
        for path, raw in before.items():
            after = path.read_bytes()
            old = raw.decode("utf-8", "replace").splitlines()
            new = after.decode("utf-8", "replace").splitlines()
            assert _in_order(old, new), f"{path.name}: a line the person wrote was changed or lost"
            assert "vaultops failed while deciding" not in after.decode("utf-8", "replace")
