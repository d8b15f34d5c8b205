"""``vaultops doctor``: what is wrong with this vault's setup, one line each, with how to fix it.

Each check yields ``(ok, line)``: what is fine is said too, so that a clean report shows what was looked at.
Nothing is sent and nothing in the vault is changed, beyond the health cache in state.db.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from vaultops.base.confine import STATE_FOLDERS, confine, make_dirs, write_text
from vaultops.base.errors import DiskError, VaultopsError, corrupt_state, disk_error
from vaultops.base.redact import redact
from vaultops.base.room import LOW_SPACE, free_bytes, room_problem, size
from vaultops.commands.output import Output
from vaultops.commands.status import channel_rows
from vaultops.config import CONFIG_FILE, load_config
from vaultops.engine.moved import gone_here
from vaultops.engine.publish import remote_problem
from vaultops.hook.fence import sandbox_problem
from vaultops.notify.check import apprise_refuses, telegram_findings, zulip_findings
from vaultops.render import daily
from vaultops.run import health
from vaultops.run.process import run_process
from vaultops.service.install import service_status
from vaultops.store.notes import NoteWriter
from vaultops.store.state import StateDB, StateError, quick_check
from vaultops.sync.git import Git
from vaultops.sync.remote import git_says
from vaultops.vault import Vault

Finding = tuple[bool, str]  # (fine, line)
REMOTE_TIMEOUT = 10.0  # seconds: a remote that has not answered by then is as good as unreachable
OBSIDIAN_GIT = ".obsidian/plugins/obsidian-git/data.json"


def _ok(line: str) -> Finding:
    return True, line


def _bad(line: str) -> Finding:
    return False, line


def check(root: Path) -> tuple[list[str], list[str]]:
    """(problems, fine) for the vault at ``root``."""
    if not root.is_dir():
        return [f"{root}: no such folder — pass --vault DIR or run `vaultops init {root}`"], []
    try:
        config = load_config(root)
    except VaultopsError as exc:
        return [exc.message], []
    vault = Vault(root.resolve(), config)
    checks = (
        _inbox,
        _state_dir,
        _state_db,
        _git,
        _profiles,
        _sandbox,
        _notify,
        _daily,
        _service,
        _obsidian_git,
    )
    findings = [_ok(f"config: {vault.agent} on {vault.host}")]
    for each in checks:
        findings += _findings(each, vault)
    # a problem that stops several checks (a corrupt state.db) is said once
    problems = dict.fromkeys(line for ok, line in findings if not ok)
    return list(problems), [line for ok, line in findings if ok]


def _findings(each: Callable[[Vault], Iterator[Finding]], vault: Vault) -> list[Finding]:
    """What one check found; one that stops on vaultops's error (a corrupt state.db, a full disk) says it,
    and the other checks still run."""
    found: list[Finding] = []
    try:
        for finding in each(vault):
            found.append(finding)
    except VaultopsError as exc:
        found.append(_bad(exc.message))
    return found


def doctor(root: Path) -> Output:
    """``vaultops doctor``: a line per check, ``ok:`` or ``problem:`` with the fix; exit 1 on a problem."""
    problems, fine = check(root)
    lines = [f"ok: {line}" for line in fine] + [f"problem: {line}" for line in problems]
    return Output(lines, exit_code=1 if problems else 0)


def _inbox(vault: Vault) -> Iterator[Finding]:
    try:
        note = NoteWriter(vault).read(vault.inbox_rel)
    except VaultopsError as exc:
        yield _bad(exc.message)
        return
    if note is None:
        gone = gone_here(vault)  # moved or renamed: never `vaultops init`, which would make a second one
        yield _bad(gone.sentence() if gone is not None else f"{vault.inbox_rel}: the inbox cannot be read")
        return
    yield _ok(f"inbox: {len(note.requests)} requests in {vault.inbox_rel}")
    if note.frontmatter_error:
        yield _bad(f"{vault.inbox_rel}: {note.frontmatter_error}")
    for r in note.requests:
        if r.problems and r.state.value == "open":
            yield _bad(f"{vault.inbox_rel}:{r.start + 1}: {r.problems[0]}")


def _state_dir(vault: Vault) -> Iterator[Finding]:
    """The state folder can be written (a probe file, through the same checks as every write), and the
    disk holding it has room to spare."""
    state = vault.state_dir
    shown = state.relative_to(vault.root).as_posix()
    try:
        probe = make_dirs(state, vault.root) / ".doctor-probe"
        write_text(probe, "ok", vault.root)
        probe.unlink()
        for folder in STATE_FOLDERS:
            confine(state / folder, vault.root)
    except DiskError as exc:  # full or read-only: said of the folder, not of the probe; that is all
        yield _bad((disk_error(OSError(exc.errno, exc.strerror), state) or exc).message)
        return
    except VaultopsError as exc:  # a link out of the vault
        yield _bad(exc.message)
    except OSError as exc:
        yield _bad(f"{state} is not writable ({exc.strerror}) — fix its permissions")
    else:
        yield _ok(f"state folder: {shown} is writable")
    free = free_bytes(state)
    if free is None:  # a folder that could not be made: said above
        return
    if free < LOW_SPACE:
        yield _bad(f"{room_problem(state) or f'the disk holding {state} is nearly full'} ({size(free)} free)")
    else:
        yield _ok(f"disk: {size(free)} free on the disk holding {shown}")


def _state_db(vault: Vault) -> Iterator[Finding]:
    """state.db is an SQLite database that SQLite's quick_check finds sound."""
    path = vault.state_dir / "state.db"
    if not path.exists():
        yield _ok("state.db: none yet; the first pass makes it")
        return
    try:
        found = quick_check(path)
    except DiskError:  # a full or read-only disk: the state folder's line says so
        return
    except VaultopsError as exc:  # not a database at all
        yield _bad(exc.message)
        return
    if found:
        yield _bad(corrupt_state(path, "; ".join(found[:3])).message)
    else:
        yield _ok(f"state.db: sound (SQLite quick_check), {size(path.stat().st_size)}")


