"""The vault's name in messages' ``obsidian://`` links (issue 29): by default this machine's folder name,
which is wrong when the phone that opens the link calls the vault something else; ``[notify] vault_name``
names it, and a value no vault can have is one sentence naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.halt import DASHBOARD, with_props
from tests.support.helpers import ROTATE
from tests.support.twin import TwinFleet, no_processes  # noqa: F401
from vaultops.base.errors import ConfigError
from vaultops.config import load_config

SHARED = '[agent]\nname = "hermes-coo"\n'
twin = pytest.mark.usefixtures("no_processes")


@twin
def test_the_links_name_the_vault_as_configured(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}", extra='[notify]\nvault_name = "Work Vault"\n')
    fleet.tick()
    [notice] = fleet[0].chat.sent
    assert "obsidian://open?vault=Work%20Vault&file=_System%2FCOO-Inbox" in notice.body, notice.body
    assert "vault=machine0" not in notice.body, "not the sending machine's folder"
    assert notice.title.startswith("Work Vault: "), notice.title


@twin
def test_unset_it_is_this_machines_folder_name(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}")
    fleet.tick()
    [notice] = fleet[0].chat.sent
    assert "obsidian://open?vault=machine0&" in notice.body


@pytest.mark.parametrize("name", ["Work/Vault", "Work\\\\Vault", "Work\\u0007Vault"])
def test_a_name_no_vault_can_have_is_one_sentence(tmp_path: Path, name: str) -> None:
    (tmp_path / ".vaultops").mkdir()
    (tmp_path / ".vaultops" / "config.toml").write_text(f'{SHARED}\n[notify]\nvault_name = "{name}"\n')
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path, {})
    said = raised.value.message
    assert "config.toml" in said and "vault_name" in said and "vault switcher" in said, said
    assert "\n" not in said.strip(), said


def test_spaces_around_the_name_are_not_part_of_it(tmp_path: Path) -> None:
    (tmp_path / ".vaultops").mkdir()
    (tmp_path / ".vaultops" / "config.toml").write_text(f'{SHARED}\n[notify]\nvault_name = " Notes "\n')
    assert load_config(tmp_path, {}).notify.vault_name == "Notes"


@twin
def test_the_halt_is_told_with_the_vaults_name_too(tmp_path: Path) -> None:
    fleet = TwinFleet(tmp_path, 1, "# Inbox\n", extra='[notify]\nvault_name = "Work Vault"\n')
    fleet.tick()
    machine = fleet[0]
    machine.save(DASHBOARD, with_props("halt: yes")(machine.text(DASHBOARD)))
    fleet.tick()
    [notice] = [n for n in machine.chat.sent if "HALTED" in n.title]
    assert notice.title.startswith("Work Vault: "), notice.title
    assert "obsidian://open?vault=Work%20Vault&" in notice.body, notice.body
