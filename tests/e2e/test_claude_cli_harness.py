"""The real Claude Code CLI against the scripted fake API: proves the harness works and pins the CLI's
behaviour that vaultops relies on.  No vaultops code here: ``claude -p`` is run directly as a subprocess.

The first tests check the fake by itself (stdlib HTTP client), so they run even where the CLI is missing.
Facts captured from 2.1.197 are in fixtures/claude-code/; each test here holds for 2.1.197 and 2.1.332.
"""

from __future__ import annotations

import http.client
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_cli import (
    alive,
    claude_bin,
    claude_env,
    descendants,
    group_members,
    requires_claude,
    session_of,
)
from tests.support.fake_anthropic import Error, FakeAnthropic, Hang, Text, ToolUse
from tests.support.paths import REPO
from tests.support.waiting import wait_for

FIXTURES = REPO / "fixtures" / "claude-code"
TOOLS = [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}]


# -- the fake by itself --------------------------------------------------------------------------------------
def post(base_url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection(base_url.removeprefix("http://"), timeout=10)
    try:
        conn.request("POST", "/v1/messages?beta=true", json.dumps(body), {"content-type": "application/json"})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def sse(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for record in data.decode().strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in record.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def streamed_text(data: bytes) -> str:
    return "".join(p["delta"]["text"] for _, p in sse(data) if p.get("delta", {}).get("type") == "text_delta")


def test_fake_streams_scripted_turns_like_the_api(api: FakeAnthropic) -> None:
    api.script([Text("hello there"), ToolUse("Bash", {"command": "echo 'a b' > out.txt"})])
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, "stream": True}

    status, headers, data = post(api.base_url, body)
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    events = sse(data)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert all(name == payload["type"] for name, payload in events)
    text = streamed_text(data)
    arguments = "".join(
        p["delta"]["partial_json"] for _, p in events if p.get("delta", {}).get("type") == "input_json_delta"
    )
    assert text == "hello there"
    assert json.loads(arguments) == {"command": "echo 'a b' > out.txt"}
    assert [p["content_block"]["type"] for _, p in events if p["type"] == "content_block_start"] == [
        "text",
        "tool_use",
    ]
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert events[-2][1]["usage"]["output_tokens"] > 0

    # the script is used up: the default answer
    assert sse(post(api.base_url, body)[2])[-2][1]["delta"]["stop_reason"] == "end_turn"
    assert api.requests == [body, body]


def test_fake_errors_side_calls_and_head(api: FakeAnthropic) -> None:
    api.script(Error(429, "slow down", retry_after=7), Error(529))
    body = {"model": "m", "messages": [], "tools": TOOLS}
    status, headers, data = post(api.base_url, body)
    assert (status, headers["retry-after"]) == (429, "7")
    assert json.loads(data) == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "slow down"},
    }

    # the "session title" request is answered but consumes no turn
    title = {"type": "json_schema", "schema": {"type": "object", "properties": {"title": {"type": "string"}}}}
    status, _, data = post(api.base_url, {"model": "m", "messages": [], "output_config": {"format": title}})
    assert status == 200
    assert json.loads(streamed_text(data)) == {"title": "Fake session title"}
    assert len(api.side_requests) == 1

    status, headers, data = post(api.base_url, {**body, "tools": []})  # an agent turn under --tools ""
    assert status == 529 and "retry-after" not in headers
    assert json.loads(data)["error"]["type"] == "overloaded_error"

    conn = http.client.HTTPConnection(api.base_url.removeprefix("http://"), timeout=5)
    conn.request("HEAD", "/")
    assert conn.getresponse().status == 200
    conn.close()


def test_fake_hang_ends_when_the_server_stops() -> None:
    api = FakeAnthropic()
    api.start()
    api.script(Hang(60))
    outcome: list[BaseException | int] = []

    def call() -> None:
        try:
            outcome.append(post(api.base_url, {"model": "m", "messages": [], "tools": TOOLS})[0])
        except (OSError, http.client.HTTPException) as exc:
            outcome.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    deadline = time.monotonic() + 5
    while not api.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    api.stop()
    thread.join(5)
    assert time.monotonic() - started < 3
    assert outcome and isinstance(outcome[0], http.client.RemoteDisconnected)


