"""The proof that the gate saw every call (issue 28, ``vaultops.run.proof``), end to end in one pass.

A stand-in ``claude`` that ignores the hooks it is given (``tests/support/claude_standin.py``) runs tools
without asking the gate: the job is stopped, fails closed (no retry, no fallback), its status line says
the gate did not see the call, the person is told on the channel, and nothing it asked for ran past its
first call.  The real CLI (offline, against ``tests/support/fake_anthropic.py``), whose hooks are live,
makes several tool calls and is not stopped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.claude_cli import profile, requires_claude
from tests.support.claude_standin import standin
from tests.support.fake_anthropic import FakeAnthropic, Text, ToolUse
from tests.support.fake_servers import JsonSink
from tests.support.helpers import INBOX, routed, vault_with, with_plans
from tests.support.waiting import wait_for
from vaultops.engine.tick import tick
from vaultops.model import State
from vaultops.run.proof import GATE_INCIDENT
from vaultops.scan.note import parse_note
from vaultops.store.state import StateDB
from vaultops.vault import Vault

pytestmark = pytest.mark.real_disk  # a job's sandbox cannot hold a folder under /dev/shm

REQUEST = (
    "# Inbox\n\n## REQ-steps Take steps\n- type: code\n- ready: yes\n"
    "Fix the failing build step by step, and log each step in the steps file.\n"
)
# the route's next profile: it would leave a file behind if the failed job were given to it
AFTER = (
    '[profiles.after]\ncommand = ["sh", "-c", "touch fallback-ran", "{prompt}"]\noutput = "text"\n'
    'timeout = 30\nhealth = []\nworkdir = "work"\n\n'
)


def standin_profile(claude: Path, hooks: str, first: float = 3.0) -> str:
    """The stand-in as a Claude Code profile, a one-shot and a worker session both, as the template has it."""
    return (
        f'[profiles.standin]\ncommand = [{json.dumps(str(claude))}, "-p", "{{prompt}}", "--output-format", '
        '"json", "--allowedTools", "{tools}"]\n'
        f'worker_command = [{json.dumps(str(claude))}, "-p", "--input-format", "stream-json", '
        '"--output-format", "stream-json", "--verbose", "--allowedTools", "{tools}"]\n'
        'output = "claude-json"\ntools = ["Bash"]\ntimeout = 60\nhealth = []\nworkdir = "work"\n'
        f'env = {{ STANDIN_HOOKS = "{hooks}", STANDIN_THINK = "3.0", STANDIN_FIRST = "{first}" }}\n\n'
    )


def run_pass(tmp: Path, profiles: str, route: str, sink: JsonSink | None = None) -> tuple[Path, Path]:
    local = routed(profiles, f"code = {route}", "[0.1]")
    if sink is not None:
        local += f'\n[notify]\nurls = ["{sink.url()}"]\n'
    vault = vault_with(tmp / "v", REQUEST, local)
    work = vault / "work"
    work.mkdir()
    tick(Vault.open(vault), wait_settle=False)
    return vault, work


def status(vault: Path) -> tuple[State, str]:
    [request] = parse_note(INBOX, (vault / INBOX).read_bytes()).requests
    return request.state, request.statuses[-1].reason


def incidents(vault: Path) -> list[dict[str, object]]:
    state = StateDB(vault / ".vaultops" / "state" / "state.db")
    try:
        return state.events(GATE_INCIDENT)
    finally:
        state.close()


def test_a_cli_that_never_reaches_the_gate_is_stopped_before_any_tool_and_told(tmp_path: Path) -> None:
    claude = standin(tmp_path / "bin")
    with JsonSink() as sink:
        profiles = standin_profile(claude, "none") + AFTER
        vault, work = run_pass(tmp_path, profiles, '["standin", "after"]', sink)
        state, reason = status(vault)
        assert state is State.ERROR, reason
        assert reason.startswith("the gate did not see the session start"), reason
        assert "not retried" in reason
        assert not list(work.glob("marker-*")), "no tool ran: the job was stopped at its init line"
        assert not (work / "fallback-ran").exists(), "failed closed: no fallback"
        titles = [body.get("title", "") for _, body in sink.received]
        assert titles.count("v: REQ-steps stopped, the gate did not see a call") == 1, titles
        [told] = [m for m in sink.messages() if m.startswith("REQ-steps was stopped: the gate did not see")]
        assert "REQ-steps" in told and "will not retry" in told
    [incident] = incidents(vault)
    assert incident["request_id"] == "REQ-steps"


def test_a_cli_that_skips_the_tool_hooks_runs_no_tool_past_its_first(tmp_path: Path) -> None:
    """Its session start reaches the gate, so it gets as far as its first tool; that tool's result, for a
    call the gate never judged, stops it before its next turn."""
    claude = standin(tmp_path / "bin")
    vault, work = run_pass(tmp_path, standin_profile(claude, "session", 0) + AFTER, '["standin", "after"]')
    state, reason = status(vault)
    assert state is State.ERROR, reason
    said = "the gate did not see a call: Bash (touch marker-1) ran without the gate judging it"
    assert reason.startswith(said), reason
    assert (work / "marker-1").exists(), "the first call ran before its result said so"
    assert not (work / "marker-2").exists() and not (work / "marker-3").exists()
    assert not (work / "fallback-ran").exists()
    assert len(incidents(vault)) == 1


def test_a_worker_session_that_skips_the_tool_hooks_is_stopped_and_its_plan_note_says_why(
    tmp_path: Path,
) -> None:
    claude = standin(tmp_path / "bin")
    with JsonSink() as sink:
        local = routed(standin_profile(claude, "session", 0), 'code = ["standin"]', "[0.1]")
        vault = vault_with(tmp_path / "v", "# Inbox\n", local + f'\n[notify]\nurls = ["{sink.url()}"]\n')
        work = vault / "work"
        work.mkdir()
        note = "---\ntype: code\nworker: tidy\nworkdir: work\n---\nTidy the build folder.\n"
        with_plans(vault, {"tidy.md": note})
        tick(Vault.open(vault), wait_settle=False)
        assert wait_for(lambda: bool(incidents(vault)), timeout=60), "the supervisor saw the unjudged call"
        tick(Vault.open(vault), wait_settle=False)
        text = (vault / "executor-queue" / "tidy.md").read_text()
        [last] = [line for line in text.splitlines() if line.startswith("- status: ")][-1:]
        said = "worker tidy was stopped: the gate did not see a call: Bash (touch marker-1) ran without"
        assert last.startswith("- status: error") and said in last, text
        assert (work / "marker-1").exists() and not (work / "marker-2").exists()
        assert any("gate did not see a call" in m for m in sink.messages()), sink.messages()


@requires_claude
def test_the_real_cli_with_live_hooks_makes_its_calls_and_is_not_stopped(
    tmp_path: Path, api: FakeAnthropic
) -> None:
    steps = [ToolUse("Bash", {"command": f"echo step {i} >> steps.txt"}) for i in (1, 2, 3)]
    api.script(*steps, Text("done"))
    table = profile("worker-code", api.start(), tmp_path / "cc", workdir="work", timeout=120)
    vault, work = run_pass(tmp_path, table, '["worker-code"]')
    state, reason = status(vault)
    assert state is State.DONE, reason
    assert (work / "steps.txt").read_text().splitlines() == ["step 1", "step 2", "step 3"]
    assert incidents(vault) == []
    [log] = (vault / ".vaultops" / "state" / "logs" / "runs").glob("REQ-steps-*.log")
    assert '"subtype":"init"' in log.read_text(), "its stream was read: the proof was on"


def test_a_cli_that_shows_nothing_of_its_session_is_not_taken_as_done(tmp_path: Path) -> None:
    """It printed only its result: nothing could be stopped, but a session whose start never reached the
    gate fails closed all the same, and is an incident."""
    claude = standin(tmp_path / "bin")
    quiet = standin_profile(claude, "none", 0).replace(
        'STANDIN_THINK = "3.0"', 'STANDIN_THINK = "0", STANDIN_QUIET = "yes"'
    )
    vault, work = run_pass(tmp_path, quiet + AFTER, '["standin", "after"]')
    state, reason = status(vault)
    assert state is State.ERROR, reason
    assert reason.startswith("the gate did not see the session start: Claude Code ran a whole session"), (
        reason
    )
    assert (work / "marker-3").exists(), "it could not be stopped: it said nothing while it ran"
    assert not (work / "fallback-ran").exists()
    assert len(incidents(vault)) == 1
