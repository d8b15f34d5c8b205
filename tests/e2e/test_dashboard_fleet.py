"""The dashboard across a fleet: clones of one bare remote, each with its own ``[agent] host``, render
``_System/vaultops.md`` alike once they have the same commits, never leave conflict markers or merge
commits when their pushes cross, and an idle fleet makes a bounded number of commits (each
machine's heartbeat, ``[dashboard] heartbeat``, and little else).

The passes run either as the real ``vaultops tick`` process (real clock) or in process with a clock the
test moves, so a simulated day takes seconds and nothing waits on the wall clock.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.support.clones import Fleet, machine_config, person_push, request_block
from tests.support.helpers import git
from vaultops.base import faults
from vaultops.engine.driver import Pass, PassReport
from vaultops.scan.note import parse_note
from vaultops.store.state import StateDB
from vaultops.vault import Vault

DASHBOARD = "_System/vaultops.md"
MACHINES = "_System/vaultops"
INBOX = "_System/COO-Inbox.md"
MARKERS = (b"<<<<<<<", b">>>>>>>")
NIGHT = 12 * 3600  # across midnight (a new daily note): every heartbeat period of a day is alike
HEARTBEAT = 900
STEP = 300  # 5 min, not the daemon's 60 s: 3 x 720 passes take ~75 s here, 3 x 144 take ~15 s


def fleet_of(root: Path, hosts: Sequence[str], inbox: str, extra: str = "") -> Fleet:
    """A remote and one clone per host, each clone's ``.vaultops/local.toml`` naming its host."""
    fleet = Fleet(root, len(hosts), inbox, extra=extra)
    for i, (clone, host) in enumerate(zip(fleet.clones, hosts, strict=True)):
        config = machine_config(i, extra=extra).replace(f'host = "host{i}"', f'host = "{host}"')
        assert f'host = "{host}"' in config
        (clone / ".vaultops" / "local.toml").write_text(config)
    return fleet


class Machine:
    """One clone run in process: its vault and state.db kept open, as the daemon keeps them."""

    def __init__(self, clone: Path) -> None:
        self.vault = Vault.open(clone)
        self.state = StateDB(self.vault.state_dir / "state.db")

    def run(self, now: datetime) -> PassReport:
        return Pass(self.vault, self.state, clock=lambda: now).run(wait_settle=False)

    def close(self) -> None:
        self.state.close()


@contextmanager
def machines(fleet: Fleet) -> Iterator[list[Machine]]:
    opened = [Machine(c) for c in fleet.clones]
    try:
        yield opened
    finally:
        for m in opened:
            m.close()


@contextmanager
def agent_log(fleet: Fleet) -> Iterator[None]:
    """In-process passes run the fake agent as a child: it logs to the fleet's log, outside every clone."""
    old = os.environ.get("FAKE_AGENT_LOG")
    os.environ["FAKE_AGENT_LOG"] = str(fleet.log)
    try:
        yield
    finally:
        if old is None:
            del os.environ["FAKE_AGENT_LOG"]
        else:
            os.environ["FAKE_AGENT_LOG"] = old


def marked_files(clone: Path) -> list[str]:
    """Every file of the clone (but git's own) with a conflict marker in it."""
    found = []
    for path in clone.rglob("*"):
        if ".git" in path.relative_to(clone).parts or not path.is_file():
            continue
        if any(marker in path.read_bytes() for marker in MARKERS):
            found.append(str(path.relative_to(clone)))
    return found


def merges(repo: Path, ref: str = "HEAD") -> int:
    return int(git(repo, "rev-list", "--merges", "--count", ref).strip())


def empty_commits(repo: Path, ref: str = "HEAD") -> list[str]:
    """Commits whose tree is their parent's: a rebuilt commit whose every change the remote's won."""
    listed = git(repo, "log", "--format=%H %T %P", ref).splitlines()
    trees = {line.split()[0]: line.split()[1] for line in listed}
    return [c for c, t, *parents in map(str.split, listed) if parents and trees.get(parents[0]) == t]


