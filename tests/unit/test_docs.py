"""The documentation site (docs/, mkdocs.yml) documents the CLI and the configuration as they are, and
nothing that is not there.

- The site builds with ``mkdocs build --strict`` (no broken link or anchor), and every page is in its nav.
- Every command and subcommand of ``vaultops.cli.build_parser()``, and every argument and option of each,
  has a help text, and the built reference page shows each; every ``vaultops …`` command a page shows exists,
  with options that command has.
- Every key the config model accepts (walking the pydantic models of ``vaultops.config``) is set in a TOML
  example of the Configuration page, every key a page's TOML example sets is accepted, and the built
  reference lists every key.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from docsite.reference import FREE_KEYS, model_keys, options, parser_commands
from vaultops.cli import build_parser
from vaultops.config import Config

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GLOBAL_OPTIONS = {"--vault", "--version", "--help"}


def pages() -> dict[str, str]:
    return {p.relative_to(DOCS).as_posix(): p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md"))}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once per module with --strict into a temp folder (about a second)."""
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    proc = subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def built_text(site: Path, page: str) -> str:
    """A built page's text without its tags, entities undone, as a reader sees it."""
    raw = (site / page / "index.html").read_text(encoding="utf-8")
    return html.unescape(re.sub(r"<[^>]+>", "", raw))


# --- the site -----------------------------------------------------------------------------------------


def test_the_site_builds_strictly(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "reference" / "cli" / "index.html").is_file()


def _nav_pages(nav: Any) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(_nav_pages(item) for item in nav))
    if isinstance(nav, dict):
        return set().union(*(_nav_pages(item) for item in nav.values()))
    return set()


def test_every_page_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    missing = sorted(set(pages()) - _nav_pages(config["nav"]))
    assert not missing, f"docs/ pages that mkdocs.yml's nav does not list (add them there): {missing}"


# --- commands -----------------------------------------------------------------------------------------


def test_every_argument_and_command_has_a_help_text() -> None:
    root = build_parser()
    bare = sorted(
        f"{path} {action.dest}".strip()
        for path, parser in [("", root), *parser_commands(root)]
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction) and not action.help
    )
    assert not bare, f"arguments without a help text (the reference shows it): {bare}"
    for path, parser in [("", root), *parser_commands(root)]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                assert all(choice.help for choice in action._choices_actions), path


def test_the_built_reference_shows_every_command_and_option(site: Path) -> None:
    text = built_text(site, "reference/cli")
    root = build_parser()
    missing, seen = [], set()
    for path, parser in [("", root), *parser_commands(root)]:
        if id(parser) in seen:  # `service install`: a choice of `service ACTION`, shown in its table
            missing += [] if path.split()[-1] in text else [path]
            continue
        seen.add(id(parser))
        missing += [f"{path}: {o}" for o in [f"vaultops {path}".strip(), *options(parser)] if o not in text]
    assert not missing, f"the built command reference does not show: {missing}"


def shown_commands() -> list[tuple[str, str]]:
    """(page, span) for each ``vaultops …`` a page shows: in inline code, and on the lines of its shell
    blocks (from ``vaultops`` on, up to a comment, a pipe or a redirection)."""
    shown = []
    for page, text in pages().items():
        if page == "architecture.md":  # the maintainer's map names modules, not commands
            continue
        blocks = re.findall(r"^```(?:sh|console|cron)\n(.*?)^```", text, re.M | re.S)
        lines = [line for block in blocks for line in block.splitlines()]
        spans = re.findall(r"`(vaultops [^`\n]+)`", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S))
        for candidate in [*spans, *lines]:
            at = re.search(r"(?:^|[\s$/])(vaultops [^#|<>]*)", candidate)
            if at:
                shown.append((page, at.group(1).split(" -- ")[0].strip()))
    return shown


def command_paths(span: str) -> tuple[list[str], list[str]]:
    """``vaultops --vault ~/v bus send TO TEXT [--priority P]`` -> (["bus send"], [its --options]);
    ``service install\\|uninstall`` gives a path per choice."""
    words = span.replace("\\|", "|").split()[1:]
    paths = [""]
    i = 0
    while i < len(words):
        if words[i] == "--vault":
            i += 2
            continue
        choices = words[i].split("|")
        if not all(re.fullmatch(r"[a-z][a-z-]*", c) for c in choices):
            break
        paths = [f"{p} {c}".strip() for p in paths for c in choices]
        i += 1
    return paths, re.findall(r"(?<![\w-])--[a-z][a-z-]*", span)


