"""Where a path really points, judged against the job's scope: its worktree, its own branch, its files.

A path is resolved the way the program would see it: relative to each directory the command may run in,
``~`` and ``$HOME`` expanded, then ``..`` and symlinks resolved (``realpath``), so ``wd/link/../x`` or a
symlink to ``/etc`` cannot pass for a file in the worktree.  The resolver is given in the ``Scope`` (the hook
passes ``os.path.realpath``), which keeps this module free of I/O of its own.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from vaultops.policy.bash import UNKNOWN_DIR, Word

Where = Literal["inside", "temp", "device", "system", "outside", "unknown"]

PROTECTED_BRANCHES = frozenset({"main", "master", "trunk", "develop", "production", "prod", "stable"})

# Readable by anyone and holding no one's work: reading there is inspecting the system, not leaving scope.
_SYSTEM_ROOTS = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/etc",
    "/proc",
    "/sys",
    "/nix",
    "/snap",
    "/Library",
    "/System",
    "/Applications",
    "/private/etc",
)
_DEVICES = (
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
)
_DEVICE_DIRS = ("/dev/fd/", "/proc/self/fd/")
# Keys, tokens and credentials, by folder or file name (any depth).
_SECRET_DIRS = frozenset(
    {".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store", "keyrings"}
)
_SECRET_FILES = (
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    ".vault-token",
    ".boto",
    ".s3cfg",
    ".dockercfg",
    ".htpasswd",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    "id_dsa*",
    "credentials",
    "credentials.json",
    ".credentials.json",
    "hosts.yml",
    "shadow",
    "gshadow",
    "shadow-",
    "gshadow-",
    "ssh_host_*_key",
    "sudoers",
    "master.key",
    "local.toml",
    "*.keystore",
    "secrets.json",
    "secrets.yml",
    "secrets.yaml",
    "secrets.toml",
    "*service-account*.json",
    "*.tfvars",
    "*.tfvars.json",
    "*.tfstate",
    "*.tfstate.backup",
    ".terraformrc",
    "*.kdbx",
    "*.ovpn",
    "*.jks",
    "*serviceaccount*.json",
    "credentials.yml*",
    "environment",  # /etc/environment: machine-wide variables, tokens among them
)
_SECRET_PATHS = (".config/gh", ".config/gcloud", ".config/op", ".local/share/keyrings", "/etc/ssl/private")
# What guards the agent: Claude Code's settings and hooks, MCP servers it starts, vaultops's own config,
# git hooks (they run on the next commit).  Changing them changes the rules themselves.
_POLICY_DIRS = (".claude", ".vaultops")
_POLICY_FILES = (".mcp.json", ".claude.json")


@dataclass(frozen=True)
class Scope:
    """The job's limits.  ``workdir`` is the worktree (absolute); ``own_branch`` the branch it may push to;
    ``files`` glob patterns (relative to the worktree) it may change, empty for any; ``current_branch`` the
    branch checked out (what a bare ``git push`` pushes)."""

    workdir: str
    home: str = "/nonexistent-home"
    own_branch: str | None = None
    current_branch: str | None = None
    files: tuple[str, ...] = ()
    temp_dirs: tuple[str, ...] = ("/tmp", "/var/tmp")
    resolve: Callable[[str], str] = field(default=posixpath.normpath, compare=False)

    def real(self, path: str) -> str:
        try:
            return self.resolve(path)
        except (OSError, ValueError):  # a loop of symlinks, a NUL byte: no honest answer
            return posixpath.normpath(path)

    @property
    def real_workdir(self) -> str:
        return self.real(self.workdir)


@dataclass(frozen=True)
class Place:
    """A resolved path: where it lies, the path itself ("" when unknown), and its path inside the worktree."""

    where: Where
    path: str = ""
    rel: str = ""


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def expand(text: str, scope: Scope, cwd: str) -> str | None:
    """``~``, ``$HOME``, ``$PWD`` and ``$TMPDIR`` expanded; None when the rest is known only at run time."""
    m = re.match(r"^(?:\$HOME|\$\{HOME\})(?=/|$)", text)
    if m:
        text = scope.home + text[m.end() :]
    m = re.match(r"^(?:\$PWD|\$\{PWD\})(?=/|$)", text)
    if m:
        text = cwd + text[m.end() :]
    m = re.match(r"^(?:\$TMPDIR|\$\{TMPDIR\})(?=/|$)", text)
    if m:
        text = scope.temp_dirs[0] + text[m.end() :]
    if text == "~" or text.startswith("~/"):
        text = scope.home + text[1:]
    elif text.startswith("~"):
        return "/nonexistent-other-user-home" + text[1:]  # ~user: somebody else's home, outside for sure
    if "$" in text or "`…`" in text or "$(…)" in text:
        return None
    return text


def cwds_of(base: str, chain: Sequence[str], scope: Scope) -> list[str | None]:
    """Every directory a command may run in: the start, then after each ``cd`` (any ``cd`` may fail)."""
    out: list[str | None] = [base]
    cur: str | None = base
    for target in chain:
        if cur is None or target == UNKNOWN_DIR:
            cur = None
        else:
            expanded = expand(target, scope, cur)
            cur = None if expanded is None else posixpath.join(cur, expanded)
        out.append(cur)
    return out


def place(word: Word | str, cwds: Sequence[str | None], scope: Scope) -> list[Place]:
    """Where a path argument points, for each directory the command may run in."""
    text = word.text if isinstance(word, Word) else word
    if not text:
        return [Place("unknown")]
    out: list[Place] = []
    for cwd in cwds:
        expanded = expand(text, scope, cwd or "/")
        if expanded is None or (cwd is None and not expanded.startswith("/")):
            out.append(Place("unknown"))
            continue
        out.append(locate(posixpath.join(cwd or "/", expanded), scope))
    return out


def locate(path: str, scope: Scope) -> Place:
    """Where an absolute path lies once ``..`` and symlinks are resolved."""
    if path in _DEVICES or path.startswith(_DEVICE_DIRS):
        return Place("device", path)
    real = scope.real(path)
    work = scope.real_workdir
    if _under(real, work):
        return Place("inside", real, posixpath.relpath(real, work))
    for temp in scope.temp_dirs:
        # scratch space, unless the worktree itself lives there: then its neighbours are other people's work
        if (_under(real, scope.real(temp)) or _under(real, temp)) and not _under(work, scope.real(temp)):
            return Place("temp", real)
    if real in _DEVICES:
        return Place("device", real)
    if any(_under(real, root) for root in _SYSTEM_ROOTS):
        return Place("system", real)
    return Place("outside", real)


# Another process's environment, tokens included: /proc/self/environ, /proc/1/task/1/environ.
_PROC_ENVIRON = re.compile(
    r"^/proc/(?:self|thread-self|\d+)(?:/task/\d+)?(?:/(?:environ|mem|cmdline|auxv|maps))?/?$"
    r"|^/proc/(?:[^/]+/)*environ$"
)  # and the process folders themselves, which a recursive read walks into


# Names a glob is tried against: a pattern that could match one of them may read a secret.
_SECRET_SAMPLES = (
    "ssh_host_rsa_key",
    "ssh_host_ed25519_key",
    "secrets.json",
    ".env",
    ".env.local",
    ".envrc",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    "id_rsa",
    "id_ed25519",
    "credentials",
    "server.key",
    "cert.pem",
    "prod.env",
)


def _could_name_a_secret(name: str) -> bool:
    """A glob (``.e*``, ``.[e]nv``, ``*.key``) that the shell could expand to a secret's name; a leading dot
    must be spelled out, as bash's globbing wants."""
    if not any(c in name for c in "*?["):
        return False
    return any(
        fnmatch.fnmatchcase(sample, name)
        for sample in _SECRET_SAMPLES
        if name.startswith(".") or not sample.startswith(".")
    )


