"""Parsing first, redaction second: a secret in Claude Code's result never breaks its parse (issue 12)."""

from __future__ import annotations

import json

import pytest

from vaultops.run.outcome import read_attempt
from vaultops.run.process import ProcessResult

TOKEN = "ghp_" + "A" * 36
SESSION = "5f0c2a1e-0b8e-4d7e-9a51-3c1d2e4f5a6b"


def claude_result(text: str, denials: list[dict[str, object]] | None = None) -> str:
    doc = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 3,
        "result": text,
        "session_id": SESSION,
        "total_cost_usd": 0.0421,
        "permission_denials": denials or [],
    }
    return json.dumps(doc, separators=(",", ":"))  # one line, no spaces: a bare value runs into the next key


def proc(stdout: str, stderr: str = "", code: int = 0, secrets: tuple[str, ...] = ()) -> ProcessResult:
    return ProcessResult(("claude",), code, False, 2.0, stdout, stderr, None, secrets=secrets)


@pytest.mark.parametrize(
    ("said", "secret"),
    [
        ("Set DB_PASSWORD=hunter2-xyz in .env", "hunter2-xyz"),
        ("Call https://api.example.invalid/v1?access_token=abcdef123456&x=1", "abcdef123456"),
        (f"Pushed with {TOKEN}", TOKEN),
        ('Found {"password": "s3cr3t-value"} in the config', "s3cr3t-value"),
        ("export API_KEY=zzz-" + "9" * 12, "zzz-" + "9" * 12),
    ],
)
def test_a_secret_in_the_result_keeps_cost_turns_and_session(said: str, secret: str) -> None:
    attempt = read_attempt("claude-json", "worker-code", proc(claude_result(said)), 600)
    assert attempt.ok, attempt.detail
    assert (attempt.cost_usd, attempt.turns, attempt.session_id) == (0.0421, 3, SESSION)
    assert secret not in attempt.text and "[REDACTED:" in attempt.text


def test_stream_json_with_a_secret_on_an_earlier_line() -> None:
    lines = [
        json.dumps({"type": "assistant", "message": {"content": f"GITHUB_TOKEN={TOKEN}"}}),
        claude_result("done"),
    ]
    attempt = read_attempt("claude-json", "worker-code", proc("\n".join(lines)), 600)
    assert attempt.ok and attempt.text == "done" and attempt.session_id == SESSION


def test_denials_and_details_are_redacted_too() -> None:
    denied = [{"tool_name": "Bash", "tool_input": {"command": f"git push https://x:{TOKEN}@host/r"}}]
    attempt = read_attempt("claude-json", "worker-code", proc(claude_result("ok", denied)), 600)
    assert attempt.denials and TOKEN not in " ".join(attempt.denials)
    garbage = read_attempt("claude-json", "worker-code", proc(f"oops {TOKEN}", code=1), 600)
    assert not garbage.ok and TOKEN not in garbage.detail + garbage.text


def test_plain_text_is_redacted_with_the_runs_own_secrets() -> None:
    attempt = read_attempt("text", "p", proc("value is plain-looking-pw", secrets=("plain-looking-pw",)), 9)
    assert attempt.ok and attempt.text == "value is [REDACTED:secret]"
