"""A vault on disk: where things are, and the rule that nothing is touched outside it."""

from __future__ import annotations

import fnmatch
import os
import socket
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from vaultops.base.errors import UnsafePath, VaultError
from vaultops.config import Config, load_config

STATE_DIR = ".vaultops/state"
# Never notes, wherever they stand (docs/architecture.md, "Vault layout").  Directory names match any
# path component.
IGNORED_DIRS = frozenset({".obsidian", ".trash", ".git", ".vaultops", ".stfolder"})
IGNORED_NAMES = (
    "*.swp",
    "*~",
    ".#*",
    "4913",
    "*.sync-conflict-*",
    "*onflicted copy*",
    "conflict-files-obsidian-git.md",
)


def is_ignored(rel: str, config_dir: str = ".obsidian") -> bool:
    parts = PurePosixPath(rel).parts
    if any(p in IGNORED_DIRS or p == config_dir for p in parts[:-1]) or (parts and parts[0] in IGNORED_DIRS):
        return True
    name = parts[-1] if parts else ""
    return any(fnmatch.fnmatch(name, pattern) for pattern in IGNORED_NAMES)


@dataclass(frozen=True)
class Vault:
    root: Path
    config: Config

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None) -> Vault:
        raw = path if path is not None else os.environ.get("VAULTOPS_VAULT") or "."
        root = Path(raw).expanduser()
        if not root.is_dir():
            raise VaultError(f"{root}: no such vault folder; pass --vault DIR or run `vaultops init {root}`")
        root = root.resolve()
        return cls(root, load_config(root))

    # --- where things are ---------------------------------------------------------------------

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def inbox_rel(self) -> str:
        return PurePosixPath(self.config.inbox.path).as_posix()

    def is_plan_note(self, rel: str) -> bool:
        """A note in the queue folder (``executor-queue/``): one job per note."""
        path = PurePosixPath(rel)
        folder = PurePosixPath(self.config.queue.folder)
        return path.suffix == ".md" and path.parent == folder and not is_ignored(rel)

    def plan_notes(self) -> list[str]:
        """The queue folder's notes, in name order (the order they are looked at)."""
        folder = self.root / self.config.queue.folder
        if not folder.is_dir():
            return []
        rels = (f"{PurePosixPath(self.config.queue.folder).as_posix()}/{p.name}" for p in folder.glob("*.md"))
        return sorted(r for r in rels if self.is_plan_note(r))

    @property
    def agent(self) -> str:
        return self.config.agent.name

    @property
    def host(self) -> str:
        return self.config.agent.host or socket.gethostname().split(".")[0] or "localhost"

    @property
    def allowed_roots(self) -> list[Path]:
        """Where jobs may run and built-in checks may look: the configured roots, and the vault itself."""
        roots = [Path(os.path.expanduser(r)) for r in self.config.limits.allowed_roots]
        return [self.root, *(r if r.is_absolute() else self.root / r for r in roots)]

    # --- the rule -----------------------------------------------------------------------------

    def resolve(self, rel: str) -> Path:
        """The real path of a vault-relative path; refuses anything that ends up outside the vault,
        through ``..`` or a symlink."""
        candidate = PurePosixPath(rel)
        if candidate.is_absolute():
            raise UnsafePath(f"{rel}: absolute paths are not vault notes; use a path inside the vault")
        real = Path(os.path.realpath(self.root / candidate))
        if not _inside(real, self.root):
            raise UnsafePath(
                f"{rel}: resolves to {real}, outside the vault {self.root}; refusing to touch it"
            )
        return real

    def rel(self, path: Path) -> str:
        return Path(os.path.realpath(path)).relative_to(self.root).as_posix()


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def inside_any(path: Path, roots: list[Path]) -> bool:
    real = Path(os.path.realpath(path))
    return any(_inside(real, Path(os.path.realpath(r))) for r in roots)
