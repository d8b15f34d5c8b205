"""``vaultops doctor``: what is wrong with this vault's setup, one line each, with how to fix it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from vaultops.config import load_config
from vaultops.errors import VaultopsError
from vaultops.record import daily
from vaultops.store.notes import NoteWriter
from vaultops.sync.git import Git
from vaultops.vault import Vault


def check(root: Path) -> tuple[list[str], list[str]]:
    """(problems, fine) for the vault at ``root``."""
    problems: list[str] = []
    fine: list[str] = []
    if not root.is_dir():
        return [f"{root}: no such folder — pass --vault DIR or run `vaultops init {root}`"], fine
    try:
        config = load_config(root)
    except VaultopsError as exc:
        return [f"{exc.message}"], fine
    vault = Vault(root.resolve(), config)
    fine.append(f"config: {vault.agent} on {vault.host}")

    try:
        note = NoteWriter(vault).read(vault.inbox_rel)
    except VaultopsError as exc:
        note = None
        problems.append(exc.message)
    else:
        if note is None:
            problems.append(f"{vault.inbox_rel}: no inbox — run `vaultops init` or set [inbox] path")
        else:
            fine.append(f"inbox: {len(note.requests)} requests in {vault.inbox_rel}")
            if note.frontmatter_error:
                problems.append(f"{vault.inbox_rel}: {note.frontmatter_error}")
            for r in note.requests:
                if r.problems and r.state.value in ("open",):
                    problems.append(f"{vault.inbox_rel}:{r.start + 1}: {r.problems[0]}")

    git = Git(vault.root)
    if shutil.which("git") is None:
        problems.append("git is not installed — install git so that results are committed")
    elif not git.is_repo():
        problems.append(f"{vault.root} is not a git repository — run `git init` there (or `vaultops init`)")
    else:
        fine.append("git: repository found")
        if not git.has_identity():
            fine.append("git: no user.name/user.email here; commits use the vaultops identity")

    for name, profile in config.profiles.items():
        exe = profile.command[0]
        if shutil.which(exe) is None and not (os.path.isabs(exe) and os.access(exe, os.X_OK)):
            problems.append(f"[profiles.{name}] {exe!r} is not on PATH — install it or fix its command")
        else:
            fine.append(f"profile {name}: {exe} found")
        if profile.workdir and not Path(os.path.expanduser(profile.workdir)).is_dir():
            problems.append(
                f"[profiles.{name}] workdir {profile.workdir} does not exist — create it or fix it"
            )

    try:
        settings = daily.load_settings(vault.root)
        from datetime import datetime

        fine.append(f"daily notes: today's is {daily.daily_note_path(settings, datetime.now())}")
    except daily.DailyNoteError as exc:
        problems.append(str(exc))

    state = vault.state_dir
    try:
        state.mkdir(parents=True, exist_ok=True)
        probe = state / ".doctor-probe"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        problems.append(f"{state} is not writable ({exc.strerror}) — fix its permissions")
    return problems, fine