def states(text: str) -> dict[str, str]:
    return {r.id: r.state.value for r in parse_note(INBOX, text.encode()).requests}


def dashboard_meta(text: str) -> dict[str, str]:
    head = text.split("---\n")[1]
    return dict(line.split(": ", 1) for line in head.splitlines() if ": " in line)


def now_minute() -> datetime:
    return datetime.now().astimezone().replace(second=0, microsecond=0)


# --- (a) two machines, the real CLI ---------------------------------------------------------------------


@pytest.mark.slow
def test_two_machines_render_one_dashboard_listing_both_without_markers_or_merges(tmp_path: Path) -> None:
    fleet = fleet_of(tmp_path, ["laptop", "server"], "# Inbox\n")
    laptop, server = fleet.clones
    with (laptop / INBOX).open("a") as fh:  # typed on the laptop, as in Obsidian
        fh.write(request_block("REQ-fleet", "Summarise the fleet note."))
    git(laptop, "commit", "-qam", "vault backup")  # obsidian-git: with a remote, a claim waits for it
    for i in (0, 1, 0, 1):  # alternately; the last pass on each has pulled the other's commits
        proc = fleet.tick(i)
        assert proc.returncode == 0, proc.stderr

    remote_tip = git(fleet.remote, "rev-parse", fleet.branch).strip()
    for clone in (laptop, server):
        assert git(clone, "rev-parse", "HEAD").strip() == remote_tip, f"{clone.name} is not at the remote"
        assert git(clone, "status", "--porcelain", "--", "_System").strip() == ""
    mine, theirs = (laptop / DASHBOARD).read_bytes(), (server / DASHBOARD).read_bytes()
    assert mine == theirs, "two machines with the same commits render different dashboards"
    assert mine.decode() == git(fleet.remote, "show", f"{fleet.branch}:{DASHBOARD}")
    text = mine.decode()
    assert f"[[{MACHINES}/laptop|laptop]]" in text and f"[[{MACHINES}/server|server]]" in text
    assert dashboard_meta(text)["machines"] == "2" and dashboard_meta(text)["machines_up"] == "2"
    assert "REQ-fleet" in text
    assert states(fleet.remote_inbox()) == {"REQ-fleet": "done"}
    assert fleet.runs() == {"REQ-fleet": 1}
    for clone in (laptop, server):
        assert (clone / MACHINES / "laptop.md").is_file() and (clone / MACHINES / "server.md").is_file()
        assert marked_files(clone) == [], f"conflict markers in {clone.name}"
        assert merges(clone) == 0
    assert merges(fleet.remote, fleet.branch) == 0
    fleet.fsck()


