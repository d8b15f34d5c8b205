"""Test runners' options that load code or reach beyond the worktree, for every way they are started
(``pytest``, ``python -m pytest``, ``uv run pytest``): ``-p NAME`` imports a plugin module by name (code the
policy cannot see; ``-p no:NAME`` only switches one off), ``--rootdir``/``-c``/``--confcutdir`` and test
paths outside the worktree collect and run the conftest and test files there."""

from __future__ import annotations

from vaultops.policy.bash import Word
from vaultops.policy.judge import Judge, names

# pytest's options that take a value (so the value is not a test path)
_PYTEST_VALUES = names(
    "-k -m -p -c -o -W -n -r --maxfail --tb --durations --durations-min --cov --cov-report --cov-config "
    "--cov-fail-under --junitxml --junit-xml --basetemp --rootdir --deselect --ignore --ignore-glob "
    "--log-level --log-file --log-cli-level --log-format --log-date-format --import-mode --capture "
    "--color --code-highlight --confcutdir --config-file --override-ini --timeout --dist --tx --rsyncdir "
    "--html --report-log --junit-prefix --last-failed-no-failures --hypothesis-profile --hypothesis-seed "
    "--randomly-seed --reruns --count --benchmark-json --asyncio-mode --django-settings --ds "
    "--doctest-glob --pdbcls --numprocesses --maxprocesses --max-worker-restart"
)
_PLACES = ("--rootdir", "-c", "--config-file", "--confcutdir", "--rsyncdir", "-C", "--config", "--rootDir")


def _value(args: list[Word], i: int) -> tuple[str, Word | None, int]:
    """The option at ``i``, its value (``--opt=v``, ``--opt v``, ``-pNAME``) and the next index."""
    text = args[i].text
    if text.startswith("--") and "=" in text:
        option, _, value = text.partition("=")
        return option, Word(value, args[i].dynamic), i + 1
    if text in _PYTEST_VALUES or text in _PLACES:
        return text, (args[i + 1] if i + 1 < len(args) else None), i + 2
    if len(text) > 2 and text[:2] in ("-p", "-c", "-k", "-m", "-o", "-W", "-n", "-r"):
        return text[:2], Word(text[2:], args[i].dynamic), i + 1
    return text, None, i + 1


def runner_options(j: Judge, args: list[Word], pytest: bool = True) -> None:
    """Judge a test runner's plugin, settings and path options, and (``pytest``) its test paths."""
    i = 0
    paths: list[Word] = []
    while i < len(args):
        text = args[i].text
        if text == "--":
            paths.extend(args[i + 1 :])
            break
        if not text.startswith("-") or text == "-":
            paths.append(args[i])
            i += 1
            continue
        option, value, i = _value(args, i)
        if value is None:
            continue
        if option == "-p" and pytest and not value.text.startswith("no:"):
            j.add("unknown", f"pytest -p {value.text} imports the plugin module {value.text!r} by name")
        elif option in _PLACES and any(p.where != "inside" for p in j.places(value)):
            j.add("unknown", f"{j.cmd.name} {option} {value.text}: settings or tests outside the worktree")
    if pytest:
        for path in paths:
            where = Word(path.text.split("::", 1)[0], path.dynamic, path.glob)
            if any(p.where != "inside" for p in j.places(where)):
                j.add("unknown", f"collects and runs tests in {path.text}, outside the worktree")
