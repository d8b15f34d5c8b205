"""``vaultops init``'s own commit: exactly the files it created or changed, nothing of the person's.

Without it the shared config and the .gitignore lines stay untracked, and the other machines never get
them.  The commit names only init's paths (``git add -- PATHS`` then ``git commit --only -- PATHS``), so
whatever else the person has staged or changed stays exactly as it was.  A path that already held
uncommitted changes of the person (a .gitignore being edited, say) is left out and named: committing it
would commit their edit too.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from vaultops.sync.git import Git, GitError

AGENT = "vaultops"


def _dirty(git: Git, rel: str) -> bool:
    """The path differs from HEAD in the index or in the working tree (before init touched it)."""
    proc = git.run("status", "--porcelain", "--untracked-files=all", "--", rel, check=False)
    return bool(proc.stdout.strip())


def untracked(root: Path, rel: str) -> bool:
    """The file is in a git repository that has never committed it."""
    git = Git(root)
    try:
        if not git.is_repo():
            return False
        return git.run("ls-files", "--error-unmatch", "--", rel, check=False).returncode != 0
    except (OSError, subprocess.SubprocessError):
        return False


def dirty_before(root: Path, rels: Sequence[str]) -> set[str]:
    """Which of ``rels`` hold uncommitted changes of the person now (call before init writes)."""
    git = Git(root)
    if not git.is_repo():
        return set()
    return {rel for rel in rels if (root / rel).exists() and _dirty(git, rel)}


def commit_init(root: Path, changed: Sequence[str], theirs: set[str]) -> list[str]:
    """Commit ``changed`` (vault-relative paths init wrote) in a commit of its own; a line per outcome."""
    ours = [rel for rel in changed if rel not in theirs]
    lines = [
        f"not committed: {rel} already had changes of yours that are not committed; commit it yourself"
        for rel in changed
        if rel in theirs
    ]
    git = Git(root)
    try:
        repo = git.is_repo()
    except (OSError, subprocess.SubprocessError):
        repo = False
    if not repo:
        return [*lines, f"{root} is not a git repository, so nothing was committed; run `git init` there "
                        "and commit what init wrote, so that your other machines get it"]
    if not ours:
        return lines
    busy = git.in_progress()
    if busy:
        return [*lines, f"not committed: {busy}; finish it, then commit {', '.join(ours)} yourself"]
    message = f"vaultops init: add {', '.join(ours)}\n\nWritten by `vaultops init`; nothing else is in it.\n"
    try:
        result = git.commit_paths(ours, message, AGENT)
    except (GitError, OSError, subprocess.SubprocessError) as exc:
        return [*lines, f"not committed ({exc}); commit {', '.join(ours)} yourself"]
    if result.sha is None:
        return lines
    return [*lines, f"committed {', '.join(ours)} (commit {result.sha})"]
