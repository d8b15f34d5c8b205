"""The gate's set-up as values: the argv that loads it, commands that would skip hooks, a gate that cannot be
set up, the job's spec, an approval used once by its own request, and the config rules that keep an agent from
running ungated unknowingly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.gate import gate_job, pretooluse
from tests.support.helpers import make_vault
from vaultops.base.claude_code import gated_argv
from vaultops.base.errors import ConfigError
from vaultops.config import load_config
from vaultops.hook.claude import GateSetupError, gate
from vaultops.hook.job import GateJob, gate_spec, job_from_spec

pytestmark = pytest.mark.real_disk  # its jobs' gates put up a fence (see tests/conftest.py)


@pytest.fixture
def job(tmp_path: Path) -> GateJob:
    return gate_job(tmp_path)


def test_the_argv_loads_the_gate_and_the_users_settings_only(tmp_path: Path) -> None:
    argv = gated_argv(["/opt/bin/claude", "-p", "hi", "--output-format", "json"], tmp_path / "s.json")
    assert argv[:5] == [
        "/opt/bin/claude",
        "--settings",
        str(tmp_path / "s.json"),
        "--setting-sources",
        "user",
    ]
    assert argv[5:] == ["-p", "hi", "--output-format", "json"]


def test_a_command_that_skips_hooks_cannot_be_gated(job: GateJob) -> None:
    for argv in (
        ["claude", "-p", "--bare"],
        ["claude", "--settings={}"],
        ["claude", "--setting-sources", "project"],
    ):
        with pytest.raises(GateSetupError, match="cannot be gated"), gate(job, argv):
            pass


def test_a_gate_that_cannot_be_set_up_says_why(job: GateJob, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULTOPS_FAULT", "gate.setup")
    with pytest.raises(GateSetupError, match="could not be set up"), gate(job, ["claude"]):
        pass


def test_the_job_round_trips_through_its_spec(job: GateJob) -> None:
    assert job_from_spec(gate_spec(job)) == job
    with pytest.raises(ValueError):
        job_from_spec("[1]")


# --- the config ---------------------------------------------------------------------------------------------


def config_with(tmp_path: Path, profile: str) -> Path:
    vault = make_vault(tmp_path / "v", repo=False)
    (vault / ".vaultops" / "local.toml").write_text(profile)
    return vault


def test_an_ungated_profile_with_a_shell_is_a_config_error_that_names_it(tmp_path: Path) -> None:
    vault = config_with(
        tmp_path, '[profiles.codexy]\ncommand = ["codex", "exec", "{prompt}"]\ntools = ["Bash"]\n'
    )
    with pytest.raises(ConfigError) as err:
        load_config(vault, {})
    message = str(err.value)
    assert "local.toml" in message and "[profiles.codexy]" in message and 'gate = "none"' in message


def test_gate_none_runs_a_shell_profile_knowingly(tmp_path: Path) -> None:
    profile = '[profiles.codexy]\ncommand = ["codex", "exec", "{prompt}"]\ntools = ["Bash"]\ngate = "none"\n'
    config = load_config(config_with(tmp_path, profile), {})
    assert not config.profiles["codexy"].gated
    assert config.profiles["worker-code"].gated, "the template's Claude Code profile is gated"


@pytest.mark.parametrize("flag", ["--bare", "--settings", "--setting-sources"])
def test_a_claude_profile_that_would_skip_the_gate_is_a_config_error(tmp_path: Path, flag: str) -> None:
    profile = f'[profiles.worker-code]\nworker_command = ["claude", "-p", "{flag}", "x"]\n'
    with pytest.raises(ConfigError, match=rf"\[profiles.worker-code\] is gated by the policy, but .*{flag}"):
        load_config(config_with(tmp_path, profile), {})


def test_a_gate_typo_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[profiles.worker-code\] gate"):
        load_config(config_with(tmp_path, '[profiles.worker-code]\ngate = "off"\n'), {})


# --- approvals ----------------------------------------------------------------------------------------------


def test_an_approval_is_the_requests_own_and_used_once(job: GateJob) -> None:
    from dataclasses import replace

    from vaultops.hook.answer import answer
    from vaultops.store.asked import grant_allowance

    assert job.vault is not None
    merge = pretooluse(Path(job.workdir), command="gh pr merge 12")
    other = replace(job, request="REQ-other")

    def kind(j: GateJob) -> str:
        return str(
            json.loads(answer(json.dumps(merge), j).stdout)["hookSpecificOutput"]["permissionDecision"]
        )

    grant_allowance(job.vault, "Bash", {"command": "gh pr merge 12"}, "REQ-x")
    assert kind(other) == "deny", "another request's agent cannot use it"
    assert kind(job) == "allow"
    assert kind(job) == "deny", "once"
