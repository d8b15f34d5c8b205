"""Retries that carry the reason; loops that stop (issue 28, part 4), through whole passes on a real vault
with real agent processes (fixtures/bin/fake-agent): a retry's prompt holds the failing check's tail, a
request that fails the same way ``[retry] same_failure_limit`` times in a row goes to the person with
each attempt's failure and is not run again by itself, and a retry gets only what is left of the
request's own cost limit."""

from __future__ import annotations

import dataclasses
import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.e2e.test_dispatch import profile, routed_vault
from tests.e2e.test_review import answer, open_vault, prompts, request
from tests.support.helpers import FAKE_AGENT, code_repo, inbox_text
from vaultops.base.errors import ConfigError
from vaultops.config import load_config
from vaultops.engine.context import local_now
from vaultops.engine.recover import stop_leftovers
from vaultops.engine.tick import tick
from vaultops.model import State
from vaultops.run.carry import Carry, FailedCheck, keyed
from vaultops.run.dispatch import Dispatcher
from vaultops.run.jobs import Job
from vaultops.run.outcome import Attempt, Failure
from vaultops.scan.note import parse_note
from vaultops.store.state import StateDB
from vaultops.vault import Vault

INBOX = "_System/COO-Inbox.md"
ONE = "# Inbox\n\n## REQ-job Summarise\n- type: code\n- ready: yes\n{fields}Write the summary script.\n"


def status_of(vault: Path, rid: str = "REQ-job") -> str:
    note = parse_note(INBOX, (vault / INBOX).read_bytes())
    status = next(r for r in note.requests if r.id == rid).statuses[-1]
    return f"{status.state.value} — {status.reason}"


def calls(counter: Path) -> int:
    return int(counter.read_text()) if counter.exists() else 0


def once(vault: Path, later: int = 0) -> None:
    """One pass, ``later`` minutes from now: two identical failures are two status lines, not one line
    written twice in the same second (which vaultops would take for a copy of its own)."""
    tick(Vault.open(vault), clock=lambda: local_now() + timedelta(minutes=later), wait_settle=False)


@pytest.fixture
def code_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    code_repo(home / "code" / "app", {"app.py": "print('hi')\n"})
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("FAKE_AGENT_WRITE", "fix.py")
    monkeypatch.setenv("FAKE_AGENT_PROMPTS", str(tmp_path / "prompts"))
    return tmp_path / "v"


def test_a_retrys_prompt_holds_the_failing_checks_tail(code_vault: Path, tmp_path: Path) -> None:
    checks = '[["test", "-f", "fix.py"], ["ls", "tests/test_tab_preview.py"]]'
    vault = open_vault(code_vault, request(), checks=checks)
    once(vault)
    assert status_of(vault, "REQ-fix").startswith(
        "review — review: 1 of 2 checks failed: ls tests/test_tab_preview.py (exit 2)"
    ), status_of(vault, "REQ-fix")
    answer(vault, "- retry: yes — add the missing test")
    once(vault)
    first, second = prompts(tmp_path)
    assert "last_attempt" not in first, "the first run has nothing to carry"
    block = json.loads(second[second.index("```json") + 7 : second.rindex("```")])
    carried = block["context"]["last_attempt"]
    assert carried["error"] == "1 of 2 checks failed: ls tests/test_tab_preview.py (exit 2)"
    tail = carried["failing_check_output"]
    assert tail.startswith("$ ls tests/test_tab_preview.py\n"), tail
    assert "tests/test_tab_preview.py" in tail.splitlines()[1] and "No such file" in tail, tail
    assert carried["the_person_asks"] == "add the missing test"
    print(f"\nthe retry's prompt carried: {json.dumps(carried)}")


