"""Test helpers: real vaults in temp folders, real git, the CLI run as a real process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO
from vaultops.model import Request
from vaultops.scan.note import ParsedNote

FAKE_AGENT = REPO / "fixtures" / "bin" / "fake-agent"

INBOX = "_System/COO-Inbox.md"  # the inbox note, vault-relative

# A request the rules block (a secret's rotation): it escalates, and the tests answer it.
ROTATE = "## REQ-rotate\n- ready: yes\nRotate the Stripe secret key and update the production env file.\n"

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Person",
    "GIT_AUTHOR_EMAIL": "person@example.invalid",
    "GIT_COMMITTER_NAME": "Person",
    "GIT_COMMITTER_EMAIL": "person@example.invalid",
}


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    ).stdout


def code_repo(repo: Path, files: dict[str, str]) -> Path:
    """A repository at ``repo`` (created) on ``main`` whose one commit holds ``files``, as a person's code."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    for name, text in files.items():
        (repo / name).write_text(text)
    git(repo, "add", *files)
    git(repo, "-c", "user.name=Ann", "-c", "user.email=ann@example.org", "commit", "-qm", "start")
    return repo


def fake_profiles_config(*, timeout: float = 30, worker: bool = False) -> str:
    """The template's two profiles run by ``fixtures/bin/fake-agent``, which no gate guards (so they say
    ``gate = "none"``: the template gives them a shell)."""
    session = f'worker_command = ["{FAKE_AGENT}", "{{prompt}}"]\n' if worker else ""
    return "".join(
        f'[profiles.{name}]\ncommand = ["{FAKE_AGENT}", "{{prompt}}"]\n{session}'
        f'output = "text"\ntimeout = {timeout:g}\nhealth = []\ngate = "none"\n\n'
        for name in ("worker-code", "worker-research")
    )


def make_vault(
    root: Path, inbox: str = "", *, config: str = "", repo: bool = True, fake_profiles: bool = True
) -> Path:
    """A vault copied from vault-template/ with the given inbox text (and config appended), committed."""
    shutil.copytree(REPO / "vault-template", root)
    if inbox is not None:
        (root / "_System" / "COO-Inbox.md").write_text(inbox, encoding="utf-8")
    local = fake_profiles_config(worker=True) if fake_profiles else ""
    (root / ".vaultops" / "local.toml").write_text(local)
    if config:
        with (root / ".vaultops" / "config.toml").open("a") as fh:
            fh.write("\n" + config)
    if repo:
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "start")
    return root


def vault_with(root: Path, inbox: str, local: str, *, fake_profiles: bool = False) -> Path:
    """A vault as ``make_vault`` makes it (without the fake profiles unless asked), with ``local`` added to
    its git-ignored ``.vaultops/local.toml``."""
    vault = make_vault(root, inbox, fake_profiles=fake_profiles)
    with (vault / ".vaultops" / "local.toml").open("a") as fh:
        fh.write(local)
    return vault


def routed(profiles: str, routing: str, delays: str) -> str:
    """``local.toml`` text: the profiles, the ``[routing]`` lines, and the rate-limit waits (a TOML list)."""
    return profiles + f"[routing]\n{routing}\n\n[retry]\nrate_limit_delays = {delays}\n"


def inbox_path(vault: Path) -> Path:
    return vault / INBOX


def inbox_text(vault: Path) -> str:
    return (vault / INBOX).read_text()


def vaultops(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "vaultops", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def with_plans(vault: Path, plans: dict[str, str]) -> Path:
    """The vault's queue folder holding exactly ``plans`` (name -> text), committed.  The template's own
    plan note (paused) is tested elsewhere."""
    queue = vault / "executor-queue"
    for old in queue.glob("*.md"):
        old.unlink()
    for name, text in plans.items():
        (queue / name).write_text(text)
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "plans")
    return vault


def requests_named(note: ParsedNote, ident: str) -> list[Request]:
    return [r for r in note.requests if r.id == ident]


def inserted_lines(before: bytes, after: bytes) -> list[bytes]:
    """The lines of ``after`` that are not ``before``'s; fails unless every old line is still there, in order
    and byte for byte (the note afterwards is the note before plus inserted lines only)."""
    new = after.split(b"\n")
    extra: list[bytes] = []
    i = 0
    for n, line in enumerate(before.split(b"\n")):
        while i < len(new) and new[i] != line:
            extra.append(new[i])
            i += 1
        assert i < len(new), f"line {n + 1} of the old note is gone or changed: {line!r}"
        i += 1
    return extra + new[i:]
