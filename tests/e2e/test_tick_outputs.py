"""What a pass writes when jobs misbehave: long output, secrets, hangs, a missing executor (real agent
processes); and a vault with no git at all.  A daily-note format vaultops cannot follow is
tests/unit/test_twin_tick_outputs.py's, on the engine's twin."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import inbox_text, make_vault, vaultops
from vaultops.scan.note import parse_note

ONE = "# Inbox\n\n## REQ-job\n- type: research\n- ready: yes\nSummarise the notes.\n"


def test_long_output_is_cut_in_the_note_and_kept_whole_in_the_log(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", ONE)
    output = "\n".join(f"line {i}" for i in range(1000))
    proc = vaultops("--vault", str(vault), "tick", env={"FAKE_AGENT_OUTPUT": output})
    assert proc.returncode == 0, proc.stderr
    text = inbox_text(vault)
    assert "line 0" in text and "line 999" in text and "line 500" not in text
    assert "lines cut" in text
    logs = list((vault / ".vaultops" / "state" / "logs" / "runs").glob("REQ-job-*.log"))
    assert len(logs) == 1
    assert "line 500" in logs[0].read_text()
    assert (
        f"- log: 801 lines cut here; the whole output is in {logs[0].relative_to(vault).as_posix()}" in text
    )


def test_secrets_never_reach_the_note_or_the_log(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", ONE)
    token = "ghp_" + "a1B2c3D4e5" * 4
    output = f"found GITHUB_TOKEN={token}\nand sk-ant-api03-{'x' * 40} too"
    proc = vaultops("--vault", str(vault), "tick", env={"FAKE_AGENT_OUTPUT": output})
    assert proc.returncode == 0, proc.stderr
    assert token not in inbox_text(vault)
    assert "REDACTED" in inbox_text(vault)
    for log in (vault / ".vaultops" / "state" / "logs").rglob("*.log"):
        assert token not in log.read_text()


def test_a_hung_job_is_killed_at_its_timeout(tmp_path: Path) -> None:
    inbox = "# Inbox\n\n## REQ-hang\n- type: research\n- timeout: 1s\n- ready: yes\nSummarise slowly.\n"
    vault = make_vault(tmp_path / "v", inbox)
    proc = vaultops("--vault", str(vault), "tick", env={"FAKE_AGENT_SLEEP": "30"}, timeout=25)
    assert proc.returncode == 0, proc.stderr
    [request] = parse_note("i", (vault / "_System" / "COO-Inbox.md").read_bytes()).requests
    assert request.state.value == "error"
    assert request.statuses[-1].reason.startswith("timed out after 1 s")


def test_a_vault_without_git_works_and_warns_once(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", ONE, repo=False)
    first = vaultops("--vault", str(vault), "tick")
    assert first.returncode == 0
    assert "not a git repository" in first.stderr
    assert "REQ-job: done" in first.stdout
    (vault / "_System" / "COO-Inbox.md").open("a").write(
        "\n## REQ-two\n- type: research\n- ready: yes\nSummarise more notes.\n"
    )
    second = vaultops("--vault", str(vault), "tick")
    assert "REQ-two: done" in second.stdout
    assert "not a git repository" not in second.stderr


def test_a_missing_executor_is_an_error_that_says_how_to_fix_it(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", ONE, fake_profiles=False)
    (vault / ".vaultops" / "local.toml").write_text(
        '[profiles.worker-research]\ncommand = ["no-such-agent-cli", "{prompt}"]\nhealth = []\n\n'
        '[routing]\nresearch = ["worker-research"]\n'
    )
    proc = vaultops("--vault", str(vault), "tick")
    assert proc.returncode == 0
    [request] = parse_note("i", (vault / "_System" / "COO-Inbox.md").read_bytes()).requests
    assert request.state.value == "error"
    assert "no-such-agent-cli" in request.statuses[-1].reason
    assert "[profiles.worker-research]" in request.statuses[-1].reason
