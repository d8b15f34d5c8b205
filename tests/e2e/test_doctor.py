"""``vaultops doctor`` on real vaults: each problem is one line that says how to fix it, and exits 1."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.helpers import FAKE_AGENT, git, make_vault, vaultops

HEALTHY_PROFILES = "".join(
    f'[profiles.{name}]\ncommand = ["{FAKE_AGENT}", "{{prompt}}"]\nhealth = ["true"]\ngate = "none"\n\n'
    for name in ("worker-code", "worker-research")
)


def _vault(tmp_path: Path, local: str = HEALTHY_PROFILES) -> Path:
    vault = make_vault(tmp_path / "v", "# Inbox\n")
    (vault / ".vaultops" / "local.toml").write_text(local)
    return vault


def _doctor(vault: Path, tmp_path: Path) -> tuple[int, list[str], list[str]]:
    """(exit code, problem lines, ok lines).  HOME is a temp folder: no service, no global git config."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    base = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": "",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
    }
    proc = vaultops("--vault", str(vault), "doctor", env=base)
    assert proc.stderr == "", proc.stderr
    lines = proc.stdout.splitlines()
    assert all(line.startswith(("ok: ", "problem: ")) for line in lines), proc.stdout
    problems = [line.removeprefix("problem: ") for line in lines if line.startswith("problem: ")]
    return proc.returncode, problems, [line.removeprefix("ok: ") for line in lines if line.startswith("ok: ")]


def test_a_healthy_vault_exits_0_and_says_what_it_checked(tmp_path: Path) -> None:
    code, problems, fine = _doctor(_vault(tmp_path), tmp_path)
    assert (code, problems) == (0, []), fine
    assert "git: repository found" in fine
    assert "git: no user.name/user.email here; commits use the vaultops identity" in fine
    assert "git: no remote 'origin': results stay on this machine" in fine
    assert any(line.startswith("profile worker-code: ") and "online" in line for line in fine), fine
    assert any(line.startswith("profile worker-research: ") and "online" in line for line in fine), fine
    assert "notify: no [notify] urls; results are only written to the vault" in fine
    assert "service: not installed: vaultops service install" in fine
    assert any(line.startswith("daily notes: ") for line in fine)


