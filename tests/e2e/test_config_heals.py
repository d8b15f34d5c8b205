"""A config typo pushed from the phone, and its fix: the fleet keeps running and heals without a restart.

Issue 29 found a daemon that carried on silently with a config that no longer loaded, exited 2 on its next
start, and, stopped, never pulled the fix.  Here a real daemon on a clone of a bare remote; the person edits
``.vaultops/config.toml`` on their own clone and pushes, as obsidian-git does."""

from __future__ import annotations

from pathlib import Path

from tests.support.clones import Fleet, person_push, request_block
from tests.support.daemon_helpers import Daemon
from tests.support.escalations import FAST, push_config_typo, warnings_of
from tests.support.helpers import INBOX, fake_profiles_config, git, vault_with
from tests.support.waiting import wait_for
from vaultops.scan.note import parse_note


def state_on(vault: Path, rid: str) -> str | None:
    note = parse_note(INBOX, (vault / INBOX).read_bytes())
    return next((r.state.value for r in note.requests if r.id == rid), None)


def test_a_typo_pushed_to_a_running_fleet_is_said_once_runs_on_and_heals(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 1, "# Inbox\n", extra=FAST)
    machine, phone = fleet.clones[0], fleet.person()
    daemon = Daemon(machine, fleet.env)
    try:
        daemon.wait_ready()
        push_config_typo(phone, typo=True)
        assert wait_for(lambda: any("setle" in w for w in warnings_of(daemon))), daemon.explain()
        dashboard = machine / "_System" / "vaultops.md"
        assert wait_for(lambda: dashboard.exists() and "setle" in dashboard.read_text()), daemon.explain()
        person_push(phone, lambda t: t + request_block("REQ-during", "Summarise the week."))
        assert wait_for(lambda: state_on(machine, "REQ-during") == "done"), daemon.explain()
        push_config_typo(phone, typo=False)
        assert wait_for(lambda: "setle" not in dashboard.read_text()), daemon.explain()
        assert daemon.proc.poll() is None, "the daemon never stopped"
        # an edit of this machine's own local.toml is picked up too, without a restart
        local = machine / ".vaultops" / "local.toml"
        local.write_text(local.read_text().replace('name = "agent0"', 'name = "agent0b"'))
        person_push(phone, lambda t: t + request_block("REQ-after", "Summarise the month."))
        assert wait_for(lambda: state_on(machine, "REQ-after") == "done"), daemon.explain()
        assert "agent0b" in (machine / INBOX).read_text().split("## REQ-after")[1]
    finally:
        assert daemon.stop() == 0, daemon.errors()
    said = [w for w in warnings_of(daemon) if "setle" in w]
    assert len(said) == 1, said
    assert "keeps running on the config it last loaded" in said[0]


def test_a_daemon_started_on_a_broken_shared_config_waits_pulling_and_starts_on_the_fix(
    tmp_path: Path,
) -> None:
    fleet = Fleet(tmp_path, 1, "# Inbox\n", extra=FAST)
    machine, phone = fleet.clones[0], fleet.person()
    push_config_typo(phone, typo=True)
    person_push(phone, lambda t: t + request_block("REQ-a", "Summarise the week."))
    git(machine, "pull", "-q")
    daemon = Daemon(machine, fleet.env)
    try:
        daemon.wait_ready()
        assert wait_for(lambda: any("runs nothing until it does" in w for w in warnings_of(daemon)))
        assert daemon.proc.poll() is None, "it waits; it does not exit 2"
        assert state_on(machine, "REQ-a") == "open", "nothing runs on a config that does not load"
        push_config_typo(phone, typo=False)
        assert wait_for(lambda: state_on(machine, "REQ-a") == "done"), daemon.explain()
    finally:
        assert daemon.stop() == 0, daemon.errors()
    assert fleet.runs() == {"REQ-a": 1}


def test_a_broken_local_toml_still_stops_the_daemon_with_exit_2(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path, 1, "# Inbox\n", extra=FAST + "[limits]\nmax_concurent = 1\n")
    daemon = Daemon(fleet.clones[0], fleet.env)
    assert daemon.proc.wait(timeout=30) == 2
    assert "local.toml" in daemon.errors() and "max_concurent" in daemon.errors()


def test_a_config_edit_wakes_the_daemon_and_a_moved_inbox_is_watched_where_it_is_now(tmp_path: Path) -> None:
    """The inbox moved (git saw the rename), the person sets its new path in local.toml, and a request saved
    there runs: no restart, no timer (reconcile is an hour), no remote.  Which file events wake the daemon
    and what it watches after the reload are tests/unit/test_config_reload.py's."""
    local = (
        fake_profiles_config(timeout=60) + "[inbox]\nsettle = 0\n\n[daemon]\nreconcile = 3600\ngrace = 10\n"
    )
    vault = vault_with(tmp_path / "v", "# Inbox\n", local)
    log = tmp_path / "agent.log"
    daemon = Daemon(vault, {"FAKE_AGENT_LOG": str(log)})
    try:
        daemon.wait_ready()
        (vault / "Requests").mkdir()
        git(vault, "mv", INBOX, "Requests/Inbox.md")
        git(vault, "commit", "-qm", "person: the inbox moved")
        assert wait_for(lambda: any("Requests/Inbox.md" in w for w in warnings_of(daemon))), daemon.explain()
        path = vault / ".vaultops" / "local.toml"
        path.write_text(
            path.read_text().replace("settle = 0\n", 'settle = 0\npath = "Requests/Inbox.md"\n', 1)
        )
        assert wait_for(lambda: '"config reloaded"' in daemon.log.read_text()), daemon.explain()
        moved = vault / "Requests" / "Inbox.md"
        moved.write_text(moved.read_text() + request_block("REQ-moved", "Summarise the move."))
        assert wait_for(lambda: "- status: done" in moved.read_text()), daemon.explain()
    finally:
        assert daemon.stop() == 0, daemon.errors()
    assert log.read_text().split() == ["REQ-moved"]
