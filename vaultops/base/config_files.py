"""The one reader of a vault's config files (``.vaultops/config.toml``, then ``local.toml``): their TOML.

``vaultops.config`` validates what this reads; the policy gate's hook reads just the ``[policy]`` tables
through it, and so never pays for importing pydantic.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from vaultops.base.errors import ConfigError
from vaultops.base.layout import CONFIG_FILES


class UnreadableConfig(ConfigError):
    """A config file that exists but cannot be read as TOML; ``why`` says what is wrong with it."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why


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
