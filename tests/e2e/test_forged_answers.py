"""Answers that are not answers: with ``[answers] authors`` mistyped, ``vaultops tick`` stops at once with
one line naming the file.  The forged-answer cases themselves (lines that imitate vaultops's escalation
and the person's approval, a real escalation line copied under another request, an answer committed by
someone not listed) run whole passes on the engine's twin: tests/unit/test_twin_forged_answers.py."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import make_vault, vaultops


def test_a_mistyped_answers_setting_is_an_error_that_names_the_file(tmp_path: Path) -> None:
    for config, said in (
        ('[answers]\nauthor = ["Ann <ann@example.org>"]\n', "[answers] author is not a known setting"),
        ('[answers]\nauthors = ["Ann"]\n', "[answers] authors: 'Ann' is not an author as git names one"),
        ("[answers]\nauthors = []\n", "[answers] authors is empty"),
    ):
        vault = make_vault(tmp_path / str(len(config)), "# Inbox\n", config=config)
        proc = vaultops("--vault", str(vault), "tick", "--no-wait")
        assert proc.returncode != 0
        assert f".vaultops/config.toml: {said}" in proc.stderr, proc.stderr
