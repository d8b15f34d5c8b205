"""vaultops with the real Claude Code CLI, against a scripted fake of the Messages API on 127.0.0.1."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tests.support.claude_cli import profile, requires_claude
from tests.support.fake_anthropic import Error, FakeAnthropic, Hang, Text, ToolUse
from tests.support.helpers import inbox_text, routed, vault_with, vaultops
from vaultops.scan.note import parse_note

pytestmark = requires_claude

INBOX = "# Inbox\n\n## REQ-job Look into it\n- type: code\n- ready: yes\nCreate the marker file and report.\n"
MARKER = "vaultops-orphan-probe"


def claude_vault(tmp: Path, profiles: str, routing: str) -> Path:
    return vault_with(tmp / "v", INBOX, routed(profiles, routing, "[0.1, 0.2, 0.4]"))


def job(vault: Path):  # type: ignore[no-untyped-def]
    note = parse_note("i", (vault / "_System" / "COO-Inbox.md").read_bytes())
    return note.requests[0]


def test_a_tool_call_then_text_is_done_with_the_text(tmp_path: Path, api: FakeAnthropic) -> None:
    work = tmp_path / "v" / "work"
    api.script(
        ToolUse("Bash", {"command": "echo made > marker.txt"}), Text("DONE: the marker file is there.")
    )
    vault = claude_vault(
        tmp_path,
        profile("worker-code", api.start(), tmp_path / "cc", workdir="work"),
        'code = ["worker-code"]',
    )
    work.mkdir()
    proc = vaultops("--vault", str(vault), "tick", timeout=120)
    assert "REQ-job: done" in proc.stdout, proc.stdout + proc.stderr
    assert (work / "marker.txt").read_text().strip() == "made"
    text = inbox_text(vault)
    assert "DONE: the marker file is there." in text
    assert "- cost: $" in text and "2 turns" in text
    assert "Create the marker file and report." in json.dumps(api.requests[0])  # the prompt reached the API


def test_rate_limited_every_time_retries_by_the_table_then_names_the_status(
    tmp_path: Path, api: FakeAnthropic
) -> None:
    api.script(*[Error(429, "slow down")] * 6)
    vault = claude_vault(
        tmp_path, profile("worker-code", api.start(), tmp_path / "cc"), 'code = ["worker-code"]'
    )
    proc = vaultops("--vault", str(vault), "tick", timeout=120)
    r = job(vault)
    assert r.state.value == "error", proc.stdout + proc.stderr
    assert "429" in r.statuses[-1].reason and "after 4 attempts" in r.statuses[-1].reason
    assert "- attempts: worker-code rate-limit ×4" in inbox_text(vault)
    assert len(api.requests) == 4


def test_a_tool_call_denied_by_the_gate_is_listed(tmp_path: Path, api: FakeAnthropic) -> None:
    work = tmp_path / "v" / "work"
    api.script(ToolUse("Bash", {"command": "echo nope > ../denied.txt"}), Text("DONE: could not write it."))
    vault = claude_vault(
        tmp_path,
        profile("worker-code", api.start(), tmp_path / "cc", workdir="work"),
        'code = ["worker-code"]',
    )
    work.mkdir(parents=True)
    proc = vaultops("--vault", str(vault), "tick", timeout=120)
    assert "REQ-job: done" in proc.stdout, proc.stdout + proc.stderr
    assert "- denied: Bash: echo nope > ../denied.txt" in inbox_text(vault)
    assert not (work.parent / "denied.txt").exists()


def _probes() -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if MARKER.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                    found.append(int(name))
            except OSError:
                continue
    return found


def test_a_run_past_its_timeout_is_killed_with_everything_it_started(
    tmp_path: Path, api: FakeAnthropic
) -> None:
    """The Bash tool runs its command in a session of its own; that process must not survive either."""
    command = f"python3 -c 'import time; time.sleep(90)' {MARKER}"
    api.script(ToolUse("Bash", {"command": command}), Hang(120))
    vault = claude_vault(
        tmp_path, profile("worker-code", api.start(), tmp_path / "cc", timeout=6), 'code = ["worker-code"]'
    )
    start = time.monotonic()
    proc = vaultops("--vault", str(vault), "tick", timeout=120)
    assert time.monotonic() - start < 40
    r = job(vault)
    assert r.state.value == "error", proc.stdout + proc.stderr
    assert r.statuses[-1].reason.startswith("timed out after 6 s")
    deadline = time.monotonic() + 5
    while _probes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _probes() == [], "the tool's process outlived the run"


def test_a_fallback_profile_takes_over(tmp_path: Path, api: FakeAnthropic) -> None:
    api.script(*[Error(529, "overloaded")] * 3)
    with FakeAnthropic() as second:
        second.script(Text("DONE: the fallback answered."))
        profiles = profile("worker-code", api.start(), tmp_path / "c1") + profile(
            "worker-fast", second.start(), tmp_path / "c2"
        )
        vault = claude_vault(tmp_path, profiles, 'code = ["worker-code", "worker-fast"]')
        proc = vaultops("--vault", str(vault), "tick", timeout=120)
    assert "REQ-job: done" in proc.stdout, proc.stdout + proc.stderr
    text = inbox_text(vault)
    assert "- attempts: worker-code unavailable → worker-fast done" in text
    assert "DONE: the fallback answered." in text
    assert "worker-code: API error 529" in json.dumps(second.requests[0]), "the fallback was told what failed"


def test_a_request_that_begins_with_a_checklist_reaches_the_model(tmp_path: Path, api: FakeAnthropic) -> None:
    # Claude Code once read a prompt beginning `- [ ]` as an unknown option, and every such run failed.
    api.script(Text("DONE: checked."))
    inbox = "# Inbox\n\n## REQ-list Tick these\n- type: code\n- ready: yes\n- [ ] check the marker\n"
    profiles = profile("worker-code", api.start(), tmp_path / "cc", workdir="work")
    vault = vault_with(tmp_path / "v", inbox, routed(profiles, 'code = ["worker-code"]', "[0.1, 0.2, 0.4]"))
    (tmp_path / "v" / "work").mkdir()
    proc = vaultops("--vault", str(vault), "tick", timeout=120)
    assert "REQ-list: done" in proc.stdout, proc.stdout + proc.stderr
    assert "- [ ] check the marker" in json.dumps(api.requests[0])