def test_a_loop_of_identical_failures_stops_at_the_limit_and_goes_to_the_person(tmp_path: Path) -> None:
    counter = tmp_path / "c1"
    # each error says its time and pid, as real ones do: the status lines differ, the signatures do not
    seen = tmp_path / "prompts"
    noisy = profile(
        "worker-code", "500", counter, env=f', FAKE_AGENT_NOISE = "1", FAKE_AGENT_PROMPTS = "{seen}"'
    )
    vault = routed_vault(tmp_path, ONE.format(fields=""), noisy)
    once(vault)  # the retry table: an error has no fallback here, so one attempt a run
    assert status_of(vault).startswith("error — API error 500"), status_of(vault)
    for n in (2, 3):
        answer(vault, "- retry: yes")
        once(vault, n)
        assert calls(counter) == n
    status = status_of(vault)
    assert status.startswith("escalated — failed the same way 3 times in a row (error: api error 500"), status
    assert "vaultops stopped retrying. Write `- retry: yes — what to change`" in status
    text = inbox_text(vault)
    history = text[text.index("Failed the same way 3 times in a row:") :]
    assert [line.strip()[:3] for line in history.splitlines()[1:4]] == ["1. ", "2. ", "3. "], history
    assert history.count("worker-code: error: api error 500") == 3, history

    # an automatic run of it (not the person's `- retry: yes`) starts nothing
    state = StateDB(vault / ".vaultops" / "state" / "state.db")
    job = Job(INBOX, "REQ-job", "Summarise", "Write the summary script.", "code", "c0ffee", "worker-code")
    again = Dispatcher(Vault.open(vault), state, [], cancel=threading.Event()).run(job, datetime.now(UTC))
    assert again.result.state is State.ESCALATED and again.attempts == ()
    assert calls(counter) == 3

    # the person asks again: it runs once, fails the same way, and is back with them at once
    answer(vault, "- retry: yes — use the cached data")
    once(vault, 4)
    assert calls(counter) == 4
    last = sorted(seen.iterdir())[-1].read_text()
    carried = json.loads(last[last.index("```json") + 7 : last.rindex("```")])["context"]["last_attempt"]
    assert carried["error"].startswith("API error 500: API Error: Request rejected (500) · fake at ")
    assert carried["the_person_asks"] == "use the cached data", "a retry's comment reaches the next prompt"
    assert status_of(vault).startswith("escalated — failed the same way 4 times in a row"), status_of(vault)


def test_the_limit_stops_the_retry_table_too(tmp_path: Path) -> None:
    """At ``same_failure_limit = 1`` the first failure goes to the person: the fallback never runs."""
    profiles = profile("worker-code", "max-turns", tmp_path / "c1") + profile(
        "worker-fast", "ok", tmp_path / "c2"
    )
    vault = routed_vault(tmp_path, ONE.format(fields=""), profiles + "")
    with (vault / ".vaultops" / "local.toml").open("a") as fh:
        fh.write("same_failure_limit = 1\n")  # under the [retry] that routed() wrote last
    once(vault)
    assert status_of(vault).startswith("escalated — failed the same way 1 times in a row"), status_of(vault)
    assert not (tmp_path / "c2").exists(), "the fallback never ran"


def metered_profile(counter: Path, script: str, name: str = "worker-code") -> str:
    """A profile vaultops can hold to a cost limit: it reads its stream-json as it runs."""
    return (
        f"[profiles.{name}]\n"
        f'command = ["{FAKE_AGENT}", "-p", "{{prompt}}", "--output-format", "stream-json"]\n'
        'tools = ["Bash", "Read"]\ngate = "none"\noutput = "claude-json"\ntimeout = 20\nhealth = []\n'
        f'env = {{ FAKE_AGENT_FORMAT = "claude-json", FAKE_AGENT_SCRIPT = "{script}", '
        f'FAKE_AGENT_COUNTER = "{counter}", FAKE_AGENT_COST = "0.6", FAKE_AGENT_TOKENS = "40000" }}\n\n'
    )


def test_a_retry_is_cut_to_what_is_left_of_the_requests_cost_limit(tmp_path: Path) -> None:
    counter = tmp_path / "c1"
    inbox = ONE.format(fields="- max_cost_usd: 1\n")
    vault = routed_vault(tmp_path, inbox, metered_profile(counter, "max-turns,spend-hang"))
    once(vault)  # it spends $0.60 and fails
    assert status_of(vault).startswith("error — Claude Code stopped: error_max_turns"), status_of(vault)
    answer(vault, "- retry: yes")
    once(vault, 1)
    # $0.40 was left: its one model call ($0.60 of input) crosses it, and it is stopped there (with the
    # whole $1 it would have run on, and hung until its timeout)
    status = status_of(vault)
    assert status.startswith("error — cost limit $0.4 reached after 1 turn ($0.60 spent)"), status
    answer(vault, "- retry: yes")
    once(vault, 2)
    assert status_of(vault).startswith(
        "error — the request's cost limit $1 is spent ($1.20 over 2 attempts); raise it in the request"
    ), status_of(vault)
    assert calls(counter) == 2, "nothing was left: no third attempt started"