def test_fake_stop_cuts_keep_alive_connections() -> None:
    api = FakeAnthropic()
    api.start()
    conn = http.client.HTTPConnection(api.base_url.removeprefix("http://"), timeout=5)
    body = json.dumps({"model": "m", "messages": [], "tools": TOOLS})
    conn.request("POST", "/v1/messages", body)
    assert conn.getresponse().read()  # HTTP/1.1: the connection stays open
    api.stop()
    with pytest.raises((OSError, http.client.HTTPException)):
        conn.request("POST", "/v1/messages", body)
        conn.getresponse().read()
    conn.close()
    assert len(api.requests) == 1


# -- the real CLI --------------------------------------------------------------------------------------------
class Run:
    """One finished ``claude -p`` run."""

    def __init__(self, proc: subprocess.CompletedProcess[str], seconds: float, workdir: Path) -> None:
        self.proc = proc
        self.seconds = seconds
        self.workdir = workdir
        self.returncode = proc.returncode
        lines = proc.stdout.strip().splitlines()
        self.output: Any = None  # json: an object; --verbose json: an array; stream-json: a list of lines
        if len(lines) == 1:
            self.output = json.loads(lines[0])
        elif lines:
            self.output = [json.loads(line) for line in lines]

    @property
    def result(self) -> dict[str, Any]:
        out = self.output[-1] if isinstance(self.output, list) else self.output
        assert isinstance(out, dict) and out["type"] == "result", self.proc.stdout[-2000:]
        return out


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "wd"
    path.mkdir()
    return path


