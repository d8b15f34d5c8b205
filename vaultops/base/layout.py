"""Where a vault and its files are, found without its configuration: the standard library only.

The one way every command finds its vault (``--vault``, else ``$VAULTOPS_VAULT``, else the current folder),
the fixed paths inside it, and the one reader of its config files' TOML.  ``vaultops.config`` validates what
this reads; the policy gate's hook reads just the ``[policy]`` tables through it, and so never pays for
importing pydantic.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vaultops.base.errors import ConfigError, VaultError

VAULT_ENV = "VAULTOPS_VAULT"
DOT_DIR = ".vaultops"
STATE_DIR = ".vaultops/state"
STATE_DB = Path(STATE_DIR) / "state.db"
CONFIG_FILE = ".vaultops/config.toml"
LOCAL_FILE = ".vaultops/local.toml"
CONFIG_FILES = (CONFIG_FILE, LOCAL_FILE)  # shared, then local over it
DEFAULT_INBOX = "_System/COO-Inbox.md"
DEFAULT_QUEUE = "executor-queue"


class UnreadableConfig(ConfigError):
    """A config file that exists but cannot be read as TOML; ``why`` says what is wrong with it."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why


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


def read_toml(path: Path) -> dict[str, Any]:
    """One config file's tables; {} when it does not exist."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise UnreadableConfig(path, f"not valid TOML ({exc}); fix the syntax") from None
    except OSError as exc:
        raise UnreadableConfig(path, f"cannot be read ({exc.strerror})") from None


def config_layers(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Each config file of the vault with its tables: config.toml, then local.toml (which wins)."""
    return [(root / name, read_toml(root / name)) for name in CONFIG_FILES]


def policy_tables(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Each config file's ``[policy]`` table, in the order they apply, as written (not yet checked)."""
    tables: list[tuple[Path, dict[str, Any]]] = []
    for path, data in config_layers(root):
        section = data.get("policy", {})
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: [policy] must be a table of action = verdict")
        tables.append((path, section))
    return tables
