"""Rules for the build and test drivers whose options can reach beyond the worktree: make (``--eval``, ``-f``,
``SHELL=``) and the test runners (pytest's ``--basetemp`` is emptied before the run)."""

from __future__ import annotations

import re

from vaultops.policy.bash import STDIN_PATHS, Word
from vaultops.policy.judge import Judge, flag_value, has, register
from vaultops.policy.options import read_options, table
from vaultops.policy.rules.programs import DEPLOY_WORDS, TEST_WORDS
from vaultops.policy.runners import runner_options

_MAKE = table(
    "-B -d -e -i -k -n -q -r -R -s -S -t -v -w -p -L -j? -l? -O? -C= -f=r -I= -o= -W= -E=! --always-make "
    "--debug? --environment-overrides --ignore-errors --keep-going --dry-run --just-print --recon "
    "--question --no-builtin-rules --no-builtin-variables --silent --quiet --stop --touch --version --help "
    "--print-directory --no-print-directory --jobs? --load-average? --directory= --file=r --makefile=r "
    "--include-dir= --old-file= --assume-old= --what-if= --new-file= --assume-new= --output-sync? "
    "--warn-undefined-variables --trace --print-data-base --check-symlink-times --eval=! --shuffle?"
)
# make VAR=value on the command line: these variables run or load what they name
_MAKE_CODE_VARIABLES = frozenset({"SHELL", ".SHELLFLAGS", "MAKEFLAGS", "MFLAGS", "MAKEFILES", "MAKESHELL",
                                  "MAKE", "GNUMAKEFLAGS", ".DEFAULT_GOAL"})  # fmt: skip
_PLAIN_VALUE = re.compile(r"^[A-Za-z0-9_.,:+=@%-]*$")


def _make(j: Judge, args: list[Word]) -> None:
    parsed = read_options(j, j.cmd.name, args, _MAKE)
    j.with_cwd(parsed.value("-C", "--directory"))
    makefile = parsed.value("-f", "--file", "--makefile")
    if makefile is not None and (makefile.text == "-" or makefile.text in STDIN_PATHS):
        if not any(red.op in ("<<", "<<-", "<<<") for red in j.cmd.redirects):
            j.add("unknown", "make reads its makefile from its input, which the policy cannot read")
    elif makefile is not None:
        j.run_file(makefile)
    targets = []
    for w in parsed.positionals:
        name, eq, value = w.text.partition("=")
        if not eq:
            targets.append(w.text)
        elif name.rstrip(":+?!") in _MAKE_CODE_VARIABLES or w.dynamic or not _PLAIN_VALUE.match(value):
            j.add("unknown", f"make {w.text}: a variable that may name a command to run")
    if any(t in ("install", "uninstall") for t in targets):
        j.add("system_change", "make install writes outside the worktree")
    elif any(DEPLOY_WORDS.match(t) for t in targets):
        j.add("deploy", f"make {' '.join(targets)}")
    elif any(TEST_WORDS.match(t) for t in targets):
        j.add("run_tests", "runs the tests")
    else:
        j.add("run_build", f"make {' '.join(targets)}".strip())


def _run_tests(j: Judge, args: list[Word]) -> None:
    """A test runner: pytest empties its --basetemp first and writes its reports; -o moves its cache."""
    for flag in ("--basetemp",):
        value = flag_value(args, flag)
        if value is not None:
            j.delete(value, recursive=True)
    for flag in ("--junitxml", "--junit-xml", "--report-log", "--resultlog", "--html", "--outputfile"):
        value = flag_value(args, flag)
        if value is not None:
            j.write(value)
    pytest = j.cmd.name in ("pytest", "py.test")
    runner_options(j, args, pytest)
    if has(args, "--override-ini") or (pytest and any(w.text.startswith("-o") for w in args)):
        j.add("unknown", "pytest -o overrides its settings (a cache or temp folder anywhere)")
    j.add("run_tests", "runs the tests")


register("make gmake", _make)
register(
    "pytest py.test tox nox jest vitest mocha ava karma rspec phpunit bats ctest behave nosetests "
    "nose2 trial prove cypress playwright ward hypothesis",
    _run_tests,
)
