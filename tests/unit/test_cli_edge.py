"""The CLI's edge: one output step, one error mapping, one way to find the vault (in-process)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from vaultops import cli
from vaultops.base import layout
from vaultops.base.errors import ConfigError, LockBusy, UnsafePath, VaultError, VaultopsError
from vaultops.commands.output import Output
from vaultops.vault import Vault


@pytest.mark.parametrize(
    ("error", "code"),
    [(VaultopsError("x"), 1), (ConfigError("x"), 2), (VaultError("x"), 2), (UnsafePath("x"), 2),
     (LockBusy("x"), 75)],
)  # fmt: skip
def test_vaultops_errors_are_one_sentence_and_their_exit_code(
    error: VaultopsError, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli._failed(error) == code
    assert capsys.readouterr().err == "vaultops: x\n"


def test_anything_else_is_a_bug_with_its_trace(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        assert cli._failed(exc) == 70
    err = capsys.readouterr().err
    assert err.startswith("vaultops: internal error: RuntimeError('boom')") and "Traceback" in err
    assert cli._failed(KeyboardInterrupt()) == 130


def test_a_report_prints_its_lines_or_its_document(capsys: pytest.CaptureFixture[str]) -> None:
    report = Output(["a", "b"], {"n": "é"}, ["careful"], 3)
    assert cli._show(report, as_json=False) == 3
    assert capsys.readouterr() == ("a\nb\n", "warning: careful\n")
    assert cli._show(report, as_json=True) == 3
    assert json.loads(capsys.readouterr().out) == {"n": "é"}
    assert cli._show(Output([]), as_json=False) == 0
    assert capsys.readouterr() == ("", "")


def test_the_vault_is_found_one_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULTOPS_VAULT", str(tmp_path))
    assert layout.named_vault(None) == tmp_path and layout.named_vault("elsewhere") == Path("elsewhere")
    assert Vault.open(None).root == tmp_path.resolve()
    monkeypatch.delenv("VAULTOPS_VAULT")
    assert layout.named_vault(None) is None and layout.vault_folder(None) == Path(".")
    with pytest.raises(VaultError, match="no such vault folder"):
        Vault.open(tmp_path / "gone")


def test_the_config_is_read_when_first_asked_for(tmp_path: Path) -> None:
    (tmp_path / ".vaultops").mkdir()
    (tmp_path / ".vaultops" / "config.toml").write_text("[inbox]\nsetle = 1\n")
    vault = Vault.open(tmp_path)  # a bad config is no error until a setting is read
    assert vault.state_dir == tmp_path.resolve() / ".vaultops" / "state"
    with pytest.raises(ConfigError, match=r"\[inbox\] setle is not a known setting"):
        vault.config  # noqa: B018
    (tmp_path / ".vaultops" / "config.toml").write_text("[inbox]\nsettle = 1\n")
    assert Vault.open(tmp_path).config.inbox.settle == 1


def _choices(parser: argparse.ArgumentParser) -> list[str]:
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return list(sub.choices)


def test_the_parser_of_one_command_is_that_of_all_cut_down() -> None:
    assert _choices(cli.build_parser()) == list(cli.COMMANDS)
    assert _choices(cli.build_parser("hook")) == ["hook"]
    assert cli._command_of(["--vault", "v", "hook"]) == "hook" == cli._command_of(["--vault=v", "hook"])
    assert cli._command_of(["tikc"]) is None and cli._command_of(["--help"]) is None


def test_a_mistyped_command_still_lists_them_all(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["tikc"])
    err = capsys.readouterr().err
    assert "invalid choice: 'tikc'" in err and "'worker'" in err
