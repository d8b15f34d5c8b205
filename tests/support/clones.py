"""Several machines in one test: a bare repository on disk as the remote, and clones of it, each with its
own agent name, host name and state, as separate machines would have."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from tests.support.helpers import INBOX, fake_profiles_config, git, make_vault, vaultops
from vaultops.model import Request
from vaultops.scan.note import parse_note


def request_block(rid: str, text: str, type_: str = "research") -> str:
    return f"\n## {rid}\n- type: {type_}\n- ready: yes\n{text}\n"


def machine_config(i: int, *, timeout: float = 30, extra: str = "") -> str:
    profiles = fake_profiles_config(timeout=timeout)
    return f'[agent]\nname = "agent{i}"\nhost = "host{i}"\n\n{profiles}[inbox]\nsettle = 0\n\n{extra}'


class Fleet:
    """A remote and ``n`` clones.  ``env`` goes to every vaultops process (e.g. the fake agent's log)."""

    def __init__(self, root: Path, n: int, inbox: str, *, extra: str = "", timeout: float = 30) -> None:
        self.root = root
        seed = make_vault(root / "seed", inbox, fake_profiles=False)
        self.branch = git(seed, "symbolic-ref", "--short", "HEAD").strip()
        self.remote = root / "remote.git"
        git(root, "init", "-q", "--bare", str(self.remote))
        git(self.remote, "symbolic-ref", "HEAD", f"refs/heads/{self.branch}")
        git(seed, "push", "-q", str(self.remote), f"HEAD:refs/heads/{self.branch}")
        self.clones = []
        for i in range(n):
            clone = root / f"machine{i}"
            git(root, "clone", "-q", str(self.remote), str(clone))
            (clone / ".vaultops" / "local.toml").write_text(machine_config(i, timeout=timeout, extra=extra))
            self.clones.append(clone)
        self.log = root / "agent-runs.log"  # outside every repository
        self.log.touch()
        self.env = {"FAKE_AGENT_LOG": str(self.log)}

    def tick(
        self, i: int, env: dict[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return vaultops(
            "--vault",
            str(self.clones[i]),
            "tick",
            "--no-wait",
            env={**self.env, **(env or {})},
            timeout=timeout,
        )

    def remote_inbox(self) -> str:
        return git(self.remote, "show", f"{self.branch}:{INBOX}")

    def remote_requests(self) -> dict[str, Request]:
        note = parse_note(INBOX, self.remote_inbox().encode())
        return {r.id: r for r in note.requests}

    def runs(self) -> Counter[str]:
        return Counter(line for line in self.log.read_text().splitlines() if line)

    def person(self) -> Path:
        """A clone that the person edits and pushes from (Obsidian with obsidian-git, say)."""
        clone = self.root / "person"
        if not clone.exists():
            git(self.root, "clone", "-q", str(self.remote), str(clone))
        return clone

    def fsck(self) -> None:
        for repo in [self.remote, *self.clones]:
            proc = subprocess.run(["git", "fsck", "--strict"], cwd=repo, capture_output=True, text=True)
            assert proc.returncode == 0, f"git fsck in {repo.name}: {proc.stdout}{proc.stderr}"


def person_push(clone: Path, edit, attempts: int = 50, rel: str = INBOX) -> None:  # type: ignore[no-untyped-def]
    """Pull, edit the inbox (or the note ``rel``, made when missing) with ``edit(text) -> text``, commit and
    push, as a person's tools do; on a rejected push, start again from the remote's version (rebase, as
    obsidian-git does)."""
    path = clone / rel
    for _ in range(attempts):
        git(clone, "pull", "-q", "--rebase")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(edit(path.read_text(encoding="utf-8") if path.exists() else ""), encoding="utf-8")
        git(clone, "add", "--", rel)
        git(clone, "commit", "-qm", "person: edit")
        proc = subprocess.run(
            ["git", "push", "-q"], cwd=clone, capture_output=True, text=True, env={**os.environ}
        )
        if proc.returncode == 0:
            return
        git(clone, "reset", "-q", "--hard", "@{u}")
    raise AssertionError("the person's push never went through")


def tick_until(
    fleet: Fleet, i: int, done, stop: threading.Event, deadline: float, env: dict[str, str] | None = None
) -> list[str]:  # type: ignore[no-untyped-def]
    """Run ``tick`` on clone ``i`` until ``done()`` or the deadline; returns the errors it printed."""
    errors = []
    while not stop.is_set() and time.monotonic() < deadline and not done():
        proc = fleet.tick(i, env)
        if proc.returncode not in (0, 75):
            errors.append(f"machine{i}: exit {proc.returncode}: {proc.stderr}")
    return errors


# --- answers typed into the inbox, by the person or by another writer of the vault -------------------------
AGENT = "cowork-hq <cowork-hq@agents.invalid>"
PERSON = "Person <person@example.invalid>"  # tests/support/helpers.py's git identity


def statuses(text: str, rid: str) -> list[str]:
    note = parse_note(INBOX, text.encode())
    [request] = [r for r in note.requests if r.id == rid]
    return [
        ln[len("- status: ") :]
        for ln in note.lines[request.start : request.end]
        if ln.startswith("- status: ")
    ]


def after(rid: str, *lines: str) -> Callable[[str], str]:
    """An edit that types ``lines`` at the end of the request's block, as in Obsidian."""

    def edit(text: str) -> str:
        note = parse_note(INBOX, text.encode())
        [request] = [r for r in note.requests if r.id == rid]
        out = text.splitlines()
        out[request.last_line + 1 : request.last_line + 1] = list(lines)
        return "\n".join(out) + "\n"

    return edit


def push_as(clone: Path, author: str, edit: Callable[[str], str]) -> None:
    """Another writer of the vault (an agent feeding the inbox) commits and pushes under its own name."""
    name, email = author[: author.index(" <")], author[author.index("<") + 1 : -1]
    env = {**os.environ, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email}
    env |= {"GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
    git(clone, "pull", "-q", "--rebase")
    path = clone / INBOX
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    for args in (["commit", "-qam", "agent: edit"], ["push", "-q"]):
        subprocess.run(["git", *args], cwd=clone, env=env, check=True, capture_output=True)


def tick(fleet: Fleet) -> None:
    proc = fleet.tick(0)
    assert proc.returncode == 0, proc.stderr