def _git(vault: Vault) -> Iterator[Finding]:
    git = Git(vault.root)
    if shutil.which("git") is None:
        yield _bad("git is not installed — install git so that results are committed")
        return
    if not git.is_repo():
        yield _bad(f"{vault.root} is not a git repository — run `git init` there (or `vaultops init`)")
        return
    yield _ok("git: repository found")
    name = git.run("config", "user.name", check=False).stdout.strip()
    email = git.run("config", "user.email", check=False).stdout.strip()
    if name and email:
        yield _ok(f"git: commits are made by {name} <{email}>, authored as vaultops ({vault.agent})")
    else:
        yield _ok("git: no user.name/user.email here; commits use the vaultops identity")

    remote = vault.config.git.remote
    url = git.run("remote", "get-url", remote, check=False).stdout.strip()
    if not url:
        yield _ok(f"git: no remote {remote!r}: results stay on this machine")
        return
    shown = re.sub(r"(://[^/@:]*):[^/@]*@", r"\1:***@", url)  # never print a password in the URL
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    # run_process bounds the call and stops all it started (an ssh asking for a password included):
    # in a session of its own there is no terminal to ask on.
    argv = ["git", "ls-remote", "--exit-code", "-q", remote, "HEAD"]
    probe = run_process(argv, cwd=vault.root, env=env, timeout=REMOTE_TIMEOUT)
    if probe.exit_code in (0, 2):  # 2: it answered, but has no HEAD yet (an empty repository)
        yield _ok(f"git: remote {remote} ({shown}) is reachable")
        refused = _refused(vault)
        if refused:  # it answers, but the last push was refused: state.db keeps that until one goes through
            yield _bad(f"git: {refused}")
        return
    if probe.timed_out:
        detail = f"no answer within {REMOTE_TIMEOUT:g} s"
    else:
        said = (probe.start_error or probe.stderr or probe.stdout).strip()
        detail = redact(git_says(said)) if said else f"exit {probe.exit_code}"  # not git's boilerplate
    consequence = (
        "vaultops will claim without it ([git] claim_offline = true), so two machines may run one request"
        if vault.config.git.claim_offline
        else "vaultops will not claim while it is unreachable ([git] claim_offline = false)"
    )
    yield _bad(
        f"git: cannot reach the remote {remote} ({shown}): {detail}; {consequence} — fix the URL, network "
        f"or credentials until `git ls-remote {remote}` works, or `git remote remove {remote}`"
    )


def _refused(vault: Vault) -> str:
    try:
        state = StateDB(vault.state_dir / "state.db")
    except (OSError, StateError, VaultopsError):
        return ""
    try:
        problem = remote_problem(state)
    finally:
        state.close()
    return problem.sentence if problem is not None and problem.kind == "refused" else ""


