"""git at the edge: stage exactly the paths vaultops wrote and commit them under its own name.

Never ``git add -A``: the person's other changes are theirs to commit.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

LOCK_RETRIES = 6


def git_processes_in(root: Path) -> list[int]:
    """Git processes whose working folder is this repository (Linux; elsewhere, any git process)."""
    found = []
    real = root.resolve()
    if not Path("/proc").is_dir():
        proc = subprocess.run(["pgrep", "-x", "git"], capture_output=True, text=True, check=False)
        return [int(p) for p in proc.stdout.split()]
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if Path(f"/proc/{entry.name}/comm").read_text().strip() != "git":
                continue
            cwd = Path(os.readlink(f"/proc/{entry.name}/cwd"))
        except OSError:
            continue
        if cwd == real or real in cwd.parents:
            found.append(int(entry.name))
    return found


class GitError(Exception):
    pass


AUTHOR_PREFIX = "vaultops ("


def identity(agent: str) -> tuple[str, str]:
    """The author of vaultops's commits: ``vaultops (<agent>)``; git log tells them from the person's."""
    return f"{AUTHOR_PREFIX}{agent})", f"{agent}@vaultops.invalid"


@dataclass(frozen=True)
class CommitResult:
    sha: str | None  # None when there was nothing to commit
    message: str


class Git:
    def __init__(self, root: Path) -> None:
        self.root = root

    def run(
        self, *args: str, env: dict[str, str] | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run git; when another git (obsidian-git, a person) holds the index lock, wait for it a little,
        and clear a lock that no running git holds (one left by a killed process)."""
        for attempt in range(LOCK_RETRIES):
            proc = self._run(*args, env=env)
            if proc.returncode == 0 or "index.lock" not in proc.stderr:
                break
            if attempt >= 2 and not git_processes_in(self.root):
                with contextlib.suppress(FileNotFoundError):
                    (self.root / ".git" / "index.lock").unlink()
            time.sleep(0.2 * (attempt + 1))
        if check and proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            raise GitError(f"git {args[0]} failed: {detail[-1] if detail else f'exit {proc.returncode}'}")
        return proc

    def _run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "-c", "core.quotepath=off", *args],
            cwd=self.root,
            env=self._env(env),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )

    def _env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(extra or {})}
        # a remote that wants a password must fail, not wait for someone to type it
        env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        env.pop("NOTIFY_SOCKET", None)
        return env

    # --- plumbing: objects and refs without touching the working tree ------------------------------

    def rev(self, name: str) -> str | None:
        proc = self.run("rev-parse", "--verify", "-q", f"{name}^{{commit}}", check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.strip() or None

    def blob(self, commit: str | None, path: str) -> bytes | None:
        """The bytes of ``path`` at ``commit``, or None when it is not there."""
        if commit is None:
            return None
        proc = subprocess.run(
            ["git", "cat-file", "blob", f"{commit}:{path}"],
            cwd=self.root, env=self._env(), capture_output=True, stdin=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip
        return proc.stdout if proc.returncode == 0 else None

    def hash_object(self, data: bytes) -> str:
        proc = subprocess.run(
            ["git", "hash-object", "-w", "--stdin"],
            cwd=self.root, env=self._env(), input=data, capture_output=True, timeout=120, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise GitError(f"git hash-object failed: {proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout.decode().strip()

    def commit_files(
        self, parent: str | None, files: dict[str, bytes | None], message: str, author: tuple[str, str, str]
    ) -> str:
        """A commit on ``parent`` whose tree is the parent's with ``files`` replaced (None: removed), built
        in a private index so that neither the working tree nor the real index is touched.
        ``author``: (name, email, date or "")."""
        index = self.root / ".git" / f"vaultops-index-{os.getpid()}"
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            if parent:
                self.run("read-tree", parent, env=env)
            else:
                self.run("read-tree", "--empty", env=env)
            for path, data in files.items():
                if data is None:
                    self.run("update-index", "--force-remove", "--", path, env=env)
                else:
                    blob = self.hash_object(data)
                    self.run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
            tree = self.run("write-tree", env=env).stdout.strip()
        finally:
            with contextlib.suppress(FileNotFoundError):
                index.unlink()
        name, email, date = author
        ident = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email}
        if date:
            ident["GIT_AUTHOR_DATE"] = date
        if not self.has_identity():
            ident |= {"GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
        parents = ["-p", parent] if parent else []
        return self.run("commit-tree", tree, *parents, "-m", message, env=ident).stdout.strip()

    def is_repo(self) -> bool:
        try:
            proc = self.run("rev-parse", "--show-toplevel", check=False)
        except (OSError, subprocess.SubprocessError):
            return False
        return proc.returncode == 0 and Path(proc.stdout.strip()).resolve() == self.root.resolve()

    def init(self) -> None:
        self.run("init", "-q")

    def has_identity(self) -> bool:
        name = self.run("config", "user.name", check=False).stdout.strip()
        email = self.run("config", "user.email", check=False).stdout.strip()
        return bool(name and email)

    def commit_paths(self, paths: Sequence[str], message: str, agent: str) -> CommitResult:
        """Stage exactly ``paths`` and commit only them, authored by ``vaultops (<agent>)``."""
        if not paths:
            return CommitResult(None, message)
        name, email = identity(agent)
        env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email}
        if not self.has_identity():
            env |= {"GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
        self.run("add", "--", *paths)
        proc = self.run("commit", "--no-status", "-m", message, "--only", "--", *paths, env=env, check=False)
        if proc.returncode != 0:
            if "nothing to commit" in proc.stdout + proc.stderr or "no changes added" in proc.stdout:
                return CommitResult(None, message)
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            raise GitError(f"git commit failed: {detail[-1] if detail else f'exit {proc.returncode}'}")
        # "[main 1a2b3c4] subject" (or "[main (root-commit) 1a2b3c4] subject")
        head = proc.stdout.split("]", 1)[0].split()
        sha = head[-1] if head else None
        return CommitResult(sha, message)
