"""MkDocs hook: the reference pages' markers become the tables ``docsite.reference`` draws from the code,
at every build, so the reference says what this checkout's vaultops does."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # MkDocs loads a hook by its path alone

from docsite.reference import cli_reference, config_reference, example_comments
from vaultops.cli import build_parser
from vaultops.config import Config

COMMANDS = "<!-- reference: commands -->"
SETTINGS = "<!-- reference: settings -->"


def on_page_markdown(markdown: str, **_: Any) -> str:
    if COMMANDS in markdown:
        markdown = markdown.replace(COMMANDS, cli_reference(build_parser()))
    if SETTINGS in markdown:
        markdown = markdown.replace(SETTINGS, config_reference(Config, example_comments(markdown)))
    return markdown