@pytest.fixture
def claude(api: FakeAnthropic, tmp_path: Path, workdir: Path) -> Callable[..., Run]:
    """Run ``claude -p PROMPT --output-format json ARGS…`` in ``workdir`` against ``api``."""

    def run(*args: str, max_retries: int = 0, prompt: str = "do the thing", timeout: float = 30) -> Run:
        binary = claude_bin()
        assert binary is not None
        env = claude_env(api.base_url, tmp_path / "config", max_retries)
        started = time.monotonic()
        proc = subprocess.run(
            [binary, "-p", prompt, "--output-format", "json", *args],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        return Run(proc, time.monotonic() - started, workdir)

    return run


def fixture_json(name: str) -> dict[str, Any]:
    data = json.loads((FIXTURES / name).read_text())
    assert isinstance(data, dict)
    return data


# Result keys vaultops reads or reports; all are in the capture from 2.1.197 (key order varies).
RESULT_KEYS = {
    "type", "subtype", "is_error", "api_error_status", "num_turns", "result", "stop_reason", "session_id",
    "total_cost_usd", "usage", "permission_denials", "duration_ms",
}  # fmt: skip


def test_result_keys_are_in_the_captures() -> None:
    for name in ("result.json", "deny_result.json", "errors/err429_always.result.json"):
        assert fixture_json(name).keys() >= RESULT_KEYS, name


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    content = request["messages"][-1]["content"]
    return [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]


WRITE = ToolUse("Bash", {"command": "echo hello > out.txt", "description": "Write hello to out.txt"})


@requires_claude
def test_bash_tool_call_then_text(api: FakeAnthropic, claude: Callable[..., Run]) -> None:
    api.script(WRITE, Text("all done"))
    run = claude("--allowedTools", "Bash")

    assert run.returncode == 0, run.proc.stderr
    result = run.result
    assert result.keys() >= RESULT_KEYS
    assert (result["subtype"], result["is_error"], result["api_error_status"]) == ("success", False, None)
    assert result["result"] == "all done"
    assert result["num_turns"] == 2
    assert result["stop_reason"] == "end_turn"
    assert result["permission_denials"] == []
    assert (run.workdir / "out.txt").read_text() == "hello\n"
    # the second request carries the tool's result
    assert len(api.requests) == 2
    [tool_result] = tool_results(api.requests[1])
    assert tool_result["is_error"] is False
    assert all(request["stream"] is True and request["tools"] for request in api.requests)
    assert api.side_requests == []


@pytest.mark.parametrize(
    ("args", "runs"),
    [
        pytest.param([], False, id="default-mode"),
        pytest.param(["--allowedTools", "Bash"], True, id="allowedTools"),
        pytest.param(["--dangerously-skip-permissions"], True, id="skip-permissions"),
    ],
)
@requires_claude
def test_permissions_needed_for_a_writing_bash_call(
    api: FakeAnthropic, claude: Callable[..., Run], args: list[str], runs: bool
) -> None:
    """In -p mode without a hook a Bash call that writes is refused unless allowed; the run still succeeds."""
    api.script(WRITE, Text("all done"))
    run = claude(*args)

    assert run.returncode == 0
    assert run.result["is_error"] is False
    assert (run.workdir / "out.txt").exists() is runs
    denied = [d["tool_input"]["command"] for d in run.result["permission_denials"]]
    assert denied == ([] if runs else ["echo hello > out.txt"])
    [tool_result] = tool_results(api.requests[1])
    assert tool_result["is_error"] is not runs


@requires_claude
def test_verbose_json_is_an_array_ending_with_the_result(
    api: FakeAnthropic, claude: Callable[..., Run]
) -> None:
    api.script([Text("first block"), Text("second block")])
    run = claude("--verbose")

    assert run.returncode == 0
    assert isinstance(run.output, list)
    assert (run.output[0]["type"], run.output[0]["subtype"]) == ("system", "init")
    assert run.output[0]["claude_code_version"]
    assert run.output[-1]["type"] == "result"
    # one "assistant" entry per content block, and `result` is the LAST text block, not all of them
    assert [m["message"]["content"][0]["text"] for m in run.output if m["type"] == "assistant"] == [
        "first block",
        "second block",
    ]
    assert run.result["result"] == "second block"
    assert run.result["num_turns"] == 1


@pytest.mark.parametrize(
    ("status", "max_retries"),
    [(429, 0), (429, 1), (503, 0), (529, 0), (401, 0), (500, 0)],
)
@requires_claude
def test_api_error_after_retries(
    api: FakeAnthropic, claude: Callable[..., Run], status: int, max_retries: int
) -> None:
    """Exit 1, but stdout still holds the result: judge by is_error (subtype says "success")."""
    api.script(*[Error(status, "fake trouble")] * 5)
    run = claude(max_retries=max_retries)

    assert run.returncode == 1
    assert (run.result["is_error"], run.result["api_error_status"]) == (True, status)
    assert run.result["subtype"] == "success"
    assert str(status) in run.result["result"]
    assert len(api.requests) == max_retries + 1


@requires_claude
def test_connection_refused(api: FakeAnthropic, claude: Callable[..., Run]) -> None:
    api.stop()
    run = claude()

    assert run.returncode == 1
    assert (run.result["is_error"], run.result["api_error_status"]) == (True, None)
    assert run.result["result"].startswith("API Error")
    # the same shape as the capture from 2.1.197
    captured = fixture_json("errors/connection_refused.result.json")
    assert (captured["is_error"], captured["api_error_status"]) == (True, None)


@requires_claude
def test_a_retried_429_shows_in_stream_json_then_succeeds(
    api: FakeAnthropic, claude: Callable[..., Run]
) -> None:
    api.script(Error(429), Text("ok"))
    run = claude("--output-format", "stream-json", "--verbose", max_retries=1)  # the later flag wins

    assert run.returncode == 0
    lines = run.output
    retries = [line for line in lines if line.get("subtype") == "api_retry"]
    assert [(r["attempt"], r["max_retries"], r["error_status"]) for r in retries] == [(1, 1, 429)]
    assert (lines[-1]["type"], lines[-1]["is_error"], lines[-1]["result"]) == ("result", False, "ok")


@requires_claude
def test_a_long_retry_after_fails_at_once(api: FakeAnthropic, claude: Callable[..., Run]) -> None:
    api.script(*[Error(429, retry_after=120)] * 3)
    run = claude(max_retries=3)

    assert run.returncode == 1
    assert run.result["api_error_status"] == 429
    assert len(api.requests) == 1
    assert run.seconds < 10


DENY_HOOK = """\
import json, sys
payload = json.load(sys.stdin)
with open(sys.argv[1], "w") as fh:
    json.dump(payload, fh)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                         "permissionDecisionReason": "vaultops: not on the list"}}))
"""


@requires_claude
def test_pretooluse_hook_denies(
    api: FakeAnthropic, claude: Callable[..., Run], workdir: Path, tmp_path: Path
) -> None:
    hook = tmp_path / "deny_hook.py"
    hook.write_text(DENY_HOOK)
    payload_file = tmp_path / "payload.json"
    command = " ".join(shlex.quote(str(part)) for part in (sys.executable, hook, payload_file))
    (workdir / ".claude").mkdir()
    settings = {
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}
    }
    (workdir / ".claude" / "settings.json").write_text(json.dumps(settings))
    api.script(WRITE, Text("finished anyway"))
    run = claude("--allowedTools", "Bash")  # the hook's deny beats the allow list

    assert run.returncode == 0
    assert (run.result["is_error"], run.result["result"]) == (False, "finished anyway")
    assert not (workdir / "out.txt").exists()
    [denial] = run.result["permission_denials"]
    assert denial["tool_name"] == "Bash"
    assert denial["tool_input"] == WRITE.input
    [tool_result] = tool_results(api.requests[1])
    assert tool_result["is_error"] is True
    assert "vaultops: not on the list" in tool_result["content"]
    assert tool_result["tool_use_id"] == denial["tool_use_id"]
    # what the hook got on stdin: the captured payload's keys
    payload = json.loads(payload_file.read_text())
    assert payload.keys() >= fixture_json("hook_payload.json").keys()
    assert (payload["hook_event_name"], payload["tool_name"]) == ("PreToolUse", "Bash")
    assert payload["tool_input"] == WRITE.input
    assert Path(payload["cwd"]).resolve() == workdir.resolve()


