"""Every secret format through every sink vaultops writes.  The properties of redact() over them are in
``tests/unit/test_secrets_matrix.py``.

Sinks: the request's status line and result (the real tick, with an agent that prints the secret and asks
the hook for a call that carries it), the run log, the escalation record, the notice sent to a loopback
HTTP sink, the commit message and the git history, the daily note, the daemon's log and a worker's log.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from tests.support.fake_servers import JsonSink
from tests.support.helpers import INBOX, make_vault
from tests.support.secret_formats import FORMATS, WRAPPINGS
from vaultops.daemon.log import DaemonLog
from vaultops.engine.journal import DailyWriter
from vaultops.engine.tick import tick
from vaultops.render.results import DailyEntry, commit_message
from vaultops.store.notes import NoteWriter
from vaultops.vault import Vault
from vaultops.workers.logs import RotatingLog

SESSION = "0b7c3e9a-1d2f-4a5b-8c6d-7e8f9a0b1c2d"
# An agent printing Claude Code's JSON result: the secret in its text and on stderr, after asking the
# hook (the real `vaultops hook`, as Claude Code runs it) for a call whose command carries the secret (one
# that is asked for: a secret sent out over the network is denied outright, and never recorded).
AGENT = """
import json, os, shlex, subprocess, sys
secret = open(sys.argv[1], encoding="utf-8").read()
event = {"hook_event_name": "PreToolUse", "session_id": SESSION, "tool_use_id": "toolu_m",
         "cwd": os.getcwd(), "tool_name": "Bash",
         "tool_input": {"command": "ssh-keygen -q -N '' -f key -C " + shlex.quote(secret)}}
subprocess.run([sys.executable, "-m", "vaultops", "hook"], input=json.dumps(event), text=True,
               capture_output=True, check=True)
print("progress: " + secret, file=sys.stderr)
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "num_turns": 2,
                  "result": "Done. Found " + secret, "session_id": SESSION, "total_cost_usd": 0.01,
                  "permission_denials": []}))
""".replace("SESSION", repr(SESSION))
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def vault_for(tmp_path: Path, secret: str, sink: JsonSink) -> Path:
    (tmp_path / "secret.txt").write_text(secret, encoding="utf-8")
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    vault = make_vault(
        tmp_path / "v",
        "# Inbox\n\n## REQ-sec\n- type: research\n- ready: yes\nLook around the repo and summarise it.\n",
    )
    (vault / ".vaultops" / "local.toml").write_text(
        f'[profiles.worker-research]\ncommand = ["{sys.executable}", "{script}", '
        f'"{tmp_path / "secret.txt"}", "{{prompt}}"]\n'
        'output = "claude-json"\ntools = ["Bash", "Read"]\ngate = "none"\ntimeout = 60\nhealth = []\n\n'
        '[routing]\nresearch = ["worker-research"]\n\n'
        f'[notify]\nurls = ["{sink.url()}"]\n'
    )
    return vault


def everything_written(vault: Path) -> str:
    """Every file of the vault as text, and the whole git history with its patches."""
    texts = [
        p.read_bytes().decode("utf-8", "replace")
        for p in vault.rglob("*")
        if p.is_file() and ".git" not in p.parts
    ]
    history = subprocess.run(
        ["git", "log", "-p", "--all", "--format=%H%n%B"],
        cwd=vault,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return "\n".join([*texts, history])


def other_sinks(vault: Path, secret: str) -> list[str]:
    """The daily note, the commit-message builder, the daemon's log and a worker's log, each given the
    secret directly; what each wrote."""
    v = Vault.open(vault)
    daily = DailyWriter(v, NoteWriter(v), [])
    daily.entries.append(DailyEntry(datetime.now().astimezone(), f"t {secret}", INBOX, "h", "REQ-d", secret))
    [rel] = daily.flush(datetime.now().astimezone())
    stream = io.StringIO()
    DaemonLog(v.state_dir / "logs" / "daemon.jsonl", stream).info("ran", output=secret, reason=f"x {secret}")
    log = RotatingLog(v.state_dir / "workers" / "w1", 1_000_000, 2)
    log.write(f"[stderr] {secret}\n".encode())
    log.close()
    jsonl = (v.state_dir / "logs" / "daemon.jsonl").read_text()
    assert [json.loads(line)["event"] for line in jsonl.splitlines()] == ["ran"]  # still JSON
    return [
        (vault / rel).read_text(),
        commit_message([("REQ-d", "done", secret)]),
        stream.getvalue(),
        (v.state_dir / "logs" / "daemon.jsonl").read_text(),
        (v.state_dir / "workers" / "w1" / "stdout.log").read_text(),
    ]


CASES = [(name, "plain") for name in FORMATS]
CASES += [(n, w) for n in ("github-ghp", "json", "pem") for w in WRAPPINGS if w != "plain"]


@pytest.mark.parametrize(("name", "wrapping"), CASES, ids=[f"{n}-{w}" for n, w in CASES])
def test_no_sink_ever_holds_the_secret(tmp_path: Path, name: str, wrapping: str) -> None:
    text, core = FORMATS[name]
    secret = WRAPPINGS[wrapping](text, core)
    with JsonSink() as sink:
        vault = vault_for(tmp_path, secret, sink)
        tick(Vault.open(vault), wait_settle=False)
        messages = sink.messages()
    written = [
        (vault / INBOX).read_text(),
        *(p.read_text() for p in (vault / ".vaultops" / "state" / "logs" / "runs").glob("*.log")),
        (vault / ".vaultops" / "state" / "escalations.jsonl").read_text(),
        *messages,
        *other_sinks(vault, secret),
    ]
    assert messages and len(written) == 9, "a run log, a notice, and every other sink"
    for what in written:
        assert "[REDACTED" in what, what
    inbox = (vault / INBOX).read_text()
    assert "- status: escalated" in inbox and "- cost: $0.0100" in inbox and SESSION in inbox  # parsed
    for what in [*written, everything_written(vault)]:
        assert core not in _ANSI.sub("", what)

