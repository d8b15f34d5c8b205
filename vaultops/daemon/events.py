"""File-system events, turned into "look at the vault again" for the daemon.

Saves are acted on once they are complete: a close after writing (an in-place save; Obsidian saves so)
or a rename into place (editors' atomic saves arrive as moves, not modifications).  A bare "modified" is
not enough on its own, because many editors send it before the write has finished; where the platform
reports closes it only arms a slower fallback, elsewhere it is acted on after a short quiet time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from vaultops.base.confine import make_dirs
from vaultops.base.layout import CONFIG_FILES
from vaultops.decide.halt import marked
from vaultops.vault import Vault, is_ignored
from vaultops.workers.plans import NEWS_FILE

EVENTS = [FileClosedEvent, FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent]
MODIFIED_FALLBACK = 0.5  # seconds: a modification with no close after it is still looked at


class VaultEvents(FileSystemEventHandler):
    def __init__(
        self, vault: Vault, wake: Callable[[str], None], *, closes_reported: bool, quiet: float
    ) -> None:
        self.vault = vault
        self.wake = wake
        self.closes_reported = closes_reported
        self.quiet = quiet
        root = vault.root
        self.inbox = vault.resolve(vault.inbox_rel)
        self.queue = root / vault.config.queue.folder
        self.daily_settings = root / ".obsidian" / "daily-notes.json"
        self.git = root / ".git"
        self.workers = vault.state_dir / "workers"
        # an edit of either is read at once (``daemon.reload``), not at the next timer
        self.configs = frozenset(root / name for name in CONFIG_FILES)
        rel = vault.dashboard_rel
        self.dashboard = vault.resolve(rel) if rel is not None else None
        self._halt_lines: tuple[str, ...] = ()
        self._halt_lines = self._halt_now()  # vaultops redraws the dashboard: only the halt's lines wake
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def why(self, path: str) -> str | None:
        """What a path is to vaultops, or None when it is nothing."""
        p = Path(path)
        if p == self.inbox:
            return "inbox"
        if p == self.daily_settings:
            return "daily-notes settings"
        if p in self.configs:
            return "config"
        if p == self.dashboard:
            return "halt" if self._halt_changed() else None
        if p == self.workers / NEWS_FILE:
            return "worker"
        if p.parent == self.git or self.git in p.parents:
            # What moves this clone's branch (a pull by obsidian-git or the person) matters; fetches do
            # not, and the daemon's own fetches would otherwise wake it for nothing.
            parts = p.relative_to(self.git).parts
            moved = p.name in ("HEAD", "ORIG_HEAD", "packed-refs") or parts[:2] == ("refs", "heads")
            return "git" if moved else None
        if self.queue in p.parents and p.suffix == ".md":
            rel = p.relative_to(self.vault.root).as_posix()
            return None if is_ignored(rel) else "queue"
        return None

    def _halt_now(self) -> tuple[str, ...]:
        try:
            raw = self.dashboard.read_bytes() if self.dashboard is not None else b""
        except OSError:
            return self._halt_lines
        return marked(raw).kept

    def _halt_changed(self) -> bool:
        """The person changed the halt lines of the dashboard (saved in Obsidian on this machine): a pass
        now, not at the next fetch or timer (``engine.halt``)."""
        lines = self._halt_now()
        changed, self._halt_lines = lines != self._halt_lines, lines
        return changed

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = [event.src_path, getattr(event, "dest_path", "")]
        reasons = [r for r in (self.why(str(p)) for p in paths if p) if r]
        if not reasons:
            return
        reason = reasons[-1]
        if event.event_type == "modified" and reason in ("inbox", "queue"):
            self._later(reason, MODIFIED_FALLBACK if self.closes_reported else self.quiet)
        else:
            self.wake(f"{event.event_type} {reason}")

    def _later(self, reason: str, delay: float) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(delay, self.wake, args=(f"modified {reason}",))
            self._timer.daemon = True
            self._timer.start()

    def close(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()


def watch(vault: Vault, wake: Callable[[str], None], quiet: float) -> tuple[BaseObserver, VaultEvents]:
    """Start watching the inbox's folder, the queue folder, the Obsidian settings, the git refs, and the
    file workers running plan notes rewrite when they have news."""
    observer = Observer()
    closes = type(observer).__name__ == "InotifyObserver"
    handler = VaultEvents(vault, wake, closes_reported=closes, quiet=quiet)
    make_dirs(handler.workers, vault.root)  # a worker started later tells the daemon here
    folders = {handler.inbox.parent: False, handler.daily_settings.parent: False, handler.git: False}
    folders |= dict.fromkeys((c.parent for c in handler.configs), False)
    folders[handler.workers] = False
    if handler.queue.is_dir():
        folders[handler.queue] = True
    if (handler.git / "refs").is_dir():
        folders[handler.git / "refs"] = True
    for folder, recursive in folders.items():
        if folder.is_dir():
            observer.schedule(handler, str(folder), recursive=recursive, event_filter=EVENTS)
    observer.start()
    return observer, handler
