"""Where a vault and its files are, found without its configuration: a few modules of the standard library.

The one way every command finds its vault (``--vault``, else ``$VAULTOPS_VAULT``, else the current folder)
and the fixed paths inside it.  Reading the config files is ``vaultops.base.config_files``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from vaultops.base.errors import VaultError

VAULT_ENV = "VAULTOPS_VAULT"
DOT_DIR = ".vaultops"
STATE_DIR = ".vaultops/state"
STATE_DB = Path(STATE_DIR) / "state.db"
CONFIG_FILE = ".vaultops/config.toml"
LOCAL_FILE = ".vaultops/local.toml"
CONFIG_FILES = (CONFIG_FILE, LOCAL_FILE)  # shared, then local over it
DEFAULT_INBOX = "_System/COO-Inbox.md"
DEFAULT_QUEUE = "executor-queue"


PathArg = str | os.PathLike[str] | None


def named_vault(vault: PathArg, environ: Mapping[str, str] | None = None) -> Path | None:
    """The vault a command was given: ``--vault``, else ``$VAULTOPS_VAULT``; None when neither is set."""
    environ = os.environ if environ is None else environ
    raw = vault if vault is not None and str(vault) else environ.get(VAULT_ENV)
    return Path(raw).expanduser() if raw else None


def vault_folder(vault: PathArg, environ: Mapping[str, str] | None = None) -> Path:
    """The vault folder as given (``--vault``, ``$VAULTOPS_VAULT``, else the current folder), not checked."""
    return named_vault(vault, environ) or Path(".")


def vault_root(vault: PathArg, environ: Mapping[str, str] | None = None) -> Path:
    """The vault folder, resolved; one that does not exist is an error that says what to do."""
    root = vault_folder(vault, environ)
    if not root.is_dir():
        raise VaultError(f"{root}: no such vault folder; pass --vault DIR or run `vaultops init {root}`")
    return root.resolve()


def require_dot_dir(root: Path) -> Path:
    """``root`` if it has a ``.vaultops`` folder; a folder without one is refused rather than given state
    of its own."""
    if not (root / DOT_DIR).is_dir():
        raise VaultError(
            f"{root}: not a vaultops vault (no .vaultops folder); pass --vault DIR or run `vaultops init`"
        )
    return root