# --- (b) crossed pushes ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_crossed_dashboard_pushes_keep_the_remotes_and_converge_on_the_next_passes(tmp_path: Path) -> None:
    """The laptop finishes REQ-two and renders its dashboard; before its push, the server finishes
    REQ-three (typed by the person meanwhile) and pushes its own rendering.  The laptop's push
    is rejected, its commit rebuilt on the server's with the remote's dashboard kept; one more pass on
    each, and both clones show the same dashboard with both results."""
    fleet = fleet_of(tmp_path, ["laptop", "server"], "# Inbox\n" + request_block("REQ-one", "Summarise one."))
    start = now_minute()
    with agent_log(fleet), machines(fleet) as (laptop, server):
        laptop.run(start)  # REQ-one is claimed and done, then a few passes to agree first
        server.run(start)
        laptop.run(start)
        base = git(fleet.remote, "rev-parse", fleet.branch).strip()
        with (fleet.clones[0] / INBOX).open() as fh:
            assert "REQ-one" in fh.read()
        assert (fleet.clones[0] / DASHBOARD).read_bytes() == (fleet.clones[1] / DASHBOARD).read_bytes()

        person_push(fleet.person(), lambda t: t + request_block("REQ-two", "Summarise two."))
        crossed: dict[str, str] = {}

        def meanwhile() -> None:
            head = fleet.clones[0]
            if DASHBOARD not in git(head, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD"):
                return  # a claim's or a result's push: not yet the dashboard's
            faults.on("push.before", None)
            crossed["laptop"] = (head / DASHBOARD).read_text()
            person_push(fleet.person(), lambda t: t + request_block("REQ-three", "Summarise three."))
            server.run(start + timedelta(seconds=60))  # claims and runs what is left, pushes its dashboard
            crossed["server"] = git(fleet.remote, "show", f"{fleet.branch}:{DASHBOARD}")

        # the laptop takes REQ-two; while its dashboard is on its way, the person types REQ-three and the
        # server takes it, rendering a dashboard the laptop's lacks
        faults.on("push.before", meanwhile)
        try:
            laptop.run(start + timedelta(seconds=60))
        finally:
            faults.on("push.before", None)

        assert crossed, "the laptop's dashboard push never happened"
        assert crossed["laptop"] != crossed["server"], "the two renderings did not differ: nothing crossed"
        after = git(fleet.remote, "show", f"{fleet.branch}:{DASHBOARD}").encode()
        assert not any(m in after for m in MARKERS)
        assert after.decode() == crossed["server"], "the remote's rendering is kept when pushes cross"
        subjects = git(fleet.remote, "log", "--format=%an %s", f"{base}..{fleet.branch}").splitlines()
        assert subjects and "agent0" in subjects[0], f"the laptop's commit is not rebuilt on top: {subjects}"
        rebuilt = git(fleet.remote, "diff-tree", "--no-commit-id", "--name-only", "-r", fleet.branch).split()
        assert DASHBOARD not in rebuilt, "the laptop's rendering replaced the remote's"
        assert merges(fleet.remote, fleet.branch) == 0
        # a commit that only held the laptop's rendering is dropped, not pushed empty
        assert empty_commits(fleet.remote, fleet.branch) == []

        laptop.run(start + timedelta(seconds=120))
        server.run(start + timedelta(seconds=120))
        laptop.run(start + timedelta(seconds=120))

    tip = git(fleet.remote, "rev-parse", fleet.branch).strip()
    texts = {c.name: (c / DASHBOARD).read_bytes() for c in fleet.clones}
    assert len(set(texts.values())) == 1, "the dashboards did not converge"
    assert all(git(c, "rev-parse", "HEAD").strip() == tip for c in fleet.clones)
    final = texts["machine0"].decode()
    assert not any(m.decode() in final for m in MARKERS)
    assert set(states(fleet.remote_inbox()).values()) == {"done"}
    for rid in ("REQ-one", "REQ-two", "REQ-three"):
        assert rid in final
    for clone in fleet.clones:
        assert marked_files(clone) == []
    assert merges(fleet.remote, fleet.branch) == 0
    fleet.fsck()


def test_a_commit_of_a_rendering_alone_is_dropped_when_the_remote_has_its_own(tmp_path: Path) -> None:
    """The person retitles a finished request: only the dashboard changes.  The server renders it first,
    so the laptop's commit, rebuilt on the server's, has nothing left: it is dropped, never pushed empty."""
    slow = '[dashboard]\nheartbeat = "2d"\n\n[daemon]\npeer_silent = "5d"\n'
    fleet = fleet_of(tmp_path, ["laptop", "server"], "# Inbox\n" + request_block("REQ-one", "Summarise one."),
                     extra=slow)  # fmt: skip
    start = now_minute()
    later = start + timedelta(seconds=60)
    with agent_log(fleet), machines(fleet) as (laptop, server):
        laptop.run(start)
        server.run(start)
        laptop.run(start)
        person_push(fleet.person(), lambda t: t.replace("## REQ-one", "## REQ-one Renamed"))
        base = git(fleet.remote, "rev-parse", fleet.branch).strip()
        crossed = []

        def meanwhile() -> None:
            if DASHBOARD in git(fleet.clones[0], "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD"):
                faults.on("push.before", None)
                server.run(later)
                crossed.append(git(fleet.remote, "rev-parse", fleet.branch).strip())

        faults.on("push.before", meanwhile)
        try:
            laptop.run(later)
        finally:
            faults.on("push.before", None)
    assert crossed and crossed[0] != base, "the server's rendering did not go first"
    assert empty_commits(fleet.remote, f"{base}..{fleet.branch}") == []
    assert git(fleet.remote, "rev-parse", fleet.branch).strip() == crossed[0]
    assert merges(fleet.remote, fleet.branch) == 0


def test_a_stray_edit_of_the_dashboard_never_holds_a_pass_up(tmp_path: Path) -> None:
    """Someone scribbles in the dashboard on the laptop and never commits it; the server's push changes
    the dashboard too.  The laptop's next pass puts the rendering back and follows the remote: the new
    request is claimed there and then, not one pass later after a warning to commit a generated note."""
    fleet = fleet_of(tmp_path, ["laptop", "server"], "# Inbox\n" + request_block("REQ-one", "Summarise one."))
    start = now_minute()
    with agent_log(fleet), machines(fleet) as (laptop, server):
        laptop.run(start)
        server.run(start)
        laptop.run(start)
        with (fleet.clones[0] / DASHBOARD).open("a") as fh:
            fh.write("scribble\n")
        person_push(fleet.person(), lambda t: t + request_block("REQ-two", "Summarise two."))
        server.run(start + timedelta(seconds=60))  # the server takes REQ-two: its dashboard moves on
        person_push(fleet.person(), lambda t: t + request_block("REQ-three", "Summarise three."))
        report = laptop.run(start + timedelta(seconds=120))
    assert not report.warnings, report.warnings
    assert ("REQ-three", "done") in [(rid, state) for rid, state, _ in report.outcomes]
    assert "scribble" not in (fleet.clones[0] / DASHBOARD).read_text()
    assert git(fleet.clones[0], "status", "--porcelain").strip() == ""


# --- (c) an idle day ------------------------------------------------------------------------------------


IDLE_INBOX = (
    "# Inbox\n"
    + "".join(
        f"\n## REQ-old-{i}\n- type: research\n- ready: yes\nSummarise note {i}.\n"
        f"- locked-by: agent0 @ 2026-04-01T08:31:02+10:00 (host0, claim {i:06x})\n"
        "- status: running @ 2026-04-01T08:31:02+10:00\n"
        "### Result — 2026-04-01 08:31 — agent0\n"
        "- outcome: done · research · light · routine · direct · 0.4 s\n"
        "~~~text\nfine\n~~~\n"
        "- status: done @ 2026-04-01T08:31:40+10:00\n"
        for i in range(5)
    )
)


def idle_night(root: Path, n: int, step: int, heartbeat: str = "") -> tuple[int, int]:
    """``n`` machines over an idle night (12 h across midnight), each running a pass every ``step`` seconds on
    a clock the test moves: (commits the remote's branch got meanwhile, passes run)."""
    extra = f'[dashboard]\nheartbeat = "{heartbeat}"\n' if heartbeat else ""
    fleet = fleet_of(root, [f"box{i}" for i in range(n)], IDLE_INBOX, extra=extra)
    start = datetime.fromisoformat("2026-05-04T20:00:30+10:00")
    passes = 0
    with machines(fleet) as fleet_machines:
        for m in fleet_machines:  # the first renders, before the night starts
            m.run(start - timedelta(seconds=step))
        before = git(fleet.remote, "rev-parse", fleet.branch).strip()
        for k in range(NIGHT // step):
            now = start + timedelta(seconds=k * step)
            for m in fleet_machines:
                report = m.run(now)
                passes += 1
                assert not report.warnings, report.warnings
    commits = int(git(fleet.remote, "rev-list", "--count", f"{before}..{fleet.branch}").strip())
    assert merges(fleet.remote, fleet.branch) == 0
    return commits, passes


@pytest.mark.slow
def test_an_idle_fleet_of_three_makes_a_bounded_number_of_commits_a_night(tmp_path: Path) -> None:
    commits, passes = idle_night(tmp_path, 3, STEP)
    bound = 3 * math.ceil(NIGHT / HEARTBEAT) + 6
    print(f"\nidle night, 3 machines, a pass every {STEP} s, {passes} passes: {commits} commits (<= {bound})")
    assert 0 < commits <= bound
