"""A code job's own git worktree: made on its own branch, reused by its retry, and removed only when the
person says so and its work is safe.  I/O edge: it runs git (argv, never a shell) in the code repository.

A request that names ``repo:`` runs in ``<worktrees>/<repo name>/<request id>`` on branch
``vaultops/<request id>``, started from the repository's HEAD when the job was claimed (its ``base``).
vaultops never removes one by itself: agent tools that cleaned up their worktrees lost people's work
(claude-code #41089, #77268).  ``remove`` takes one away when its branch is merged into the base's branch
or pushed, or anyway (``force``) when the person says so; the branch, and with it every commit, stays.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from vaultops.base.words import counted

BRANCH_PREFIX = "vaultops/"
FOLDER = ".vaultops-worktrees"  # beside the repositories, in the allowed root that holds them
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_GIT_TIMEOUT = 120.0


class WorktreeError(Exception):
    """Why a worktree cannot be made, found or removed: one sentence that says what to do."""


@dataclass(frozen=True, slots=True)
class Worktree:
    path: Path
    branch: str
    base: str  # the commit it started from

    @property
    def short(self) -> str:
        return self.base[:12]


def job_name(request_id: str, file: str = "") -> str:
    """A request's name for its branch and folder: its id, when git and the file system take it as it
    is; else what they take, and a hash of the id and its note, so that two requests never share one
    (``REQ-fix`` and ``REQ-fix.``; plan notes ``Исправить.md`` and ``修正.md``, both ``PLAN-note``)."""
    name = _UNSAFE.sub("-", request_id).strip("-.") or "job"
    stem = PurePosixPath(file).stem
    plan_lossy = request_id.startswith("PLAN-") and bool(file) and request_id != "PLAN-" + stem
    if name == request_id and not plan_lossy:
        return name
    tag = hashlib.blake2b(f"{file}\0{request_id}".encode("utf-8", "surrogateescape"), digest_size=8)
    return f"{name}+{tag.hexdigest()}"  # `+` is never left in a name taken as it is: no id can pose as one


def branch_for(request_id: str, file: str = "") -> str:
    return BRANCH_PREFIX + job_name(request_id, file)


def place_for(repo: Path, root: Path, request_id: str, file: str = "") -> Path:
    """Where a job's worktree goes: ``root/<repo name>/<job name>``."""
    return root / (_UNSAFE.sub("-", repo.name) or "repo") / job_name(request_id, file)


def default_root(repo: Path, roots: Sequence[Path]) -> Path:
    """``[limits] worktrees`` unset: a folder beside the repositories, in the allowed root that holds
    ``repo`` (so the job's workdir is inside the allowed roots as any workdir must be)."""
    real = Path(os.path.realpath(repo))
    holders = [r for r in roots if real == r or r in real.parents]
    root = max(holders, key=lambda r: len(r.parts)) if holders else real.parent
    return root / FOLDER


def git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}  # never the vault's git
    env |= {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=_GIT_TIMEOUT, check=False
    )