def _profiles(vault: Vault) -> Iterator[Finding]:
    if not vault.config.profiles:
        return
    with contextlib.ExitStack() as stack:
        # The vault's state.db, so that doctor's answers refresh the daemon's cache; a throwaway one
        # when it cannot be opened (that problem is _state_dir's line).
        try:
            state = StateDB(vault.state_dir / "state.db")
        except (OSError, StateError, VaultopsError):
            state = StateDB(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "state.db")
        stack.callback(state.close)
        yield from _profile_findings(vault, state)


def _sandbox(vault: Vault) -> Iterator[Finding]:
    """Every command an agent runs, and every review check, runs in the operating system's sandbox; a
    machine that cannot put it up starts no gated job, so say so before a job finds out."""
    fenced = [name for name, p in vault.config.profiles.items() if p.gated or p.review]
    if not fenced:
        return
    problem = sandbox_problem()
    if problem:
        yield _bad(f"sandbox: {problem}; until then no job of {', '.join(fenced)} starts")
    else:
        yield _ok("sandbox: agent commands and review checks run fenced (bubblewrap)")


def _profile_findings(vault: Vault, state: StateDB) -> Iterator[Finding]:
    # Asked now, not from the cache: a person runs doctor right after fixing something.
    settings = vault.config.health.model_copy(update={"ttl": 0.0})
    for name, profile in vault.config.profiles.items():
        exe = profile.command[0]
        if not profile.gated:
            yield _ok(
                f'profile {name}: UNGATED — no policy judges its agent\'s actions (gate = "none", or not '
                "Claude Code); only the request's classification stands between it and harm"
            )
        if shutil.which(exe) is None and not (os.path.isabs(exe) and os.access(exe, os.X_OK)):
            yield _bad(f"[profiles.{name}] {exe!r} is not on PATH — install it or fix its command")
            continue
        cwd = vault.root
        if profile.workdir:
            cwd = Path(os.path.expanduser(profile.workdir))
            if not cwd.is_dir():
                yield _bad(f"[profiles.{name}] workdir {profile.workdir} does not exist — create or fix it")
                cwd = vault.root
        report = health.check(name, profile, settings, state, cwd)
        if report.state is health.Health.OFFLINE:
            yield _bad(
                f"[profiles.{name}] is offline: `{shlex.join(profile.health)}` says {report.detail} — "
                "fix the agent CLI (installed? logged in?) or the profile's health command"
            )
        elif report.state is health.Health.UNCHECKED:
            yield _ok(f"profile {name}: {exe} found; no health command, so it counts as online")
        else:
            yield _ok(f"profile {name}: {exe} found, {report.state.value} ({report.detail})")


# A URL part that looks generated: long, with letters and digits (webhook tokens, bot tokens, keys).
_TOKEN = re.compile(r"[A-Za-z0-9_~-]{16,}")
_SECRET_QUERY = re.compile(r"[?&](?:token|key|apikey|api_key|secret|password|pass|pw)=", re.IGNORECASE)
_APPRISE_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://\S+$")


def _looks_secret(url: str) -> bool:
    rest = url.split("://", 1)[-1]
    return (
        redact(url) != url
        or re.match(r"[^/@]*:[^/@]+@", rest) is not None  # user:password@host
        or _SECRET_QUERY.search(rest) is not None
        or any(re.search("[A-Za-z]", t) and re.search("[0-9]", t) for t in _TOKEN.findall(rest))
    )


def _committed_urls(root: Path) -> list[str]:
    """[notify] urls as config.toml (committed, shared) has them, whatever local.toml puts over them."""
    try:
        with (root / CONFIG_FILE).open("rb") as fh:
            urls = tomllib.load(fh).get("notify", {}).get("urls", [])
    except (OSError, tomllib.TOMLDecodeError, AttributeError):
        return []
    return [u for u in urls if isinstance(u, str)] if isinstance(urls, list) else []


def _committed_secret(root: Path, channel: str, key: str) -> bool:
    """config.toml (committed, shared) holds ``[notify.<channel>] <key>``."""
    try:
        with (root / CONFIG_FILE).open("rb") as fh:
            section = tomllib.load(fh).get("notify", {}).get(channel, {})
    except (OSError, tomllib.TOMLDecodeError, AttributeError):
        return False
    return isinstance(section, dict) and bool(section.get(key))


