"""The daemon's config read again when its files change (``daemon.reload``), and whose file a broken one is:
a shared config.toml (pushed from anywhere: the daemon keeps going) or this machine's local.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultops.base.errors import ConfigError
from vaultops.config import SharedConfigError, load_config
from vaultops.daemon.reload import ConfigKeeper, keep_problem
from vaultops.engine.problems import CONFIG_KEY, config_problem
from vaultops.store.state import StateDB

SHARED = '[agent]\nname = "hermes-coo"\n\n[inbox]\nsettle = 0\n'


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / ".vaultops").mkdir()
    (tmp_path / ".vaultops" / "config.toml").write_text(SHARED)
    (tmp_path / ".vaultops" / "local.toml").write_text("")
    return tmp_path


def shared(root: Path, text: str) -> None:
    (root / ".vaultops" / "config.toml").write_text(text)


def local(root: Path, text: str) -> None:
    (root / ".vaultops" / "local.toml").write_text(text)


@pytest.mark.parametrize(
    "text",
    [
        SHARED.replace("settle", "setle"),  # the typo pushed from the phone
        SHARED + "[inbox\n",  # not TOML at all
        SHARED.replace("settle = 0", 'settle = "soon"'),  # a bad value
    ],
)
def test_a_broken_shared_config_is_the_shared_files_problem(root: Path, text: str) -> None:
    shared(root, text)
    with pytest.raises(SharedConfigError) as raised:
        load_config(root, {})
    assert raised.value.message.startswith(str(root / ".vaultops" / "config.toml"))
    assert load_config(root, {}, shared=False).agent.name != "", "local.toml alone still loads"


@pytest.mark.parametrize("text", ["[inbox]\nsetle = 0\n", "[inbox\n", '[agent]\nname = "two words"\n'])
def test_a_broken_local_config_is_not_the_shared_files(root: Path, text: str) -> None:
    local(root, text)
    with pytest.raises(ConfigError) as raised:
        load_config(root, {})
    assert not isinstance(raised.value, SharedConfigError)
    assert str(root / ".vaultops" / "local.toml") in raised.value.message


def test_the_keeper_keeps_the_last_good_config_and_picks_up_the_fix(root: Path) -> None:
    keeper = ConfigKeeper(root, load_config(root))
    assert keeper.check().config is None and not keeper.check().changed, "nothing changed: nothing new"
    shared(root, SHARED.replace("settle", "setle"))
    broken = keeper.check()
    assert broken.config is None and broken.changed and "setle" in broken.problem
    assert "keeps running on the config it last loaded" in broken.problem
    assert keeper.good.inbox.settle == 0
    again = keeper.check()
    assert not again.changed and again.problem == broken.problem, "said once, not at every look"
    shared(root, SHARED.replace('"hermes-coo"', '"hermes-two"'))
    fixed = keeper.check()
    assert fixed.changed and fixed.problem == "" and fixed.config is not None
    assert fixed.config.agent.name == "hermes-two" and keeper.good.agent.name == "hermes-two"


def test_a_keeper_started_waiting_hands_over_the_config_once_it_loads(root: Path) -> None:
    shared(root, SHARED.replace("settle", "setle"))
    keeper = ConfigKeeper(root, load_config(root, shared=False), "config.toml: setle")
    assert keeper.waiting and keeper.check().config is None
    shared(root, SHARED)
    fixed = keeper.check()
    assert fixed.config is not None and not keeper.waiting


def test_the_problem_is_kept_as_one_of_this_machines_and_a_new_one_starts_anew(tmp_path: Path) -> None:
    state = StateDB(tmp_path / "state.db")
    keep_problem(state, "config.toml: [inbox] setle is not a known setting")
    first = config_problem(state.get(CONFIG_KEY))
    assert first is not None and "setle" in first[0]
    keep_problem(state, "config.toml: [inbox] setle is not a known setting")
    assert config_problem(state.get(CONFIG_KEY)) == first, "the same incident keeps its start"
    keep_problem(state, "config.toml: [inbox] settl is not a known setting")
    second = config_problem(state.get(CONFIG_KEY))
    assert second is not None and "settl " in second[0]
    keep_problem(state, "")
    assert config_problem(state.get(CONFIG_KEY)) is None
    state.set(CONFIG_KEY, "{not json")
    assert config_problem(state.get(CONFIG_KEY)) is None, "damaged: no problem, rewritten at the next look"


def test_a_config_file_gone_keeps_the_last_good_config_rather_than_the_defaults(root: Path) -> None:
    """The whole .vaultops folder deleted, or a checkout half done: defaults would run a config nobody
    wrote (found by test_faults_disk_log, whose daemon lost its profiles so)."""
    local(root, '[agent]\nname = "mine"\n')
    keeper = ConfigKeeper(root, load_config(root))
    (root / ".vaultops" / "local.toml").unlink()
    gone = keeper.check()
    assert gone.config is None and "local.toml is gone" in gone.problem
    assert keeper.good.agent.name == "mine"
    local(root, '[agent]\nname = "mine"\n')
    back = keeper.check()
    assert back.problem == "" and back.changed


def test_an_edit_of_either_config_file_wakes_the_daemon(tmp_path: Path) -> None:
    from vaultops.daemon.events import VaultEvents
    from vaultops.vault import Vault

    root = tmp_path / "v"
    root.mkdir()
    (root / ".vaultops").mkdir()
    events = VaultEvents(Vault(root, load_config(root)), lambda why: None, closes_reported=True, quiet=0.0)
    for name in ("config.toml", "local.toml"):
        assert events.why(str(root / ".vaultops" / name)) == "config", name
    assert events.why(str(root / ".vaultops" / "state" / "state.db")) is None


def test_a_reloaded_config_that_moves_the_inbox_is_watched_where_it_is_now(tmp_path: Path) -> None:
    """A running daemon watched the inbox's old folder until it was restarted (issue 29)."""
    from vaultops.config import Config
    from vaultops.daemon.events import watch
    from vaultops.daemon.log import DaemonLog
    from vaultops.daemon.loop import Daemon
    from vaultops.vault import Vault

    root = tmp_path / "v"
    (root / ".vaultops").mkdir(parents=True)
    vault = Vault(root, load_config(root))
    daemon = Daemon(vault, DaemonLog(tmp_path / "daemon.jsonl"))
    daemon.watching = watch(vault, daemon.wake, 0.0)
    try:
        moved = Config.model_validate({"inbox": {"path": "Requests/Inbox.md"}})
        daemon.apply_config(moved)
        assert daemon.watching[1].inbox == root / "Requests" / "Inbox.md"
    finally:
        observer, handler = daemon.watching
        observer.stop()
        handler.close()
        observer.join(timeout=5)
