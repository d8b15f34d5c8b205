"""Paths and errors: nothing vaultops writes goes through a symlink out of the vault, a bad daily-note
template never stops a pass from committing, bad request text gets one sentence, and ``init`` commits what
it wrote.  Real vaults, real git with a bare remote, real symlinks, the CLI as a real process."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.clones import Fleet, request_block
from tests.support.daemon_helpers import Daemon, daemon_vault
from tests.support.helpers import INBOX, git, make_vault, vaultops
from tests.support.paths import REPO
from tests.support.waiting import wait_for
from vaultops.scan.note import parse_note

ENV_CHECK = "\n## REQ-git-there\n- type: env-check\n- ready: yes\nIs git installed? `which git`\n"
LEADS_OUT = "is a symlink that leads out of the vault"


def tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


# --- a tick --------------------------------------------------------------------------------------


LINKED = ["state", "state/backups", "state/logs", "state/logs/runs", "state/workers"]


@pytest.mark.parametrize("linked", LINKED)
def test_a_state_folder_linked_out_of_the_vault_stops_the_tick_before_it_writes(
    tmp_path: Path, linked: str
) -> None:
    vault = make_vault(tmp_path / "vault", "# Inbox\n" + ENV_CHECK)
    outside = tmp_path / "outside"
    outside.mkdir()
    link = vault / ".vaultops" / linked
    if link.exists():
        shutil.rmtree(link)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)
    before = (vault / INBOX).read_bytes()
    head = git(vault, "rev-parse", "HEAD")
    proc = vaultops("--vault", str(vault), "tick", "--no-wait")
    assert proc.returncode == 2, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f".vaultops/{linked} in the vault" in lines[0] and LEADS_OUT in lines[0]
    assert lines[0].endswith("replace it with a folder")
    assert "Traceback" not in proc.stderr
    assert tree(outside) == []
    assert (vault / INBOX).read_bytes() == before
    assert git(vault, "rev-parse", "HEAD") == head


def test_the_daemon_says_so_and_keeps_running_then_works_once_it_is_fixed(tmp_path: Path) -> None:
    vault = daemon_vault(tmp_path / "vault", "# Inbox\n" + ENV_CHECK)
    outside = tmp_path / "outside"
    outside.mkdir()
    backups = vault / ".vaultops" / "state" / "backups"
    backups.parent.mkdir(parents=True, exist_ok=True)
    backups.symlink_to(outside)
    before = (vault / INBOX).read_bytes()
    daemon = Daemon(vault)
    try:
        daemon.wait_ready()
        assert wait_for(lambda: LEADS_OUT in daemon.errors())
        assert daemon.proc.poll() is None
        assert (vault / INBOX).read_bytes() == before and tree(outside) == []
        backups.unlink()  # fixed: the next pass (the reconcile timer) takes the request
        assert wait_for(lambda: "- status: done" in (vault / INBOX).read_text(), timeout=30)
    finally:
        assert daemon.stop() == 0
    assert tree(outside) == []
    assert daemon.errors().count(LEADS_OUT) == 1, daemon.errors()  # said once, not every pass


# --- the daily-note template ---------------------------------------------------------------------


def _bad_template(vault: Path, outside: Path, kind: str) -> None:
    template = vault / "Templates" / "Daily.md"
    template.parent.mkdir(exist_ok=True)
    template.unlink(missing_ok=True)
    if kind == "symlink":
        (outside / "secret.md").write_text("# secret {{date}}\n")
        template.symlink_to(outside / "secret.md")
    elif kind == "bad bytes":
        template.write_bytes(b"# Day \xff\xfe\n")
    elif kind == "huge":
        template.write_text("x" * 2_000_000)
    elif kind == "bad placeholder":
        template.write_text("# {{date:LT}}\n")
    elif kind == "folder":
        template.mkdir()
    # "missing": nothing there


@pytest.mark.parametrize("kind", ["symlink", "bad bytes", "huge", "bad placeholder", "folder", "missing"])
def test_a_bad_daily_template_is_a_warning_and_the_result_is_committed_and_pushed(
    tmp_path: Path, kind: str
) -> None:
    fleet = Fleet(tmp_path, 1, "# Inbox\n" + request_block("REQ-git-there", "Is git installed? `which git`",
                                                            "env-check"))
    clone = fleet.clones[0]
    outside = tmp_path / "outside"
    outside.mkdir()
    (clone / ".obsidian").mkdir(exist_ok=True)
    (clone / ".obsidian" / "daily-notes.json").write_text(json.dumps({"template": "Templates/Daily"}))
    _bad_template(clone, outside, kind)
    proc = fleet.tick(0)
    assert proc.returncode == 0, proc
    assert "daily-note template Templates/Daily.md not used (" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    requests = fleet.remote_requests()
    assert requests["REQ-git-there"].statuses[-1].state.value == "done"  # committed and pushed
    pushed = git(fleet.remote, "ls-tree", "-r", "--name-only", fleet.branch).splitlines()
    daily = [p for p in pushed if p.endswith(".md") and p[:4].isdigit()]
    assert daily, pushed  # the daily note, without the template
    assert "secret" not in git(fleet.remote, "show", f"{fleet.branch}:{daily[0]}")


@pytest.mark.parametrize("kind", ["a file", "a symlink out of the vault"])
def test_a_daily_folder_that_cannot_be_used_still_lets_the_pass_commit(tmp_path: Path, kind: str) -> None:
    fleet = Fleet(tmp_path, 1, "# Inbox\n" + request_block("REQ-git-there", "Is git installed?", "env-check"))
    clone = fleet.clones[0]
    outside = tmp_path / "outside"
    outside.mkdir()
    (clone / ".obsidian").mkdir(exist_ok=True)
    (clone / ".obsidian" / "daily-notes.json").write_text(json.dumps({"folder": "Journal"}))
    if kind == "a file":
        (clone / "Journal").write_text("not a folder\n")
    else:
        (clone / "Journal").symlink_to(outside)
    proc = fleet.tick(0)
    assert proc.returncode == 0, proc
    assert "daily note" in proc.stdout + proc.stderr and "not written" in proc.stdout + proc.stderr
    assert fleet.remote_requests()["REQ-git-there"].statuses[-1].state.value == "done"
    assert tree(outside) == []


# --- request text --------------------------------------------------------------------------------


def test_a_nul_byte_is_the_requests_error_and_nothing_is_started(tmp_path: Path) -> None:
    inbox = "# Inbox\n\n## REQ-nul\n- type: research\n- ready: yes\nLook at this\0 please\n" + ENV_CHECK
    vault = make_vault(tmp_path / "vault", inbox)
    log = tmp_path / "runs.log"
    proc = vaultops("--vault", str(vault), "tick", "--no-wait", env={"FAKE_AGENT_LOG": str(log)})
    assert proc.returncode == 0, proc
    requests = {r.id: r for r in parse_note(INBOX, (vault / INBOX).read_bytes()).requests}
    status = requests["REQ-nul"].statuses[-1]
    assert status.state.value == "error"
    assert status.reason == (
        "REQ-nul: the request text contains a NUL byte, which cannot be passed to a program; remove it"
    )
    assert "install it or fix" not in (vault / INBOX).read_text()
    assert not log.exists() or "nul" not in log.read_text().lower()
    assert requests["REQ-git-there"].statuses[-1].state.value == "done"


@pytest.mark.parametrize(
    ("heading", "shape"),
    [
        ("REQ-under Is git installed?\n---", "a heading underlined with ---"),
        ("REQ-under Is git installed?\n===", "a heading underlined with ==="),
        ("# REQ-under Is git installed?", "a level-1 heading (# REQ-…)"),
    ],
)
def test_a_req_heading_of_another_shape_gets_one_line_saying_how_to_write_it(
    tmp_path: Path, heading: str, shape: str
) -> None:
    inbox = f"# Inbox\n\n{heading}\n- type: env-check\n- ready: yes\n`which git`\n" + ENV_CHECK
    vault = make_vault(tmp_path / "vault", inbox)
    before = (vault / INBOX).read_bytes()
    proc = vaultops("--vault", str(vault), "tick", "--no-wait")
    assert proc.returncode == 0, proc
    after = (vault / INBOX).read_bytes()
    assert after.startswith(before[: before.index(b"\n## REQ-git-there")])  # inserted lines only
    requests = {r.id: r for r in parse_note(INBOX, after).requests}
    assert requests["REQ-under"].statuses[-1].reason == (
        f"REQ-under is {shape}; vaultops takes requests only from level-2 headings:"
        " write it as `## REQ-under …`"
    )
    assert requests["REQ-git-there"].statuses[-1].state.value == "done"


# --- env-check, end to end -----------------------------------------------------------------------


def test_env_check_never_runs_a_program_named_in_a_request(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("deploy", "node"):  # not git: vaultops runs git itself, from PATH
        script = bin_dir / name
        script.write_text(f"#!{sys.executable}\nopen({str(marker)!r}, 'a').write('ran'); print('deployed')\n")
        script.chmod(0o755)
    inbox = "# Inbox\n\n## REQ-deploy\n- type: env-check\n- ready: yes\nAre deploy and node installed?\n"
    vault = make_vault(tmp_path / "vault", inbox + ENV_CHECK)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    proc = vaultops("--vault", str(vault), "tick", "--no-wait", env=env)
    assert proc.returncode == 0, proc
    assert not marker.exists()
    text = (vault / INBOX).read_text()
    assert "deployed" not in text
    assert f"deploy: {bin_dir / 'deploy'} (script run by {sys.executable};" in text
    assert f"node: {bin_dir / 'node'} (script run by {sys.executable};" in text
    assert "not run: it lies in a temporary folder" in text


# --- init ----------------------------------------------------------------------------------------


def _committed_files(root: Path) -> list[str]:
    return sorted(git(root, "show", "--name-only", "--format=", "HEAD").split())


INIT_FILES = [".gitignore", ".vaultops/config.toml", INBOX]


def test_init_on_a_new_folder_commits_what_it_wrote(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "my-note.md").write_text("mine, not committed by init\n")
    proc = vaultops("init", str(vault))
    assert proc.returncode == 0, proc
    assert "initialised a git repository" in proc.stdout
    assert f"committed {', '.join(['.vaultops/config.toml', INBOX, '.gitignore'])} (commit " in proc.stdout
    assert _committed_files(vault) == INIT_FILES
    assert git(vault, "log", "--format=%an|%s").strip() == (
        f"vaultops (vaultops)|vaultops init: add .vaultops/config.toml, {INBOX}, .gitignore"
    )
    assert git(vault, "status", "--porcelain").splitlines() == ["?? my-note.md"]
    tick = vaultops("--vault", str(vault), "tick", "--no-wait")
    assert tick.returncode == 0, tick
    assert git(vault, "status", "--porcelain", "--untracked-files=all").splitlines() == ["?? my-note.md"]
    commits = git(vault, "rev-list", "--count", "HEAD").strip()  # the tick's: the dashboard, say
    again = vaultops("init", str(vault))
    assert "nothing to do" in again.stdout and git(vault, "rev-list", "--count", "HEAD").strip() == commits


def test_init_in_an_empty_repository_commits_what_it_wrote(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    git(vault, "init", "-q")
    proc = vaultops("init", str(vault))
    assert proc.returncode == 0, proc
    assert "initialised a git repository" not in proc.stdout
    assert _committed_files(vault) == INIT_FILES
    assert git(vault, "status", "--porcelain") == ""


def test_init_on_a_copy_of_the_template_commits_vaultops_files_and_nothing_of_the_persons(
    tmp_path: Path,
) -> None:
    """The README's first step: the template's config and inbox are there already, so init writes nothing,
    but the repository it creates must still carry them, or the other machines never get the config."""
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault-template", vault)
    proc = vaultops("init", str(vault))
    assert proc.returncode == 0, proc
    assert "initialised a git repository" in proc.stdout
    assert _committed_files(vault) == INIT_FILES
    untracked = git(vault, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert "?? .obsidian/daily-notes.json" in untracked  # the person's notes are theirs to commit


def test_init_names_vaultops_files_a_repository_never_committed(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault-template", vault)
    git(vault, "init", "-q")
    proc = vaultops("init", str(vault))
    assert proc.returncode == 0, proc
    said = [line for line in proc.stdout.splitlines() if "is not committed" in line]
    assert said == [
        f"{rel} is not committed: commit it, so that your other machines get it"
        for rel in (".vaultops/config.toml", INBOX, ".gitignore")
    ]
    assert git(vault, "rev-list", "--all").strip() == ""


def test_init_without_git_says_nothing_was_committed(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    empty = tmp_path / "no-programs"
    empty.mkdir()
    proc = vaultops("init", str(vault), env={"PATH": str(empty)})
    assert proc.returncode == 0, proc
    assert f"{vault} is not a git repository, so nothing was committed;" in proc.stdout
    assert (vault / ".vaultops" / "config.toml").is_file() and not (vault / ".git").exists()


def test_init_in_an_existing_repository_leaves_the_persons_changes_exactly_as_they_were(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    git(vault, "init", "-q")
    (vault / "a.md").write_text("one\n")
    (vault / "b.md").write_text("two\n")
    git(vault, "add", "a.md", "b.md")
    git(vault, "commit", "-qm", "the person's start")
    (vault / "a.md").write_text("one, staged\n")
    git(vault, "add", "a.md")
    (vault / "a.md").write_text("one, staged, then edited\n")  # staged and unstaged
    (vault / "b.md").write_text("two, unstaged\n")
    (vault / "c.md").write_text("new, staged\n")
    git(vault, "add", "c.md")
    (vault / "d.md").write_text("untracked\n")
    state = [git(vault, "diff"), git(vault, "diff", "--cached"), git(vault, "status", "--porcelain")]
    proc = vaultops("init", str(vault))
    assert proc.returncode == 0, proc
    assert _committed_files(vault) == INIT_FILES
    assert [git(vault, "diff"), git(vault, "diff", "--cached")] == state[:2]
    assert git(vault, "status", "--porcelain") == state[2]
    assert (vault / "a.md").read_text() == "one, staged, then edited\n"


def test_init_leaves_out_a_gitignore_the_person_is_editing(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    git(vault, "init", "-q")
    (vault / ".gitignore").write_text("node_modules/\n")
    git(vault, "add", ".gitignore")
    git(vault, "commit", "-qm", "start")
    (vault / ".gitignore").write_text("node_modules/\ndist/\n")  # the person's edit, not committed
    proc = vaultops("init", str(vault))
    assert proc.returncode == 0, proc
    assert "not committed: .gitignore already had changes of yours that are not committed" in proc.stdout
    assert _committed_files(vault) == [".vaultops/config.toml", INBOX]
    assert git(vault, "show", "HEAD:.gitignore") == "node_modules/\n"


def test_init_refuses_a_vaultops_folder_linked_out_of_the_vault(tmp_path: Path) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    vault.mkdir()
    outside.mkdir()
    (vault / ".vaultops").symlink_to(outside)
    proc = vaultops("init", str(vault))
    assert proc.returncode == 2, proc
    assert f".vaultops in the vault {vault.resolve()} {LEADS_OUT}" in proc.stderr
    assert tree(outside) == []


def test_doctor_names_a_state_folder_linked_out_of_the_vault(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault", "# Inbox\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    logs = vault / ".vaultops" / "state" / "logs"
    logs.parent.mkdir(parents=True, exist_ok=True)
    logs.symlink_to(outside)
    proc = vaultops("--vault", str(vault), "doctor")
    assert proc.returncode == 1, proc
    assert any(
        ".vaultops/state/logs in the vault" in line and LEADS_OUT in line for line in proc.stdout.splitlines()
    ), proc.stdout
    assert "Traceback" not in proc.stderr
    assert tree(outside) == []
