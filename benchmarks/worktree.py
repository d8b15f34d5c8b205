"""A code job's worktree on a 5,000-file repository: what it costs to set one up, and to find it again on a
retry.  The baseline is the naive alternative, a plain copy of the repository's files."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from vaultops.run.worktrees import branch_for, head_of, open_worktree, place_for

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def code_repo(root: Path, files: int) -> Path:
    """``files`` small source files in 50 folders, one commit."""
    repo = root / "app"
    for i in range(files):
        folder = repo / "src" / f"pkg{i % 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"module{i:05d}.py").write_text(f"def f{i}():\n    return {i}\n" * 20)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=GIT_ENV)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=repo, check=True, env=GIT_ENV)
    return repo


def _median(samples: list[float]) -> float:
    return sorted(samples)[len(samples) // 2]


def measure(files: int = 5000, runs: int = 5) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="vaultops-wt-"))
    try:
        repo = code_repo(root, files)
        base = head_of(repo)
        setup, reuse, copy = [], [], []
        for k in range(runs):
            place = place_for(repo, root / "worktrees", f"REQ-bench-{k}")
            start = time.perf_counter()
            open_worktree(repo, place, branch_for(f"REQ-bench-{k}"), base)
            setup.append(time.perf_counter() - start)
            start = time.perf_counter()
            open_worktree(repo, place, branch_for(f"REQ-bench-{k}"), base)
            reuse.append(time.perf_counter() - start)
            start = time.perf_counter()
            shutil.copytree(repo / "src", root / f"copy-{k}")
            copy.append(time.perf_counter() - start)
        return {"copy": _median(copy), "setup": _median(setup), "reuse": _median(reuse)}
    finally:
        shutil.rmtree(root, ignore_errors=True)