def _ok(args: Sequence[str], cwd: Path, doing: str) -> str:
    try:
        proc = git(args, cwd)
    except (OSError, subprocess.SubprocessError) as exc:
        raise WorktreeError(f"could not {doing} in {cwd}: {exc}") from None
    if proc.returncode != 0:
        said = (proc.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise WorktreeError(f"could not {doing} in {cwd}: {said}")
    return proc.stdout.rstrip()  # not its leading spaces: a diffstat's columns, a status's " M"


def repo_problem(repo: Path) -> str:
    """Why ``repo`` cannot hold worktrees ("" when it can): it must be a git repository with a commit."""
    if not repo.is_dir():
        return f"repo {repo} is not a folder; name a git repository"
    if git(["rev-parse", "--is-bare-repository"], repo).stdout.strip() == "true":
        return f"repo {repo} is a bare repository, with no files to work on; name a clone of it"
    try:
        top = _ok(["rev-parse", "--show-toplevel"], repo, "find the repository")
        _ok(["rev-parse", "--verify", "-q", "HEAD^{commit}"], repo, "find a commit")
    except WorktreeError:
        return f"repo {repo} is not a git repository with a commit; name one (git init, then commit)"
    if Path(os.path.realpath(top)) != Path(os.path.realpath(repo)):
        return f"repo {repo} is inside the repository {top}; name that repository itself"
    return ""


def head_of(repo: Path) -> str:
    return _ok(["rev-parse", "HEAD^{commit}"], repo, "read HEAD")


def base_for(repo: Path, branch: str) -> str:
    """The commit a job's worktree starts from: the repository's HEAD, or, when the job's branch is
    there already (a retry), where that branch left it."""
    if git(["rev-parse", "--verify", "-q", f"refs/heads/{branch}"], repo).returncode == 0:
        return _ok(["merge-base", "HEAD", branch], repo, f"find where {branch} started")
    return head_of(repo)


def open_worktree(repo: Path, path: Path, branch: str, base: str) -> Worktree:
    """The job's worktree at ``path`` on ``branch``: the one there (a retry goes on in it, with whatever
    the last run left), or a new one started from ``base``.  A folder there that is not this
    repository's worktree on this branch is never touched."""
    if path.exists():
        return _existing(repo, path, branch, base)
    path.parent.mkdir(parents=True, exist_ok=True)
    exists = git(["rev-parse", "--verify", "-q", f"refs/heads/{branch}"], repo).returncode == 0
    if exists:  # removed before, its branch kept: the work goes on from where the branch is
        _ok(["worktree", "add", str(path), branch], repo, f"add a worktree for {branch}")
    else:
        _ok(["worktree", "add", "-b", branch, str(path), base], repo, f"add a worktree on {branch}")
    return Worktree(path, branch, base)


def _existing(repo: Path, path: Path, branch: str, base: str) -> Worktree:
    try:
        common = _ok(["rev-parse", "--path-format=absolute", "--git-common-dir"], path, "read the worktree")
        mine = _ok(["rev-parse", "--path-format=absolute", "--git-common-dir"], repo, "read the repository")
        on = _ok(["symbolic-ref", "-q", "--short", "HEAD"], path, "read its branch")
    except WorktreeError:
        on, common, mine = "", "", "?"
    if os.path.realpath(common) != os.path.realpath(mine) or on != branch:
        raise WorktreeError(
            f"{path} is there but is not {repo.name}'s worktree on {branch}; move it away, or delete the "
            "request's worktree line to start afresh"
        )
    return Worktree(path, branch, base)


@dataclass(frozen=True, slots=True)
class Work:
    """What the job's branch holds: its commits since the base, its diffstat, and uncommitted changes."""

    commits: tuple[str, ...]  # "1a2b3c4 subject", oldest first
    diffstat: str
    uncommitted: tuple[str, ...]  # `git status --short` lines, but the leftovers
    leftovers: tuple[str, ...] = ()  # untracked bytecode and test caches (paths): see ``is_leftover``


# What a review's own checks (pytest, python itself) write into the worktree: made again by the next run,
# never anyone's work.  So it holds no removal back and goes with the worktree, like what git ignores; a
# repository without a .gitignore for it would otherwise refuse every cleanup.
_LEFTOVER_FOLDERS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
_LEFTOVER_SUFFIXES = (".pyc", ".pyo")


def is_leftover(status_line: str) -> bool:
    """An untracked file (``?? path`` in ``git status --short``) that is bytecode or a test cache.  Pure."""
    if not status_line.startswith("?? ") or status_line.startswith('?? "'):
        return False  # a tracked file changed, even a .pyc: someone's change; a quoted path: kept, to be safe
    path = PurePosixPath(status_line[3:])
    return path.suffix in _LEFTOVER_SUFFIXES or not _LEFTOVER_FOLDERS.isdisjoint(path.parts[:-1])


def work_of(wt: Worktree) -> Work:
    log = _ok(["log", "--reverse", "--format=%h %s", f"{wt.base}..HEAD"], wt.path, "list its commits")
    # the committed work, as accepting takes it; what is not committed is listed apart
    stat = _ok(["diff", "--stat", wt.base, "HEAD"], wt.path, "read its diffstat")
    status = _ok(["status", "--short", "--untracked-files=all"], wt.path, "read its status")
    lines = [line for line in status.splitlines() if line]
    left = tuple(line[3:] for line in lines if is_leftover(line))
    kept = tuple(line for line in lines if not is_leftover(line))
    return Work(tuple(filter(None, log.splitlines())), stat, kept, left)


def safe_to_remove(repo: Path, wt: Worktree) -> str:
    """Why removing the worktree could lose work, and what to do ("" when it cannot): changes not
    committed, or a branch neither merged into the repository's HEAD nor on one of its remotes."""
    work = work_of(wt)
    if work.uncommitted:
        return f"{wt.path} has {counted(len(work.uncommitted), 'uncommitted change')}; commit or discard them"
    tip = head_of(wt.path)
    merged = git(["merge-base", "--is-ancestor", tip, "HEAD"], repo).returncode == 0
    if not merged and not _on_a_remote(repo, tip):
        return f"{wt.branch} is neither merged nor pushed; merge or push it"
    return ""


def _on_a_remote(repo: Path, tip: str) -> bool:
    """A ref of one of the repository's configured remotes holds ``tip``.  Not any ``refs/remotes/*``: a
    job could write one by hand (``git fetch . HEAD:refs/remotes/origin/x``) to pass for pushed."""
    remotes = _ok(["remote"], repo, "list the remotes").split()
    if not remotes:
        return False
    prefixes = [f"refs/remotes/{name}/" for name in remotes]
    holding = _ok(["for-each-ref", "--contains", tip, "--format=%(refname)", *prefixes], repo, "look for it")
    return bool(holding)


def _ignored(path: Path) -> list[str]:
    """What git ignores in the worktree (build output, caches): gone with it, and said so."""
    out = git(["status", "--porcelain", "--ignored=matching", "--untracked-files=normal"], path)
    if out.returncode != 0:
        return []
    return [line[3:] for line in out.stdout.splitlines() if line.startswith("!! ")]


def remove(repo: Path, wt: Worktree, *, force: bool = False) -> str:
    """Remove the worktree (never its branch); returns what was done.  Without ``force`` only when
    ``safe_to_remove`` says nothing could be lost."""
    if not wt.path.exists():
        _ok(["worktree", "prune"], repo, "prune worktrees")
        return f"{wt.path} was already gone; branch {wt.branch} is kept"
    if not force and (why := safe_to_remove(repo, wt)):
        raise WorktreeError(f"not removed: {why}, or write `- cleanup: force`")
    ignored = _ignored(wt.path)
    # git refuses a worktree with untracked files: the leftovers go first (anything else still stops it)
    left = work_of(wt).leftovers
    for rel in left:
        (wt.path / rel).unlink(missing_ok=True)  # git lists files, never what a symlink points into
    _ok(["worktree", "remove", *(["--force"] if force else []), str(wt.path)], repo, "remove the worktree")
    shown = ", ".join(ignored[:3]) + (", …" if len(ignored) > 3 else "")
    went = [f"{len(ignored)} ignored by git: {shown}"] if ignored else []
    went += [f"{counted(len(left), 'bytecode or cache file')} the checks wrote"] if left else []
    return f"removed {wt.path}{' (with ' + '; '.join(went) + ')' if went else ''}; branch {wt.branch} is kept"


def other_refs(repo: Path, branch: str) -> dict[str, str]:
    """Every ref of ``repo`` but the job's own ``branch``, and the object it names."""
    listed = _ok(["for-each-ref", "--format=%(refname) %(objectname)"], repo, "list its refs")
    refs = dict(line.split(" ", 1) for line in listed.splitlines() if " " in line)
    refs.pop(f"refs/heads/{branch}", None)
    return refs


def put_back_refs(repo: Path, before: dict[str, str], branch: str) -> list[str]:
    """The refs a job moved or deleted that were not its own branch, each put back where it was.

    The job's sandbox keeps every other branch's file read-only, but a branch kept only in
    ``packed-refs`` (after ``git gc``) can be shadowed by a new loose file: the one write a commit needs,
    on the folder its own branch lives in, cannot be told apart from that.  So vaultops looks after the
    job."""
    after = other_refs(repo, branch)
    moved = [ref for ref, sha in before.items() if after.get(ref) != sha]
    for ref in moved:
        _ok(["update-ref", "--no-deref", ref, before[ref]], repo, f"put {ref} back")
    return moved
