"""``vaultops --version`` and ``--vault`` after the command, run as a person runs them: a real process."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

from tests.support.helpers import make_vault, vaultops


def test_version_is_the_installed_packages() -> None:
    proc = vaultops("--version")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"vaultops {version('vaultops')}\n"  # pyproject.toml's, as pip installed it


def test_vault_after_the_command_is_the_same_vault(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault", "## REQ-1 Is git there?\n- type: env-check\n`which git`\n")
    before = vaultops("--vault", str(vault), "status", "--json", cwd=tmp_path)
    after = vaultops("status", "--json", "--vault", str(vault), cwd=tmp_path)
    assert before.returncode == 0, before.stderr
    assert '"REQ-1"' in before.stdout
    assert (after.returncode, after.stdout) == (0, before.stdout)