def test_a_fallback_does_not_start_when_the_failure_spent_the_requests_limit(tmp_path: Path) -> None:
    profiles = metered_profile(tmp_path / "c1", "max-turns") + metered_profile(
        tmp_path / "c2", "ok", "worker-fast"
    )
    vault = routed_vault(tmp_path, ONE.format(fields="- max_cost_usd: 0.5\n"), profiles)
    once(vault)
    assert status_of(vault) == (
        "error — Claude Code stopped: error_max_turns; the request's cost limit $0.5 is spent ($0.60 over "
        "1 attempt); raise it in the request and write `- retry: yes` to give it more"
    ), status_of(vault)
    assert not (tmp_path / "c2").exists(), "the fallback never ran"


def carry_of(tmp_path: Path, job: Job) -> Carry:
    return Carry(StateDB(tmp_path / "state.db"), threading.Lock(), job, 3)


JOB = Job(INBOX, "REQ-fix", "Fix", "Fix the tab preview.", "code", "c0ffee", "worker-code", review=True)


def test_a_session_gone_on_with_after_review_is_told_the_failing_checks_as_json(tmp_path: Path) -> None:
    carry = carry_of(tmp_path, JOB)
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    failed = FailedCheck("pytest -q", "exit 1", f"E   assert 2 == 3\ntoken={secret}\nFAILED test_tab.py")
    carry.checked([failed], 2)
    told = carry.told()
    assert told.startswith("\n\nYour last attempt, as JSON:\n")
    note = json.loads(told.split("\n", 3)[3])
    assert note["error"] == "1 of 2 checks failed: pytest -q (exit 1)"
    assert note["failing_check_output"].startswith("$ pytest -q\nE   assert 2 == 3\n")
    assert secret not in told, "redacted"
    carry.checked([], 2)  # the checks passed: nothing more to carry
    assert carry.told() == "" and carry.note() == ()


def test_an_attempt_a_crash_cut_short_is_said_to_the_next(tmp_path: Path) -> None:
    state = StateDB(tmp_path / "state.db")
    state.run_started(INBOX, "REQ-fix", "c0ffee", 1, "worker-code", "vm", None)  # never ended: a crash
    stop_leftovers(state, "vm")
    note = dict(carry_of(tmp_path, JOB).note())
    assert note["error"].startswith("interrupted: vaultops stopped before this attempt finished"), note
    assert note["attempt"] == "worker-code: aside"


@pytest.mark.parametrize(("value", "said"), [("0", "greater than or equal to 1"), ('"three"', "integer")])
def test_a_same_failure_limit_that_is_not_a_count_is_one_sentence_naming_the_file(
    tmp_path: Path, value: str, said: str
) -> None:
    (tmp_path / ".vaultops").mkdir()
    (tmp_path / ".vaultops" / "config.toml").write_text(f"[retry]\nsame_failure_limit = {value}\n")
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    message = raised.value.message
    assert "config.toml" in message and "[retry] same_failure_limit" in message and said in message, message
    assert "\n" not in message.strip()


def test_each_task_of_a_fanned_out_request_carries_its_own_attempts(tmp_path: Path) -> None:
    """A plan note's tasks run as jobs of their own (claim ``<claim>-t<n>``, run.fanout): one task's
    failure is not told to another, nor counted in its streak."""
    assert keyed("REQ-plan", "ab12cd-t2") == "REQ-plan#task2" and keyed("REQ-plan", "ab12cd") == "REQ-plan"
    task = dataclasses.replace(JOB, request_id="REQ-plan", review=False)
    second = carry_of(tmp_path, dataclasses.replace(task, claim="ab12cd-t2"))
    failed = Attempt("worker-code", Failure.OTHER, "Traceback: …", "exit 2", 1.0)
    assert [second.ran(failed) for _ in range(3)] == [False, False, True]
    assert dict(second.note())["error"] == "exit 2"
    first = carry_of(tmp_path, dataclasses.replace(task, claim="ff00ee-t1"))  # another run's claim, task 1
    assert first.note() == () and first.history() == []
    assert carry_of(tmp_path, dataclasses.replace(task, claim="ff00ee-t2")).history() == second.history()
