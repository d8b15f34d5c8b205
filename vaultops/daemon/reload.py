"""The daemon's config, read again whenever its files change: an edit on this machine, or a fix pushed from
another one or the phone, is picked up without a restart.

A shared ``config.toml`` that does not load (a typo pushed from the phone) never stops the daemon: it keeps
the config it last loaded, and the problem reaches the person as one of this machine's problems (its note,
the dashboard, the channels: ``engine.problems``) and in the log, once, until a version that loads arrives.
A daemon *started* on such a config runs on this machine's own ``local.toml`` alone, only to keep pulling
until the fix comes (``Daemon.waiting``); only a broken ``local.toml`` (this machine's own file, which no
push can fix) stops it, with exit 2.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from vaultops.base.errors import ConfigError
from vaultops.base.layout import CONFIG_FILES
from vaultops.config import Config, load_config
from vaultops.engine.problems import CONFIG_KEY, config_problem
from vaultops.store.state import StateDB

KEPT = "vaultops keeps running on the config it last loaded"
WAITING = "vaultops runs nothing until it does, and keeps pulling"
FIX = "fix that file (config.toml on any machine, and push it): the fix is picked up without a restart"


def fingerprint(root: Path) -> tuple[bytes | None, ...]:
    """The config files as they are now (None: absent or unreadable): a change is any difference."""
    out: list[bytes | None] = []
    for name in CONFIG_FILES:
        try:
            out.append((root / name).read_bytes())
        except OSError:
            out.append(None)
    return tuple(out)


@dataclass
class Checked:
    config: Config | None = None  # a new config that loaded and differs from the one in use
    problem: str = ""  # why the files as they are do not load ("" when they do)
    changed: bool = False  # the problem is new (say it) or over (say so)


class ConfigKeeper:
    """What the daemon runs on, and the files it was read from.  ``waiting``: started on a shared config
    that did not load; ``good`` is then local.toml's alone, for pulling only."""

    def __init__(self, root: Path, good: Config, problem: str = "") -> None:
        self.root = root
        self.good = good
        self.problem = problem
        self.waiting = bool(problem)
        self.seen = fingerprint(root)
        self.present = tuple(data is not None for data in self.seen)  # as loaded: a file gone is no edit

    def check(self) -> Checked:
        seen = fingerprint(self.root)
        if seen == self.seen:
            return Checked(problem=self.problem)
        self.seen = seen
        before = self.problem
        gone = [
            name
            for name, was, data in zip(CONFIG_FILES, self.present, seen, strict=True)
            if was and data is None
        ]
        try:
            if gone:  # deleted with its folder, or mid-checkout: defaults would be a config nobody wrote
                raise ConfigError(f"{self.root / gone[0]} is gone; put it back")
            new = load_config(self.root)
        except ConfigError as exc:
            self.problem = f"{exc.message}; {WAITING if self.waiting else KEPT}; {FIX}"
            return Checked(problem=self.problem, changed=self.problem != before)
        self.problem = ""
        fresh = new != self.good or self.waiting
        self.waiting = False
        self.good = new
        self.present = tuple(data is not None for data in seen)
        return Checked(config=new if fresh else None, changed=bool(before))


def keep_problem(state: StateDB, problem: str) -> None:
    """The config problem as one of this machine's problems (state.db), or none."""
    if not problem:
        if state.get(CONFIG_KEY):
            state.set(CONFIG_KEY, "")
        return
    kept = config_problem(state.get(CONFIG_KEY))
    since = kept[1] if kept is not None and kept[0] == problem and kept[1] else time.time()  # a new one: new
    state.set(CONFIG_KEY, json.dumps({"sentence": problem, "since": since}))