# -- killing a run -------------------------------------------------------------------------------------------
def start_claude(api: FakeAnthropic, tmp_path: Path, workdir: Path, *args: str) -> subprocess.Popen[str]:
    binary = claude_bin()
    assert binary is not None
    return subprocess.Popen(
        [binary, "-p", "do the thing", "--output-format", "json", *args],
        cwd=workdir,
        env=claude_env(api.base_url, tmp_path / "config"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def kill_group(proc: subprocess.Popen[str], grace: float = 3) -> tuple[str, str]:
    """SIGTERM to the process group, then SIGKILL after ``grace``; the output."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        return proc.communicate(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return proc.communicate(timeout=10)


@requires_claude
def test_a_hanging_api_call_can_be_killed(api: FakeAnthropic, tmp_path: Path, workdir: Path) -> None:
    api.script(Hang(120))
    proc = start_claude(api, tmp_path, workdir)
    try:
        # the CLI is now waiting for an answer that does not come
        assert wait_for(lambda: api.requests), "the CLI asked the API"
        time.sleep(0.3)  # the test's patience
        assert proc.poll() is None
        members = group_members(proc.pid)
        assert proc.pid in members
        started = time.monotonic()
        out, _ = kill_group(proc)
        assert time.monotonic() - started < 5
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # SIGTERM: exit 143 (the CLI handles it) or death by signal; no result is printed
    assert proc.returncode in (128 + signal.SIGTERM, -signal.SIGTERM, -signal.SIGKILL)
    assert out.strip() == ""
    assert wait_for(lambda: not group_members(proc.pid), timeout=5), "the CLI's group gone"
    assert not any(alive(pid) for pid in members)


@requires_claude
def test_bash_tool_processes_escape_the_process_group(
    api: FakeAnthropic, tmp_path: Path, workdir: Path
) -> None:
    """The Bash tool runs its command in a NEW session: killing the CLI's process group leaves it running.

    To stop a run for sure, collect the CLI's descendants (/proc) first and kill their groups too."""
    marker = "47.25"
    # not a plain `sleep 47`: newer CLIs refuse a standalone long sleep
    command = f"{shlex.quote(sys.executable)} -c 'import time; time.sleep({marker})'"
    api.script(ToolUse("Bash", {"command": command, "description": "wait"}), Text("never"))
    proc = start_claude(api, tmp_path, workdir, "--allowedTools", "Bash")
    tree: list[int] = []

    def tool_pid() -> int | None:
        for pid in descendants(proc.pid):
            try:
                if marker in Path(f"/proc/{pid}/cmdline").read_text():
                    return pid
            except FileNotFoundError:
                pass
        return None

    try:
        assert wait_for(tool_pid), "the Bash tool's process started"
        sleeper = tool_pid()
        assert sleeper is not None
        tree = descendants(proc.pid)
        assert session_of(sleeper) != proc.pid
        assert sleeper not in group_members(proc.pid)

        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=10)
        # the kill has reached all of the CLI's group
        assert wait_for(lambda: not group_members(proc.pid), timeout=5), "the CLI's group gone"
        assert alive(sleeper), "the tool's process died with the CLI's group"

        for pgid in {group for pid in tree if (group := group_of(pid)) is not None}:
            os.killpg(pgid, signal.SIGKILL)
        assert wait_for(lambda: not any(alive(pid) for pid in tree), timeout=5), "the whole tree gone"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for pid in tree:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