def _notify(vault: Vault) -> Iterator[Finding]:
    urls = list(vault.config.notify.urls)
    committed = _committed_urls(vault.root)
    telegram = vault.config.notify.telegram
    if not urls and not committed and not telegram.enabled:
        yield _ok("notify: no [notify] urls; results are only written to the vault")
    for url in dict.fromkeys([*urls, *committed]):  # each once, in order
        scheme = url.split("://", 1)[0]
        if not _APPRISE_URL.match(url):
            yield _bad(f"[notify] urls: {redact(url)[:60]!r} is not an apprise URL (scheme://…) — fix it")
        elif url in committed and _looks_secret(url):
            yield _bad(
                f"{CONFIG_FILE}: [notify] url {scheme}://… holds what looks like a secret in a committed file"
                " — move it to .vaultops/local.toml"
            )
        elif url in urls and (why := apprise_refuses(url)):
            yield _bad(f"[notify] urls: {scheme}://… cannot be used: {why} — fix it as apprise documents it")
        elif url in urls:
            yield _ok(f"notify: {scheme}://… looks like an apprise URL (nothing was sent)")
    yield from telegram_findings(telegram, _committed_secret(vault.root, "telegram", "token"), REMOTE_TIMEOUT)
    zulip = vault.config.notify.zulip
    if zulip.enabled or _committed_secret(vault.root, "zulip", "api_key"):
        yield from zulip_findings(zulip, _committed_secret(vault.root, "zulip", "api_key"), REMOTE_TIMEOUT)
    yield from _failing_channels(vault)


def _failing_channels(vault: Vault) -> Iterator[Finding]:
    """What the daemon found when it sent: a notifier that failed its last tries is an incident."""
    for row in channel_rows(vault):
        fallback = (
            "they go to [notify] fallback meanwhile"
            if vault.config.notify.fallback
            else ("they wait until it works again; [notify] fallback can take them meanwhile")
        )
        yield _bad(
            f"notify: {row['channel']} has failed its last {row['failures']} tries (since {row['since']}): "
            f"{row['last_error']} — fix it; {fallback}"
        )


def _daily(vault: Vault) -> Iterator[Finding]:
    try:
        settings = daily.load_settings(vault.root)
        yield _ok(f"daily notes: today's is {daily.daily_note_path(settings, datetime.now())}")
    except daily.DailyNoteError as exc:
        yield _bad(str(exc))


def _service(vault: Vault) -> Iterator[Finding]:
    """Fine either way: running the daemon as a service is a choice, not a requirement."""
    try:
        state, _ = service_status(vault.root)
    except VaultopsError as exc:
        yield _ok(f"service: {exc.message}")
        return
    if state == "not installed":
        yield _ok("service: not installed: vaultops service install")
    elif state == "active":
        yield _ok("service: installed and active")
    else:
        yield _ok(f"service: installed, {state} (vaultops service status)")


def _minutes(value: object) -> float:
    # bool is an int in Python; obsidian-git's intervals are numbers of minutes, 0 meaning off.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return max(float(value), 0.0)


def _obsidian_git(vault: Vault) -> Iterator[Finding]:
    path = vault.root / OBSIDIAN_GIT
    if not path.exists():
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        yield _bad(f"{OBSIDIAN_GIT}: cannot be read as JSON ({exc}) — fix or delete it")
        return
    with contextlib.suppress(OSError, ValueError):
        enabled = json.loads((vault.root / ".obsidian/community-plugins.json").read_text(encoding="utf-8"))
        if isinstance(enabled, list) and "obsidian-git" not in enabled:
            yield _ok("obsidian-git: installed but not enabled")
            return
    keys = ("autoSaveInterval", "autoPullInterval", "autoPushInterval")
    save, pull, push = (_minutes(data.get(k)) for k in keys)
    race = "race on .git/index.lock"
    if save:
        after_change = data.get("autoBackupAfterFileChange") is True
        when = f"{save:g} min after each change" if after_change else f"every {save:g} min"
        yield _bad(
            f"obsidian-git also commits this clone {when}; two tools committing one clone {race} — "
            "run vaultops on its own clone, or turn off its auto backup on the machine that runs vaultops "
            "(with a remote, requests you then type on that machine wait until you commit them)"
        )
    elif pull or push:
        what = "pulls" if pull else "pushes"
        yield _bad(
            f"obsidian-git also {what} this clone every {pull or push:g} min; two tools using one clone "
            f"{race} — turn off its auto pull/push on the machine that runs vaultops, or run vaultops on its "
            "own clone"
        )
    else:
        yield _ok("obsidian-git: no automatic commits, pulls or pushes")