def test_every_shown_command_exists_with_its_options() -> None:
    root = build_parser()
    commands = {"": root, **dict(parser_commands(root))}
    wrong = []
    for page, span in shown_commands():
        (path, *_), shown_options = command_paths(span)
        while path and path not in commands:  # "vaultops tick that finds …": the words a command has
            path = path.rpartition(" ")[0]
        known = set(options(commands[path])) | GLOBAL_OPTIONS
        first = span.split()[1] if len(span.split()) > 1 else ""
        if not path and re.fullmatch(r"[a-z][a-z-]*", first):
            wrong.append(f"{page}: `{span}`: vaultops has no command {span.split()[1]!r}")
        wrong += [
            f"{page}: `{span}`: {path or 'vaultops'} has no {o}" for o in shown_options if o not in known
        ]
    assert not wrong, "\n".join(wrong)


def test_every_command_is_shown_somewhere_but_its_reference() -> None:
    shown = {path for _, span in shown_commands() for path in command_paths(span)[0]}
    missing = sorted({path for path, _ in parser_commands(build_parser())} - shown)
    assert not missing, f"no page but the generated reference shows: {missing}"


def test_the_prose_words_a_command_path_may_start_with_are_commands() -> None:
    # the walk above cuts "vaultops tick that finds" back to "tick": it must still refuse an unknown command
    assert command_paths("vaultops --vault ~/v bus send w1 hi --priority high") == (
        ["bus send"],
        ["--vault", "--priority"],
    )
    assert command_paths("vaultops service install\\|uninstall [--dry-run]") == (
        ["service install", "service uninstall"],
        ["--dry-run"],
    )


# --- configuration ------------------------------------------------------------------------------------


def toml_keys(text: str) -> set[str]:
    """The keys a page's TOML examples set, named as ``model_keys`` names them."""
    keys: set[str] = set()

    def walk(table: dict[str, Any], prefix: str) -> None:
        for name, value in table.items():
            path = f"{prefix}{name}"
            if path in FREE_KEYS:
                keys.add(path)
            elif path == "profiles":
                for profile in value.values():
                    walk(profile, "profiles.*.")
            elif isinstance(value, dict) and path != "profiles.*.env":
                walk(value, f"{path}.")
            else:
                keys.add(path)

    for block in re.findall(r"^```toml\n(.*?)^```", text, re.M | re.S):
        walk(tomllib.loads(block), "")
    return keys


def test_every_config_key_is_set_in_an_example_of_the_configuration_page() -> None:
    missing = sorted(set(model_keys(Config)) - toml_keys(pages()["reference/configuration.md"]))
    assert not missing, f"docs/reference/configuration.md's TOML examples do not set: {missing}"


@pytest.mark.parametrize("page", sorted(p for p, text in pages().items() if "```toml" in text))
def test_every_key_a_pages_example_sets_exists(page: str) -> None:
    unknown = sorted(toml_keys(pages()[page]) - set(model_keys(Config)))
    assert not unknown, f"docs/{page}'s TOML examples set keys vaultops does not accept: {unknown}"


def test_the_built_reference_lists_every_config_key(site: Path) -> None:
    text = built_text(site, "reference/configuration")
    sections = {key.rpartition(".")[0].replace(".*", ".NAME") for key in model_keys(Config) if "." in key}
    missing = sorted(f"[{section}]" for section in sections if f"[{section}]" not in text)
    assert not missing, f"the built configuration reference has no table for: {missing}"


@pytest.mark.parametrize("key", ["inbox.settle", "profiles.*.command", "notify.telegram.token", "routing"])
def test_the_walk_sees_every_kind_of_key(key: str) -> None:
    assert key in model_keys(Config)


# --- the README: a front page -------------------------------------------------------------------------


def test_the_readme_is_a_front_page_whose_links_lead_into_the_site() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 120, "README.md is the front page: move the detail into docs/"
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert links and all((ROOT / link).is_file() for link in links), links
