"""A vault on disk: where things are, and the rule that nothing is touched outside it."""

from __future__ import annotations

import fnmatch
import os
from functools import cached_property
from pathlib import Path, PurePosixPath

from vaultops.base.copies import Copy, copies_in
from vaultops.base.errors import UnsafePath
from vaultops.base.layout import STATE_DIR, vault_root

TYPE_CHECKING = False  # as typing's, which mypy reads the same way, without importing typing
if TYPE_CHECKING:
    from vaultops.config import Config

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


def _placed(folder: str, copy: Copy) -> Copy:
    """A copy found among a folder's names, with its and its original's vault paths."""
    return Copy(_join(folder, copy.name), _join(folder, copy.original), copy.present)


def _join(folder: str, name: str) -> str:
    return PurePosixPath(folder, name).as_posix()


class Vault:
    """A vault folder.  Its configuration is read (and validated) when first asked for: finding the vault and
    its paths costs no pydantic, so the commands that never read a setting (the bus, the hook) do not pay
    for it.  ``config`` given: that one, as tests and ``doctor`` build it."""

    def __init__(self, root: Path, config: Config | None = None) -> None:
        self.root = root
        if config is not None:
            self.__dict__["config"] = config  # what the cached property would have stored

    def __repr__(self) -> str:
        return f"Vault({str(self.root)!r})"

    def reconfigure(self, config: Config) -> None:
        """Run on ``config`` from now on: a daemon's config read again (``daemon.reload``)."""
        self.__dict__["config"] = config

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vault) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None) -> Vault:
        """The vault ``--vault`` (else ``$VAULTOPS_VAULT``, else the current folder) names; it must exist."""
        return cls(vault_root(path))

    @cached_property
    def config(self) -> Config:
        # here, not at the top: the config module imports pydantic, which most of a hook's or a bus
        # command's start-up would be spent on; a command that reads a setting pays for it then
        from vaultops.config import load_config

        return load_config(self.root)

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
        """The queue folder's notes, in name order (the order they are looked at).  A sync tool's conflict
        copy of one is not a note of its own: run, it would do the work twice (``conflict_copies``)."""
        folder = PurePosixPath(self.config.queue.folder).as_posix()
        names = self._names_in(folder)
        copies = copies_in(names)
        return sorted(
            _join(folder, n) for n in names if n not in copies and self.is_plan_note(_join(folder, n))
        )

    def conflict_copies(self) -> list[Copy]:
        """Sync tools' conflict copies of the plan notes and of the inbox, as vault paths, in name order:
        never run, and the person is told of them."""
        queue = PurePosixPath(self.config.queue.folder).as_posix()
        found = {_placed(queue, c) for c in copies_in(self._names_in(queue)).values()}
        inbox = PurePosixPath(self.inbox_rel)
        near = inbox.parent.as_posix()
        found |= {
            _placed(near, c) for c in copies_in(self._names_in(near)).values() if c.original == inbox.name
        }
        return sorted(found, key=lambda c: c.name)

    def _names_in(self, folder: str) -> list[str]:
        """The names of the notes (``*.md``) in a folder of the vault; none when it is not there."""
        path = self.root / folder
        if not path.is_dir():
            return []
        return [p.name for p in path.glob("*.md")]

    @property
    def dashboard_rel(self) -> str | None:
        """The dashboard note (``_System/vaultops.md``), or None when ``[dashboard] path = false``."""
        path = self.config.dashboard.path
        return PurePosixPath(path).as_posix() if path else None

    @property
    def machines_folder(self) -> str | None:
        """Where each machine keeps its own note: the folder named like the dashboard."""
        rel = self.dashboard_rel
        return rel.removesuffix(".md") if rel is not None else None

    @property
    def rendered_paths(self) -> list[str]:
        """The notes vaultops renders whole: the dashboard, and the machines' folder (ending in "/")."""
        rel, folder = self.dashboard_rel, self.machines_folder
        return [rel, f"{folder}/"] if rel is not None and folder is not None else []

    @property
    def agent(self) -> str:
        return self.config.agent.name

    @property
    def host(self) -> str:
        return self.config.agent.host or os.uname().nodename.split(".")[0] or "localhost"

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