def test_a_reachable_remote_and_a_git_identity_are_fine(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(vault, "remote", "add", "origin", str(remote))
    git(vault, "config", "user.name", "Person")
    git(vault, "config", "user.email", "person@example.invalid")
    code, problems, fine = _doctor(vault, tmp_path)  # an empty remote answers too
    assert (code, problems) == (0, [])
    assert f"git: remote origin ({remote}) is reachable" in fine
    assert any(line.startswith("git: commits are made by Person <person@example.invalid>") for line in fine)
    git(vault, "push", "-q", "origin", "HEAD")
    code, problems, fine = _doctor(vault, tmp_path)
    assert (code, problems) == (0, []) and f"git: remote origin ({remote}) is reachable" in fine


def test_an_unreachable_remote_is_one_problem(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    git(vault, "remote", "add", "origin", str(tmp_path / "no-such-repo.git"))
    code, problems, _ = _doctor(vault, tmp_path)
    assert code == 1 and len(problems) == 1, problems
    assert problems[0].startswith("git: cannot reach the remote origin")
    assert "vaultops will not claim while it is unreachable ([git] claim_offline = false)" in problems[0]
    assert "git remote remove origin" in problems[0]


def test_a_password_in_the_remote_url_is_not_printed(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    git(vault, "remote", "add", "origin", "https://person:hunter2secret@127.0.0.1:9/repo.git")
    code, problems, _ = _doctor(vault, tmp_path)
    assert code == 1 and len(problems) == 1 and "hunter2secret" not in problems[0], problems
    assert "https://person:***@127.0.0.1:9/repo.git" in problems[0]


def test_an_offline_health_command_is_one_problem_that_quotes_it(tmp_path: Path) -> None:
    local = HEALTHY_PROFILES.replace('health = ["true"]', 'health = ["false"]', 1)
    code, problems, fine = _doctor(_vault(tmp_path, local), tmp_path)
    assert code == 1 and len(problems) == 1, problems
    assert problems[0].startswith("[profiles.worker-code] is offline: `false` says exit 1")
    assert "fix the agent CLI" in problems[0]
    assert any(line.startswith("profile worker-research: ") for line in fine)


def test_obsidian_git_auto_backup_is_one_problem(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    plugin = vault / ".obsidian" / "plugins" / "obsidian-git"
    plugin.mkdir(parents=True)
    (plugin / "data.json").write_text(json.dumps({"autoSaveInterval": 5, "autoPushInterval": 0}))
    code, problems, _ = _doctor(vault, tmp_path)
    assert code == 1 and problems == [
        "obsidian-git also commits this clone every 5 min; two tools committing one clone race on "
        ".git/index.lock — run vaultops on its own clone, or turn off its auto backup on the machine that "
        "runs vaultops (with a remote, requests you then type on that machine wait until you commit them)"
    ]

    (plugin / "data.json").write_text(json.dumps({"autoSaveInterval": 2, "autoBackupAfterFileChange": True}))
    code, problems, _ = _doctor(vault, tmp_path)
    assert code == 1 and len(problems) == 1 and "commits this clone 2 min after each change" in problems[0]

    (plugin / "data.json").write_text(json.dumps({"autoSaveInterval": 0, "autoPullInterval": 10}))
    code, problems, _ = _doctor(vault, tmp_path)
    assert code == 1 and len(problems) == 1 and "pulls this clone every 10 min" in problems[0]

    (plugin / "data.json").write_text(json.dumps({"autoSaveInterval": 0, "autoBackupAfterFileChange": True}))
    code, problems, fine = _doctor(vault, tmp_path)
    assert code == 0 and "obsidian-git: no automatic commits, pulls or pushes" in fine

    (plugin / "data.json").write_text(json.dumps({"autoSaveInterval": 5}))
    (vault / ".obsidian" / "community-plugins.json").write_text('["dataview"]')
    code, problems, fine = _doctor(vault, tmp_path)
    assert code == 0 and "obsidian-git: installed but not enabled" in fine

    (plugin / "data.json").write_text("{not json")
    code, problems, _ = _doctor(vault, tmp_path)
    assert code == 1 and len(problems) == 1
    assert problems[0].startswith(".obsidian/plugins/obsidian-git/data.json: cannot be read as JSON")


def _set_urls(vault: Path, urls: list[str], *, local: bool = False) -> None:
    if local:
        with (vault / ".vaultops" / "local.toml").open("a") as fh:
            fh.write(f"\n[notify]\nurls = {json.dumps(urls)}\n")
        return
    config = vault / ".vaultops" / "config.toml"
    text = config.read_text()
    assert text.count("urls = []") == 1
    config.write_text(text.replace("urls = []", f"urls = {json.dumps(urls)}"))


DISCORD = "discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js"


def test_a_secret_in_a_committed_notify_url_is_one_problem(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _set_urls(vault, [DISCORD, "json://localhost:8080/hook"])
    code, problems, fine = _doctor(vault, tmp_path)
    assert code == 1 and len(problems) == 1, problems
    assert problems[0].startswith(".vaultops/config.toml: [notify] url discord://… holds what looks like")
    assert problems[0].endswith("move it to .vaultops/local.toml")
    assert "JHMHI8qBe7bk2ZwO5U711o3dV_js" not in "\n".join(problems + fine)
    assert "notify: json://… looks like an apprise URL (nothing was sent)" in fine


def test_a_notify_url_in_local_toml_is_fine_and_a_malformed_one_is_not(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _set_urls(vault, [DISCORD, "tgram://123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/42"], local=True)
    code, problems, fine = _doctor(vault, tmp_path)
    assert (code, problems) == (0, [])
    assert "notify: discord://… looks like an apprise URL (nothing was sent)" in fine
    _set_urls(vault, ["not a url"])
    code, problems, _ = _doctor(vault, tmp_path)
    assert code == 1
    assert problems == ["[notify] urls: 'not a url' is not an apprise URL (scheme://…) — fix it"]


def test_a_url_apprise_cannot_use_is_one_problem_each(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _set_urls(vault, ["nosuch://host/path", "tgram://only-one-part", "json://localhost/hook"], local=True)
    code, problems, fine = _doctor(vault, tmp_path)
    assert code == 1 and problems == [
        "[notify] urls: nosuch://… cannot be used: apprise has no nosuch:// service — fix it as apprise "
        "documents it",
        "[notify] urls: tgram://… cannot be used: apprise cannot read it: a part a tgram:// URL needs is "
        "missing or malformed — fix it as apprise documents it",
    ]
    assert "notify: json://… looks like an apprise URL (nothing was sent)" in fine


TELEGRAM_TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"


def test_telegram_without_a_token_or_with_one_in_config_toml_is_one_problem(tmp_path: Path) -> None:
    vault = _vault(tmp_path, HEALTHY_PROFILES + "[notify.telegram]\nchat_ids = [4242]\n")
    code, problems, _ = _doctor(vault, tmp_path)
    assert code == 1 and problems == [
        '[notify.telegram] has no token — put token = "<from @BotFather>" under [notify.telegram] in '
        ".vaultops/local.toml, or set VAULTOPS_TELEGRAM_TOKEN"
    ]
    config = vault / ".vaultops" / "config.toml"
    config.write_text(
        config.read_text()
        + f'\n[notify.telegram]\ntoken = "{TELEGRAM_TOKEN}"\napi_base = "http://127.0.0.1:1"\n'
    )
    code, problems, _ = _doctor(vault, tmp_path)
    assert code == 1 and problems[0].startswith(
        ".vaultops/config.toml: [notify.telegram] token is a secret in a committed file — move it to "
        ".vaultops/local.toml or VAULTOPS_TELEGRAM_TOKEN"
    )
    assert all(TELEGRAM_TOKEN.split(":")[1] not in line for line in problems)


def test_a_telegram_bot_is_asked_who_it_is(tmp_path: Path) -> None:
    from tests.support.fake_servers import FakeBotAPI

    with FakeBotAPI(TELEGRAM_TOKEN) as api:
        telegram = f'[notify.telegram]\nchat_ids = [4242]\napi_base = "{api.base}"\n'
        vault = _vault(tmp_path, HEALTHY_PROFILES + telegram + f'token = "{TELEGRAM_TOKEN}"\n')
        code, problems, fine = _doctor(vault, tmp_path)
        assert (code, problems) == (0, [])
        assert "notify: Telegram bot @vaultops_test_bot answers; 1 chat(s) told (nothing was sent)" in fine
        assert api.sent == []

        wrong = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDxxx"
        (vault / ".vaultops" / "local.toml").write_text(HEALTHY_PROFILES + telegram + f'token = "{wrong}"\n')
        code, problems, _ = _doctor(vault, tmp_path)
        assert code == 1 and len(problems) == 1
        assert problems[0].startswith(f"[notify.telegram] {api.base} did not accept the bot (getMe: HTTP 401")
        assert wrong.split(":")[1] not in problems[0]


GATED = HEALTHY_PROFILES.replace('gate = "none"\n', 'gate = "claude"\n', 1)


def test_the_sandbox_is_said_to_run_where_it_can(tmp_path: Path) -> None:
    _, problems, fine = _doctor(_vault(tmp_path, GATED), tmp_path)
    assert "sandbox: agent commands and review checks run fenced (bubblewrap)" in fine, problems


def test_a_machine_that_cannot_sandbox_is_one_problem_that_says_what_to_install(tmp_path: Path) -> None:
    vault = _vault(tmp_path, GATED)
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "VAULTOPS_FAULT": "sandbox.missing", "GIT_CONFIG_GLOBAL": "/dev/null"}
    proc = vaultops("--vault", str(vault), "doctor", env=env)
    said = [line for line in proc.stdout.splitlines() if "sandbox" in line]
    assert said == [
        "problem: sandbox: bubblewrap (bwrap) and socat not installed; install them "
        "(scripts/install-sandbox, or apt install bubblewrap socat); until then no job of worker-code starts"
    ], proc.stdout
    assert proc.returncode == 1


def test_no_gated_profile_no_sandbox_line(tmp_path: Path) -> None:
    _, problems, fine = _doctor(_vault(tmp_path), tmp_path)
    assert not [line for line in problems + fine if line.startswith("sandbox:")]
