"""The checks a request may add to its review: plain test commands, nothing that runs or loads code of the
request's choosing (found by an attack: `perl -e …` and `go test -exec …` ran as a request's checks)."""

from __future__ import annotations

import shlex

import pytest

from vaultops.config import ProfileConfig
from vaultops.decide.checks import request_check_problem
from vaultops.decide.route import asked_review

HOSTILE = [
    "perl -e 'exec q(touch),q(/x)'",
    "python3 -c 'getattr(__builtins__,\"ex\"+\"ec\")(1)'",
    "node -e \"process['en'+'v']\"",
    "ruby -e 'Kernel.send(:system, \"id\")'",
    "sh -c id",
    "bash test.sh --rcfile /tmp/x",
    "./evil.sh",
    "bin/run-tests",
    "/usr/bin/pytest",
    "env X=1 pytest",
    "make test SHELL=/tmp/evil",
    "go test -exec /tmp/evil ./...",
    "go test -toolexec id ./...",
    "tox -x testenv.commands=id",
    "cargo test --config 'target.x.runner=\"sh\"'",
    "npm test --script-shell=/tmp/evil",
    "pytest -p evilplugin",
    "pytest --pdbcls=os:system --pdb",
    "pytest -c /tmp/evil.ini",
    "pytest --rootdir=/",
    "pytest ../../etc/passwd",
    "pytest /etc",
    "pytest ~/secrets",
    "uv run --with evil pytest",
    "bundle exec rspec -r /tmp/evil.rb",
    "mvn test -Dexec.executable=sh",
    "gradle test -I /tmp/init.gradle",
    "npx jest --globalSetup setup.js",
    "pytest -k",
    "pytest -k --collect-only",
    "pytest 'tests/a.py; id'",
    "pytest $(id)",
    "pytеst -q",  # a Cyrillic е: not a plain name, and not pytest either
]
PLAIN = [
    "pytest -q",
    "pytest -q tests/test_app.py::test_tabs",
    "pytest -k 'not slow' -x",
    "python -m pytest -q",
    "npm test",
    "make test",
    "cargo test",
    "go test ./... -run TestTabs -race",
    "true",
]


@pytest.mark.parametrize("line", HOSTILE)
def test_a_request_may_not_add_a_check_that_runs_or_loads_what_it_chooses(line: str) -> None:
    assert request_check_problem(tuple(shlex.split(line))) is not None, line


@pytest.mark.parametrize("line", PLAIN)
def test_plain_test_commands_may_be_added(line: str) -> None:
    assert request_check_problem(tuple(shlex.split(line))) is None, line


def test_the_profiles_own_checks_are_the_persons_and_are_not_judged_so() -> None:
    checks = [["sh", "-c", "make ci"]]
    profile = ProfileConfig(command=["claude", "-p", "{prompt}"], review=True, checks=checks)
    fields = {"repo": "~/code/app", "checks": "sh -c 'make ci'"}
    assert asked_review(fields, profile) == (("sh", "-c", "make ci"),)
    refused = asked_review({**fields, "checks": "perl -e 1"}, profile)
    assert isinstance(refused, str) and refused.startswith("check `perl -e 1` is not a plain test command")
    assert "put this one in its profile's checks" in refused
