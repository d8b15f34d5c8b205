"""A retry's prompt holds the failing check's tail, with the real Claude Code CLI offline against the fake
Messages API: a code job whose check failed is sent back by the person, goes on in its own session, and
the model is told the check's output as data (issue 28, part 4)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.test_review import answer, last_status, request
from tests.support.claude_cli import profile, requires_claude
from tests.support.fake_anthropic import Error, FakeAnthropic, Hang, Text, ToolUse
from tests.support.helpers import code_repo, inbox_text, routed, vault_with, vaultops

pytestmark = requires_claude


def test_the_resumed_session_is_told_the_failing_checks_tail(tmp_path: Path, api: FakeAnthropic) -> None:
    code = tmp_path / "code"
    repo = code_repo(code / "app", {"app.py": "print('hi')\n"})
    api.script(
        ToolUse("Bash", {"command": "echo fixed > fix.py"}),
        Text("DONE: fix.py written."),
        ToolUse("Bash", {"command": "mkdir -p tests && touch tests/test_empty_tab.py"}),
        Text("DONE: the test is there."),
    )
    inbox = request(fields="- review: yes\n").replace("~/code/app", str(repo))
    table = profile("worker-code", api.start(), tmp_path / "cc", timeout=120)
    table = table.replace("health = []\n", 'health = []\nchecks = [["ls", "tests/test_empty_tab.py"]]\n', 1)
    local = routed(table, 'code = ["worker-code"]', "[0.1]") + f'\n[limits]\nallowed_roots = ["{code}"]\n'
    vault = vault_with(tmp_path / "v", "# Inbox\n" + inbox, local)
    first = vaultops("--vault", str(vault), "tick", timeout=180)
    status = last_status(vault)
    assert status.startswith("review — review: 1 of 1 check failed: ls tests/test_empty_tab.py (exit 2)"), (
        status + first.stdout + first.stderr
    )
    answer(vault, "- retry: yes — add the empty-tab test")
    again = vaultops("--vault", str(vault), "tick", timeout=180)
    assert last_status(vault).startswith("review — review: 1 check passed"), again.stdout + again.stderr
    said = json.dumps(api.requests[2])  # the resumed session's first call: what vaultops asked
    assert "add the empty-tab test" in said, "the person's words"
    assert "Your last attempt, as JSON" in said
    assert "1 of 1 check failed: ls tests/test_empty_tab.py (exit 2)" in said, said[-3000:]
    assert "$ ls tests/test_empty_tab.py" in said and "No such file or directory" in said, said[-3000:]


def test_a_fallback_gets_only_what_is_left_of_the_requests_cost_limit(
    tmp_path: Path, api: FakeAnthropic
) -> None:
    """Two turns at $0.50 (and a little output), then the API fails (500): the fallback has $0.19 of the
    request's $1.20, and is stopped at its first turn.  Given the whole $1.20 again it would take two
    turns and then hang."""
    api.input_tokens = 100_000  # a turn's input: $0.50 at the list price of the model the CLI asks for
    steps = [ToolUse("Bash", {"command": f"echo step {n} >> steps.txt"}) for n in (1, 2, 3, 4)]
    api.script(steps[0], steps[1], Error(500), steps[2], steps[3], Hang(600))
    base = api.start()
    table = profile("worker-code", base, tmp_path / "c1", workdir="work", timeout=120)
    table += profile("worker-fast", base, tmp_path / "c2", workdir="work", timeout=120)
    inbox = "# Inbox\n\n## REQ-steps Take steps\n- type: code\n- ready: yes\n"
    inbox += "- max_cost_usd: 1.2\nFix the failing build step by step, and log each step in the steps file.\n"
    vault = vault_with(tmp_path / "v", inbox, routed(table, 'code = ["worker-code", "worker-fast"]', "[0.1]"))
    (vault / "work").mkdir()
    out = vaultops("--vault", str(vault), "tick", timeout=180)
    status = last_status(vault, "REQ-steps")
    assert status.startswith(
        "error — cost limit $0.19 reached after 1 turn ($0.50 spent) (after 2 attempts)"
    ), status + out.stderr
    assert len(api.requests) == 4, "no model call after the one that crossed what was left"
    assert "- attempts: worker-code error → worker-fast limit" in inbox_text(vault)