def is_secret(path: str) -> bool:
    # case folded: macOS's file systems ignore case, so .ENV is .env there
    path = path.lower()
    parts = [p for p in path.split("/") if p]
    if any(p in _SECRET_DIRS for p in parts) or any(s in path for s in _SECRET_PATHS):
        return True
    if _PROC_ENVIRON.match(path):
        return True
    if len(parts) >= 2 and [p.lower() for p in parts[-2:]] == [".git", "config"]:
        return True  # remote URLs and http.extraHeader may hold tokens
    name = parts[-1] if parts else ""
    if _could_name_a_secret(name):
        return True
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in _SECRET_FILES) and not name.endswith(
        (".example", ".sample", ".template", ".pub")
    )


def is_temp_root(path: str, scope: Scope) -> bool:
    """A temp folder itself (``/tmp``, ``$TMPDIR``), not a file in it: other programs' scratch space too."""
    real = scope.real(path)
    return any(real in (temp.rstrip("/") or "/", scope.real(temp)) for temp in scope.temp_dirs)


def is_policy(path: str) -> bool:
    """Claude Code settings and hooks, MCP server lists, vaultops config, git hooks: the guards themselves."""
    # compared in lower case: macOS and Windows file systems ignore case (.Claude/settings.json, .GIT/config)
    parts = [p.lower() for p in path.split("/") if p]
    if any(p in _POLICY_DIRS for p in parts[:-1]) or (parts and parts[-1] in _POLICY_FILES):
        return True
    # anything of a repository's own: config (core.hooksPath, core.fsmonitor, aliases run programs), hooks,
    # refs and HEAD (a protected branch moved by hand), info, packed-refs
    return ".git" in parts


def in_files(rel: str, scope: Scope) -> bool:
    """Whether a path inside the worktree is among the job's files (any file when the job names none)."""
    if not scope.files:
        return True
    for pattern in scope.files:
        pattern = pattern.strip().removeprefix("./")
        if not pattern:
            continue
        if fnmatch.fnmatchcase(rel, pattern) or _under(rel, pattern.rstrip("/")):
            return True
    return False


def branch_name(ref: str) -> str:
    """``refs/heads/x`` → ``x``; other refs stay as they are."""
    return ref.removeprefix("refs/heads/")


def is_protected(branch: str) -> bool:
    """``main`` and its kin, in any case: on a case-insensitive file system ``refs/heads/MAIN`` is main."""
    name = branch_name(branch).lower()
    return name in PROTECTED_BRANCHES or name.startswith(("release/", "release-", "hotfix/"))
