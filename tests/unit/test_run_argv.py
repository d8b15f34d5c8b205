"""Argv templates: checking, filling, and what a real child process receives."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from vaultops.base.argv import PLACEHOLDERS, check_template, fill_argv
from vaultops.base.redact import redact
from vaultops.run.process import run_process

PRINT_ARGS = [sys.executable, "-c", "import sys; print(repr(sys.argv[1:]))"]


def test_a_good_template_has_no_problems() -> None:
    argv = ["claude", "-p", "{prompt}", "--title={title}", "{{literal}}", "{id}-{type}"]
    argv += ["{workdir}{vault}{file}"]
    assert check_template(argv) == []


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        ([], "the command is empty"),
        (["a", "{foo}"], "argument 1: unknown placeholder {foo}"),
        (["a", "{prompt.__class__}"], "argument 1: unknown placeholder {prompt.__class__}"),
        (["a", "{prompt[0]}"], "argument 1: unknown placeholder {prompt[0]}"),
        (["a", "{prompt!r}"], "argument 1: unknown placeholder {prompt!r}"),
        (["a", "{PROMPT}"], "argument 1: unknown placeholder {PROMPT}"),
        (["a", "{}"], "argument 1: unknown placeholder {}"),
        (["a", "x{"], "argument 1: unmatched '{' (write {{ or }} for a brace)"),
        (["a", "}x"], "argument 1: unmatched '}' (write {{ or }} for a brace)"),
        (["{prompt}"], "argument 0 (the program) may not contain a placeholder"),
        (["a", 5], "argument 1 is not a string: 5"),
    ],
)
def test_problems(argv: list[str], problem: str) -> None:
    assert problem in check_template(argv)


def test_fill_replaces_inside_single_arguments() -> None:
    argv = ["agent", "-p", "{prompt}", "--title={title}", "{{x}}", "}}{id}{{"]
    values = {"prompt": "fix it; rm -rf / {title}", "title": "T {{", "id": "REQ-1"}
    expected = ["agent", "-p", "fix it; rm -rf / {title}", "--title=T {{", "{x}", "}REQ-1{"]
    assert fill_argv(argv, values) == expected


def test_fill_refuses_a_bad_template_or_a_missing_value() -> None:
    with pytest.raises(ValueError, match="unknown placeholder"):
        fill_argv(["a", "{prompt.__class__}"], {"prompt": "x"})
    with pytest.raises(ValueError, match=r"no value for placeholder \{title\}"):
        fill_argv(["a", "{title}"], {"prompt": "x"})


def test_argument_zero_may_hold_literal_braces() -> None:
    assert fill_argv(["{{weird}}-agent"], {}) == ["{weird}-agent"]


NASTY = st.one_of(
    st.text(alphabet=st.characters(blacklist_characters="\0", blacklist_categories=("Cs",))),
    st.sampled_from(
        [
            "; rm -rf /",
            "$(touch /tmp/pwned)",
            "`id`",
            "a\nb\r\nc",
            "' \" \\",
            "{prompt}",
            "{{",
            "}",
            "--help",
            "-c",
            "*",
            "~",
            "$HOME",
            "a b  c",
            "",
            " ",
            "| cat /etc/passwd",
            "&& reboot",
        ]
    ),
)
VALUES = st.fixed_dictionaries({name: NASTY for name in PLACEHOLDERS})
PIECES = ["-p", "{prompt}", "--title={title}", "{id}:{type}", "{{x}}", "{workdir}/{file}", "{vault}", ""]
TEMPLATES = st.lists(st.sampled_from(PIECES), max_size=6).map(lambda rest: ["agent", *rest])


@given(TEMPLATES, VALUES)
def test_fill_never_changes_the_number_of_arguments(template: list[str], values: dict[str, str]) -> None:
    filled = fill_argv(template, values)
    assert len(filled) == len(template) and filled[0] == "agent"


@given(TEMPLATES, VALUES)
def test_a_value_never_becomes_an_option(template: list[str], values: dict[str, str]) -> None:
    filled = fill_argv(template, values)
    for piece, arg in zip(template, filled, strict=True):
        assert not arg.startswith("-") or piece.startswith("-"), (piece, arg)


@pytest.mark.parametrize(
    "text", ["- [ ] add a docstring", "--dangerously-skip-permissions", "--settings=/tmp/x.json", "-"]
)
def test_a_request_that_begins_with_a_dash_is_a_plain_argument(text: str) -> None:
    # A checklist request once failed every run: Claude Code read `- [ ] …` as an unknown option.
    assert fill_argv(["claude", "-p", "{prompt}", "{title}"], {"prompt": text, "title": text}) == [
        "claude",
        "-p",
        " " + text,
        " " + text,
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(NASTY, NASTY)
def test_the_child_receives_exactly_the_values(tmp_path: Path, prompt: str, title: str) -> None:
    expected = [" " + prompt if prompt.startswith("-") else prompt, f"--title={title}"]
    # The output is redacted; a value that happens to look like a secret is not this test's subject.
    assume(redact(repr(expected) + "\n") == repr(expected) + "\n")
    argv = fill_argv([*PRINT_ARGS, "{prompt}", "--title={title}"], {"prompt": prompt, "title": title})
    result = run_process(argv, cwd=tmp_path, env={"PYTHONIOENCODING": "utf-8", "PYTHONUTF8": "1"}, timeout=30)
    assert result.start_error is None and result.exit_code == 0, result.stderr
    assert ast.literal_eval(result.stdout) == expected
