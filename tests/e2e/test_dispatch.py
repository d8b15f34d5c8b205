"""Heavy requests through real processes: retries, fallbacks, health, budget, narrowing, concurrency."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from tests.support.helpers import FAKE_AGENT, inbox_text, routed, vault_with, vaultops
from vaultops.scan.note import parse_note

NO_HEALTH = "health = []\n"  # the template's worker-code checks `claude --version`
ONE = "# Inbox\n\n## REQ-job Summarise\n- type: code\n- ready: yes\nWrite the summary script.\n"


def profile(name: str, script: str, counter: Path, *, extra: str = "", env: str = "") -> str:
    return (
        f"[profiles.{name}]\n"
        f'command = ["{FAKE_AGENT}", "-p", "{{prompt}}", "--allowedTools", "{{tools}}"]\n'
        'tools = ["Bash", "Read", "Grep"]\ngate = "none"\n'
        f'output = "claude-json"\ntimeout = 20\n{extra if "health" in extra else extra + NO_HEALTH}'
        f'env = {{ FAKE_AGENT_FORMAT = "claude-json", FAKE_AGENT_SCRIPT = "{script}", '
        f'FAKE_AGENT_COUNTER = "{counter}"{env} }}\n\n'
    )


def routed_vault(tmp: Path, inbox: str, profiles: str, routing: str = "") -> Path:
    """A vault whose code requests go to ``profiles`` (in the order given) and nowhere else."""
    if not routing:
        names = [n for n in ("worker-code", "worker-fast") if f"[profiles.{n}]" in profiles]
        routing = "code = [" + ", ".join(f'"{n}"' for n in names) + "]"
    vault = vault_with(tmp / "v", inbox, routed(profiles, routing, "[0.05, 0.1, 0.2]"))
    cfg = vault / ".vaultops" / "config.toml"
    cfg.write_text(cfg.read_text().replace('code = ["worker-code"]\n', ""))
    return vault


def the_request(vault: Path, rid: str = "REQ-job") -> object:
    note = parse_note("i", (vault / "_System" / "COO-Inbox.md").read_bytes())
    return next(r for r in note.requests if r.id == rid)


def attempts_in_db(vault: Path) -> list[tuple[str, int, str]]:
    db = sqlite3.connect(vault / ".vaultops" / "state" / "state.db")
    return db.execute("SELECT handler, attempt, outcome FROM runs WHERE attempt > 0 ORDER BY id").fetchall()


def test_rate_limits_are_retried_then_succeed(tmp_path: Path) -> None:
    vault = routed_vault(tmp_path, ONE, profile("worker-code", "429,429,ok", tmp_path / "c1"))
    proc = vaultops("--vault", str(vault), "tick")
    assert "REQ-job: done" in proc.stdout, proc.stdout + proc.stderr
    assert "- attempts: worker-code rate-limit ×2 → worker-code done" in inbox_text(vault)
    assert "- cost: $0.0184 · 2 turns · session " in inbox_text(vault)
    assert attempts_in_db(vault) == [
        ("worker-code", 1, "rate-limit"),
        ("worker-code", 2, "rate-limit"),
        ("worker-code", 3, "done"),
    ]


def test_rate_limited_every_time_is_an_error_naming_the_status(tmp_path: Path) -> None:
    vault = routed_vault(tmp_path, ONE, profile("worker-code", "429", tmp_path / "c1"))
    vaultops("--vault", str(vault), "tick")
    r = the_request(vault)
    assert r.state.value == "error"  # type: ignore[attr-defined]
    assert "429" in r.statuses[-1].reason and "after 4 attempts" in r.statuses[-1].reason  # type: ignore[attr-defined]
    assert len(attempts_in_db(vault)) == 4


def test_unavailable_falls_back_and_the_fallback_sees_the_error(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    profiles = profile("worker-code", "503", tmp_path / "c1") + profile(
        "worker-fast", "ok", tmp_path / "c2", env=f', FAKE_AGENT_PROMPTS = "{prompts}"'
    )
    vault = routed_vault(tmp_path, ONE, profiles)
    proc = vaultops("--vault", str(vault), "tick")
    assert "REQ-job: done" in proc.stdout, proc.stdout
    assert "- outcome: done · code · heavy · high · worker-fast" in inbox_text(vault)
    assert "- attempts: worker-code unavailable → worker-fast done" in inbox_text(vault)
    [prompt] = [p.read_text() for p in prompts.iterdir()]
    assert prompt.startswith("Write the summary script.")
    assert "worker-code: API error 503" in prompt


def test_auth_failures_are_escalated_without_a_retry(tmp_path: Path) -> None:
    profiles = profile("worker-code", "401", tmp_path / "c1") + profile("worker-fast", "ok", tmp_path / "c2")
    vault = routed_vault(tmp_path, ONE, profiles)
    vaultops("--vault", str(vault), "tick")
    r = the_request(vault)
    assert r.state.value == "escalated"  # type: ignore[attr-defined]
    assert r.statuses[-1].reason.startswith("auth: worker-code")  # type: ignore[attr-defined]
    assert not (tmp_path / "c2").exists(), "the fallback never ran"


def test_a_timeout_gets_one_try_on_the_fallback(tmp_path: Path) -> None:
    profiles = profile("worker-code", "hang", tmp_path / "c1", extra="").replace(
        "timeout = 20", "timeout = 1"
    )
    profiles += profile("worker-fast", "ok", tmp_path / "c2")
    vault = routed_vault(tmp_path, ONE, profiles)
    start = time.monotonic()
    vaultops("--vault", str(vault), "tick")
    assert time.monotonic() - start < 15
    assert "- attempts: worker-code timeout → worker-fast done" in inbox_text(vault)


def test_offline_profiles_are_skipped_and_none_left_escalates(tmp_path: Path) -> None:
    health_fail = 'health = ["false"]\n'
    profiles = profile("worker-code", "ok", tmp_path / "c1", extra=health_fail) + profile(
        "worker-fast", "ok", tmp_path / "c2"
    )
    vault = routed_vault(tmp_path, ONE, profiles)
    vaultops("--vault", str(vault), "tick")
    assert "- outcome: done · code · heavy · high · worker-fast" in inbox_text(vault)
    assert not (tmp_path / "c1").exists()

    profiles = profile("worker-code", "ok", tmp_path / "d1", extra=health_fail)
    profiles += profile("worker-fast", "ok", tmp_path / "d2", extra=health_fail)
    vault2 = routed_vault(tmp_path / "second", ONE, profiles)
    vaultops("--vault", str(vault2), "tick")
    r = the_request(vault2)
    assert r.state.value == "escalated"  # type: ignore[attr-defined]
    assert r.statuses[-1].reason.startswith("no executor available (worker-code: exit 1")  # type: ignore[attr-defined]


def test_a_hung_health_check_is_bounded(tmp_path: Path) -> None:
    hang = 'health = ["sleep", "60"]\n'
    profiles = profile("worker-code", "ok", tmp_path / "c1", extra=hang) + profile(
        "worker-fast", "ok", tmp_path / "c2"
    )
    vault = routed_vault(tmp_path, ONE, profiles)
    (vault / ".vaultops" / "local.toml").open("a").write("\n[health]\ntimeout = 1\n")
    start = time.monotonic()
    vaultops("--vault", str(vault), "tick")
    assert time.monotonic() - start < 10
    assert "- outcome: done · code · heavy · high · worker-fast" in inbox_text(vault)
    status = json.loads(vaultops("--vault", str(vault), "status", "--json").stdout)
    code = next(p for p in status["profiles"] if p["name"] == "worker-code")
    assert code["state"] == "offline" and "no answer within 1 s" in code["detail"]


def test_denied_tool_calls_are_listed_under_the_result(tmp_path: Path) -> None:
    vault = routed_vault(tmp_path, ONE, profile("worker-code", "deny", tmp_path / "c1"))
    vaultops("--vault", str(vault), "tick")
    assert "- denied: Bash: rm -rf build" in inbox_text(vault)


def test_the_daily_budget_warns_then_makes_heavy_work_wait_and_light_work_goes_on(tmp_path: Path) -> None:
    text = ONE + "\n## REQ-second\n- type: code\n- ready: yes\nWrite another script.\n"
    cost = ', FAKE_AGENT_COST = "0.45"'
    vault = routed_vault(tmp_path, text, profile("worker-code", "ok", tmp_path / "c1", env=cost))
    (vault / ".vaultops" / "local.toml").open("a").write(
        "\n[limits]\ndaily_budget_usd = 1.0\nmax_concurrent = 1\n"
    )
    vaultops("--vault", str(vault), "tick")
    assert the_request(vault).state.value == "done"  # type: ignore[attr-defined]
    second = the_request(vault, "REQ-second")
    assert second.state.value == "done"  # type: ignore[attr-defined]
    assert "daily budget 90% used ($0.90 of $1.00)" in second.statuses[-1].reason  # type: ignore[attr-defined]
    with (vault / "_System" / "COO-Inbox.md").open("a") as fh:
        fh.write(
            "\n## REQ-third\n- type: code\n- ready: yes\nWrite one more script.\n\n"
            "## REQ-fourth\n- type: code\n- ready: yes\nAnd write one more function.\n"
        )
    vaultops("--vault", str(vault), "tick")
    assert the_request(vault, "REQ-third").state.value == "done"  # type: ignore[attr-defined]
    fourth = the_request(vault, "REQ-fourth")  # claimed with the third, but the third spent the rest
    assert fourth.state.value == "waiting"  # type: ignore[attr-defined]
    with (vault / "_System" / "COO-Inbox.md").open("a") as fh:
        fh.write(
            "\n## REQ-fifth\n- type: code\n- ready: yes\nWrite the last script.\n\n"
            "## REQ-light\n- type: env-check\n- ready: yes\nIs git installed?\n"
        )
    proc = vaultops("--vault", str(vault), "tick")
    assert "REQ-light: done" in proc.stdout, "light checks go on"
    fifth = the_request(vault, "REQ-fifth")
    assert fifth.state.value == "waiting"  # type: ignore[attr-defined]
    assert fifth.lock is None, "not even claimed"  # type: ignore[attr-defined]
    assert fifth.statuses[-1].reason.startswith("daily budget reached ($1.00)")  # type: ignore[attr-defined]
    assert "nothing to do" in vaultops("--vault", str(vault), "tick").stdout, "said once"
    local = vault / ".vaultops" / "local.toml"
    local.write_text(local.read_text().replace("daily_budget_usd = 1.0", "daily_budget_usd = 5.0"))
    proc = vaultops("--vault", str(vault), "tick")
    assert "REQ-fourth: done" in proc.stdout and "REQ-fifth: done" in proc.stdout, proc.stdout


def test_a_request_narrows_but_never_widens(tmp_path: Path) -> None:
    text = (
        "# Inbox\n\n"
        "## REQ-narrow\n- type: code\n- tools: Read,Grep\n- timeout: 5s\n- ready: yes\nWrite the script.\n\n"
        "## REQ-wide\n- type: code\n- tools: Read,Edit\n- ready: yes\nWrite the script.\n\n"
        "## REQ-long\n- type: code\n- timeout: 1h\n- ready: yes\nWrite the script.\n\n"
        "## REQ-other\n- type: code\n- profile: worker-research\n- ready: yes\nWrite the script.\n"
    )
    prompts = tmp_path / "p"
    vault = routed_vault(
        tmp_path,
        text,
        profile("worker-code", "ok", tmp_path / "c1", env=f', FAKE_AGENT_PROMPTS = "{prompts}"'),
    )
    vaultops("--vault", str(vault), "tick")
    assert the_request(vault, "REQ-narrow").state.value == "done"  # type: ignore[attr-defined]
    [prompt] = [p.read_text() for p in prompts.iterdir()]
    assert '"tools": [\n        "Read",\n        "Grep"\n      ]' in prompt
    assert '"timeout_seconds": 5' in prompt
    wide = the_request(vault, "REQ-wide").statuses[-1].reason  # type: ignore[attr-defined]
    assert wide == "asks for tools [profiles.worker-code] does not allow: Edit (it allows Bash, Read, Grep)"
    long_ = the_request(vault, "REQ-long").statuses[-1].reason  # type: ignore[attr-defined]
    assert long_ == "asks for a timeout of 3600 s, more than [profiles.worker-code] allows (20 s)"
    other = the_request(vault, "REQ-other").statuses[-1].reason  # type: ignore[attr-defined]
    assert other.startswith("profile 'worker-research' is not in the route for code")


def test_heavy_jobs_run_up_to_max_concurrent_at_once_and_are_recorded_in_order(tmp_path: Path) -> None:
    text = "# Inbox\n\n" + "".join(
        f"## REQ-{i}\n- type: code\n- ready: yes\nWrite script {i}.\n\n" for i in range(6)
    )
    # each run waits for the other two of its batch of three (max_concurrent), with no clock to read
    together = tmp_path / "together"
    env = f', FAKE_AGENT_TOGETHER = "{together}:3"'
    vault = routed_vault(tmp_path, text, profile("worker-code", "ok", tmp_path / "c1", env=env))
    proc = vaultops("--vault", str(vault), "tick")
    assert proc.stdout.count(": done") == 6, proc.stdout  # a batch that never met would have failed its runs
    db = sqlite3.connect(vault / ".vaultops" / "state" / "state.db")
    spans = db.execute("SELECT started, ended FROM runs WHERE attempt > 0").fetchall()
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = [sum(step for _, step in edges[: i + 1]) for i in range(len(edges))]
    assert max(running) == 3, f"3 runs at once at most, as state.db recorded them: {spans}"
    order = [line.split(":")[0] for line in proc.stdout.splitlines() if ": done" in line]
    assert order == [f"REQ-{i}" for i in range(6)]


def test_status_shows_each_profile(tmp_path: Path) -> None:
    profiles = profile("worker-code", "429,ok", tmp_path / "c1", extra='health = ["true"]\n')
    vault = routed_vault(tmp_path, ONE, profiles)
    vaultops("--vault", str(vault), "tick")
    doc = json.loads(vaultops("--vault", str(vault), "status", "--json").stdout)
    code = next(p for p in doc["profiles"] if p["name"] == "worker-code")
    assert code["state"] == "online"
    assert code["attempts_5min"] == 2 and code["error_rate_5min"] == 0.5
    assert code["active_runs"] == 0
    human = vaultops("--vault", str(vault), "status").stdout
    assert "worker-code" in human and "online" in human and "50%" in human
