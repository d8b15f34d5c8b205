"""The fence for one job, found on disk: its folder, its repository's git files, the vault and the home
folder around it, the credentials there are to hide; and whether this machine can put it up at all.

The rules are in ``vaultops.hook.sandbox``; this module only looks.  Every path it gives exists (Claude
Code's sandbox makes a denied path that does not exist unreadable as well), and is resolved, since
bubblewrap mounts what a path names, not the link.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from vaultops.base import faults
from vaultops.hook.sandbox import Fence, bwrap_argv

# Credentials in a home folder: keys, cloud and forge CLIs' logins, package registries' tokens.
CREDENTIALS = (
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".config/hub", ".config/glab-cli",
    ".kube", ".docker", ".netrc", ".npmrc", ".yarnrc", ".pypirc", ".git-credentials",
    ".config/git/credentials", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
    ".m2/settings.xml", ".gradle/gradle.properties", ".vault-token", ".terraform.d", ".config/op",
    ".password-store", ".local/share/keyrings", ".claude/.credentials.json", ".claude.json",
    ".config/vaultops", ".config/rclone", ".s3cfg", ".boto", ".pgpass", ".my.cnf",
)  # fmt: skip
# In a repository's git folder, what no job changes: its settings and hooks (they run on the next command),
# which branch the main checkout is on, its attributes and excludes (filters run programs), other refs.
GIT_READ_ONLY = (
    "config", "config.worktree", "hooks", "HEAD", "index", "info", "packed-refs", "description", "modules",
    "refs/tags", "refs/remotes", "refs/notes", "refs/replace", "refs/stash", "shallow", "objects/info",
)  # fmt: skip
SANDBOX_TOOLS = ("bwrap", "socat")  # what Claude Code's sandbox needs on Linux; vaultops's checks need bwrap


def fence_for(
    workdir: Path,
    vault: Path,
    *,
    branch: str = "",
    home: Path | None = None,
    domains: Sequence[str] = (),
    writable: Sequence[str] = (),
    commits: bool = True,
) -> Fence:
    """The fence of a job that runs in ``workdir`` for ``vault``, on its own ``branch`` when it has one.
    ``writable``: more folders its commands may write (the profile's, e.g. a package cache); ``commits``:
    they may commit on that branch (an agent may; vaultops's checks only test)."""
    work = workdir.resolve()
    home = (home or Path.home()).resolve()
    vault = vault.resolve()
    git_writable, git_read_only = _git(work, branch)
    read_only = [*git_read_only, *_vault_closed(work, vault)]
    if _inside(work, home):  # the job runs in a folder above the home folder: its dot files stay closed
        read_only += [str(p) for p in _entries(home) if p.name.startswith(".")]
    unreadable = [
        *_exists(home / name for name in CREDENTIALS),  # resolved: a linked ~/.ssh hides where it leads
        *_exists([vault / ".vaultops", *_claude_credentials()]),
        *_env_files_outside(work),
    ]
    extra = [str(Path(os.path.expanduser(p)).resolve()) for p in writable]
    # nothing closed may hold the job's own folder: closing it would close the folder itself
    read_only = [p for p in read_only if not _inside(Path(p), work)]
    unreadable = [p for p in unreadable if not _inside(Path(p), work)]
    return Fence(
        workdir=str(work),
        writable=tuple(
            _unique([*(git_writable if commits else ()), *(p for p in extra if os.path.isdir(p))])
        ),
        read_only=tuple(_unique(read_only)),
        unreadable=tuple(_unique(unreadable)),
        domains=tuple(domains),
    )


def sandbox_problem() -> str:
    """Why this machine cannot fence an agent's commands, with what to do; "" when it can."""
    if faults.enabled("sandbox.missing"):
        return _missing(["bwrap", "socat"])
    if sys.platform == "darwin":
        return "" if shutil.which("sandbox-exec") else "macOS's sandbox-exec is missing"
    if not sys.platform.startswith("linux"):
        return f"vaultops cannot fence agent commands on {sys.platform}: run it on Linux or macOS"
    missing = [tool for tool in SANDBOX_TOOLS if shutil.which(tool) is None]
    return _missing(missing) if missing else _bwrap_fails()


def check_fence_problem() -> str:
    """Why vaultops cannot fence its own checks here, or "": it calls bubblewrap itself, so only on Linux
    (on macOS the agent's commands are fenced by Claude Code's Seatbelt sandbox, the checks are not run)."""
    if problem := sandbox_problem():
        return problem
    if not sys.platform.startswith("linux") and not faults.enabled("sandbox.off"):
        return "vaultops fences its checks with bubblewrap, which only Linux has"
    return ""


def _missing(tools: list[str]) -> str:
    names = " and ".join("bubblewrap (bwrap)" if t == "bwrap" else t for t in tools)
    return f"{names} not installed; install them (scripts/install-sandbox, or apt install bubblewrap socat)"


@functools.cache
def _bwrap_fails() -> str:
    """bubblewrap is there, but can it make a namespace here (a container may forbid it)?  Asked once."""
    try:
        tried = subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "--", "true"],
            capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not be started ({exc})"
    if tried.returncode == 0:
        return ""
    said = (tried.stderr.strip().splitlines() or ["no reason given"])[-1]
    return (
        f"bubblewrap cannot make a sandbox here ({said}); allow unprivileged user namespaces, or run as root"
    )


def _git(work: Path, branch: str) -> tuple[list[str], list[str]]:
    """(writable, read-only) in the git folder of the repository ``work`` is in."""
    dot = work / ".git"
    if dot.is_dir():  # a repository of its own: its folder is the job's (its settings and hooks are not)
        return [], _exists(
            dot / name for name in GIT_READ_ONLY if name not in ("HEAD", "index", "packed-refs")
        )
    if not dot.is_file():
        return [], []
    text = dot.read_text(encoding="utf-8", errors="replace").strip()
    if not text.startswith("gitdir:"):
        return [], []
    own = (work / text.removeprefix("gitdir:").strip()).resolve()  # .git/worktrees/NAME
    common_file = own / "commondir"
    common = (own / common_file.read_text().strip()).resolve() if common_file.is_file() else own.parent.parent
    read_only = _exists(common / name for name in GIT_READ_ONLY)
    read_only += [str(p) for p in _entries(common / "worktrees") if p != own]
    # refs: every branch but the job's own (the folders on the way to it stay open for its lock file)
    read_only += _siblings_along(common / "refs" / "heads", branch.split("/") if branch else [])
    return [str(common)], read_only


def _siblings_along(top: Path, parts: list[str]) -> list[str]:
    """What is in ``top`` and in each folder on the way to ``top/parts...``, but the way itself."""
    closed: list[str] = []
    folder = top
    for part in parts:
        closed += [str(p) for p in _entries(folder) if p.name != part]
        folder = folder / part
    if not parts:
        closed += [str(p) for p in _entries(top)]
    return closed


def _vault_closed(work: Path, vault: Path) -> list[str]:
    """The vault's parts a job in ``work`` must not write: all of it, but the way down to ``work`` when
    the job runs inside it (its ``.git``, ``.vaultops`` and notes always)."""
    if not _inside(vault, work):
        return _exists([vault]) if _inside(work, vault) else []
    return _siblings_along(vault, list(work.relative_to(vault).parts))


def _env_files_outside(work: Path) -> list[str]:
    """``.env`` files in the folders above ``work`` (a repository's main checkout, a project's root)."""
    found = []
    for folder in work.parents:
        found += [str(p) for p in _entries(folder) if p.name.split(".")[:2] == ["", "env"] and p.is_file()]
    return found


def _claude_credentials() -> list[Path]:
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    return [Path(config) / ".credentials.json"] if config else []


def _entries(folder: Path) -> list[Path]:
    """What is in ``folder``, but links: a link's target is not the folder's to close (it may be /usr)."""
    try:
        return sorted(folder.resolve() / e.name for e in os.scandir(folder) if not e.is_symlink())
    except OSError:
        return []


def _exists(paths: Iterable[Path]) -> list[str]:
    return [str(p.resolve()) for p in paths if os.path.exists(p)]  # a dangling link: nothing to close


def _inside(folder: Path, path: Path) -> bool:
    return path == folder or folder in path.parents


def _unique(paths: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(paths))


def fenced_argv(fence: Fence, argv: Sequence[str], tmp: Path) -> list[str]:
    """``argv`` to run in ``fence`` with bubblewrap (vaultops's own checks), ``tmp`` its private temp folder.
    The caller asked ``sandbox_problem`` first."""
    if faults.enabled("sandbox.off"):  # a test's switch: shows that the sandbox, not the gate, held
        return list(argv)
    bwrap = shutil.which("bwrap") or "bwrap"
    hidden_files = [p for p in fence.unreadable if not os.path.isdir(p)]
    return bwrap_argv(bwrap, fence, str(tmp.resolve()), argv, hidden_files)
