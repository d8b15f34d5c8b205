"""A code job's own worktree (vaultops.run.worktrees) on real git repositories: made on its own branch,
reused by a retry with what the last run left, never mistaken for a folder that is not it, and removed
only when its work is merged or pushed, or when the person forces it (the branch always stays)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import git
from vaultops.run.worktrees import (
    WorktreeError,
    branch_for,
    default_root,
    head_of,
    job_name,
    open_worktree,
    place_for,
    remove,
    repo_problem,
    safe_to_remove,
    work_of,
)


def code_repo(root: Path, name: str = "app") -> Path:
    repo = root / name
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("print('hi')\n")
    git(repo, "add", "app.py")
    git(repo, "-c", "user.name=Ann", "-c", "user.email=ann@example.org", "commit", "-qm", "start")
    return repo


def commit_in(path: Path, name: str, text: str) -> None:
    (path / name).write_text(text)
    git(path, "add", name)
    git(path, "-c", "user.name=agent", "-c", "user.email=a@example.org", "commit", "-qm", f"add {name}")


def job_tree(tmp_path: Path, rid: str = "REQ-fix-tabs"):  # type: ignore[no-untyped-def]
    repo = code_repo(tmp_path / "code")
    place = place_for(repo, default_root(repo, [tmp_path / "code"]), rid)
    return repo, open_worktree(repo, place, branch_for(rid), head_of(repo))


def test_a_job_gets_its_own_worktree_on_its_own_branch_beside_the_repositories(tmp_path: Path) -> None:
    repo, wt = job_tree(tmp_path)
    assert wt.path == tmp_path / "code" / ".vaultops-worktrees" / "app" / "REQ-fix-tabs"
    assert wt.branch == "vaultops/REQ-fix-tabs" and wt.base == head_of(repo)
    assert git(wt.path, "symbolic-ref", "--short", "HEAD").strip() == "vaultops/REQ-fix-tabs"
    assert git(repo, "symbolic-ref", "--short", "HEAD").strip() == "main", "the person's checkout stays"
    assert (wt.path / "app.py").read_text() == "print('hi')\n"


def test_a_retry_goes_on_in_the_same_worktree_with_what_the_last_run_left(tmp_path: Path) -> None:
    repo, wt = job_tree(tmp_path)
    commit_in(wt.path, "fix.py", "fixed\n")
    (wt.path / "half.py").write_text("not committed yet\n")  # a run killed half-way
    again = open_worktree(repo, wt.path, wt.branch, wt.base)
    assert again == wt
    assert (again.path / "half.py").read_text() == "not committed yet\n"
    work = work_of(again)
    assert [c.split(" ", 1)[1] for c in work.commits] == ["add fix.py"]
    assert "fix.py" in work.diffstat and work.uncommitted == ("?? half.py",)


def test_a_folder_that_is_not_the_jobs_worktree_is_never_used(tmp_path: Path) -> None:
    repo, wt = job_tree(tmp_path)
    other = code_repo(tmp_path / "elsewhere", "other")
    with pytest.raises(WorktreeError, match="is not app's worktree on vaultops/REQ-x"):
        open_worktree(repo, wt.path, "vaultops/REQ-x", wt.base)  # the right folder, another branch
    with pytest.raises(WorktreeError, match="is not app's worktree"):
        open_worktree(repo, other, wt.branch, wt.base)  # another repository
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorktreeError):
        open_worktree(repo, plain, wt.branch, wt.base)
    assert list(plain.iterdir()) == []


def test_removal_waits_until_the_branch_is_merged_and_force_keeps_the_branch(tmp_path: Path) -> None:
    repo, wt = job_tree(tmp_path)
    commit_in(wt.path, "fix.py", "fixed\n")
    assert safe_to_remove(repo, wt) == "vaultops/REQ-fix-tabs is neither merged nor pushed; merge or push it"
    with pytest.raises(WorktreeError, match=r"not removed: .* neither merged nor pushed; merge or push it"):
        remove(repo, wt)
    assert wt.path.is_dir()
    git(repo, "merge", "-q", "--ff-only", wt.branch)
    assert safe_to_remove(repo, wt) == ""
    assert remove(repo, wt) == f"removed {wt.path}; branch {wt.branch} is kept"
    assert not wt.path.exists() and git(repo, "branch", "--list", wt.branch).strip()


def test_uncommitted_changes_hold_a_removal_back_and_force_takes_the_worktree_anyway(tmp_path: Path) -> None:
    repo, wt = job_tree(tmp_path)
    (wt.path / "scratch.txt").write_text("left behind\n")
    assert safe_to_remove(repo, wt) == f"{wt.path} has 1 uncommitted change; commit or discard them"
    remove(repo, wt, force=True)
    assert not wt.path.exists()
    again = open_worktree(repo, wt.path, wt.branch, wt.base)  # made again from the kept branch
    assert again.branch == wt.branch and not (again.path / "scratch.txt").exists()


def test_a_pushed_branch_may_be_removed(tmp_path: Path) -> None:
    repo, wt = job_tree(tmp_path)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    commit_in(wt.path, "fix.py", "fixed\n")
    git(wt.path, "push", "-q", "origin", wt.branch)
    git(repo, "fetch", "-q", "origin")
    assert safe_to_remove(repo, wt) == ""


def test_a_remote_ref_written_by_hand_is_not_pushed_and_ignored_files_are_said(tmp_path: Path) -> None:
    """Found by an attack: any refs/remotes/* counted as pushed, and a job may write one itself
    (`git fetch . HEAD:refs/remotes/origin/x`) with no remote there at all."""
    repo, wt = job_tree(tmp_path)
    commit_in(wt.path, "fix.py", "fixed\n")
    git(wt.path, "fetch", "-q", ".", f"HEAD:refs/remotes/origin/{wt.branch}")
    assert safe_to_remove(repo, wt).endswith("neither merged nor pushed; merge or push it")
    (wt.path / ".gitignore").write_text("build/\n")
    commit_in(wt.path, ".gitignore", "build/\n")
    (wt.path / "build").mkdir()
    (wt.path / "build" / "out.bin").write_text("x")
    git(repo, "merge", "-q", "--ff-only", wt.branch)
    said = remove(repo, wt)
    assert said == f"removed {wt.path} (with 1 ignored by git: build/); branch {wt.branch} is kept"


@pytest.mark.parametrize("kind", ["missing", "not-a-repo", "no-commit", "inside", "bare"])
def test_a_repo_that_cannot_hold_worktrees_says_why(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "x"
    if kind == "not-a-repo":
        path.mkdir()
    elif kind == "no-commit":
        path.mkdir()
        git(path, "init", "-q")
    elif kind == "inside":
        path = code_repo(tmp_path) / "sub"
        path.mkdir()
    elif kind == "bare":  # with commits: a clone's remote, say (the trial was told to `git init` it)
        git(tmp_path, "clone", "-q", "--bare", str(code_repo(tmp_path / "src")), str(path))
    said = repo_problem(path)
    endings = ("name a git repository", "(git init, then commit)", "that repository itself", "a clone of it")
    assert said.startswith(f"repo {path} ") and said.endswith(endings)
    assert ("bare repository" in said) == (kind == "bare")
    assert repo_problem(code_repo(tmp_path / "good")) == ""


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("REQ-fix", "_System/COO-Inbox.md"), ("REQ-fix.", "_System/COO-Inbox.md")),
        (("REQ-fix", "_System/COO-Inbox.md"), ("REQ-fix-", "_System/COO-Inbox.md")),
        (("PLAN-note", "executor-queue/Исправить.md"), ("PLAN-note", "executor-queue/修正.md")),
        (("PLAN-fix-tab", "executor-queue/fix tab.md"), ("PLAN-fix-tab", "executor-queue/fix-tab.md")),
    ],
)
def test_two_requests_never_share_a_worktree_or_a_branch(a: tuple[str, str], b: tuple[str, str]) -> None:
    """Found by an attack: names cleaned for git and the file system made `REQ-fix.` share `REQ-fix`'s
    branch, and every plan note named in another script share `PLAN-note`'s."""
    assert branch_for(*a) != branch_for(*b)
    assert place_for(Path("/c/app"), Path("/w"), *a) != place_for(Path("/c/app"), Path("/w"), *b)
    lossy = job_name(*b)
    assert job_name(lossy, "_System/COO-Inbox.md") != lossy, "no request id can pose as a cleaned name"
    assert git(Path("/"), "check-ref-format", "--branch", branch_for(*b)).strip() == branch_for(*b)


def test_bytecode_and_caches_the_checks_wrote_hold_no_cleanup_back(tmp_path: Path) -> None:
    """Issue 29: the review's own `pytest` wrote `__pycache__` into a repository with no .gitignore, and
    cleanup was refused for 'uncommitted changes'.  Real pytest, run in the worktree as a check runs."""
    repo, wt = job_tree(tmp_path)
    commit_in(wt.path, "test_app.py", "import app\n\n\ndef test_app() -> None:\n    assert app\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as a shell has it
    checks = subprocess.run(
        [sys.executable, "-m", "pytest", "-q"], cwd=wt.path, env=env, capture_output=True, check=False
    )
    assert checks.returncode == 0, checks.stdout
    written = work_of(wt)
    assert any("__pycache__/" in p for p in written.leftovers), written
    assert written.uncommitted == ()
    git(repo, "merge", "-q", "--ff-only", wt.branch)
    assert safe_to_remove(repo, wt) == ""
    said = remove(repo, wt)
    assert said.startswith(f"removed {wt.path} (with ") and "bytecode or cache file" in said, said
    assert not wt.path.exists()


def test_a_file_beside_the_bytecode_still_holds_a_cleanup_back(tmp_path: Path) -> None:
    repo, wt = job_tree(tmp_path)
    (wt.path / "__pycache__").mkdir()
    (wt.path / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\0")
    (wt.path / "notes.txt").write_text("the agent's own notes\n")
    assert safe_to_remove(repo, wt) == f"{wt.path} has 1 uncommitted change; commit or discard them"
    with pytest.raises(WorktreeError):
        remove(repo, wt)
    assert (wt.path / "notes.txt").exists()
