"""Telegram's long poll, in a thread of the daemon: a press or a reply wakes the main loop at once, rather
than at the next ``[daemon] fetch``.

The thread only reads.  It hands what it read to the main loop (``take``), which writes the answers into
the notes and acknowledges them; only then does the thread ask for more, from the new offset.  So there
is one ``getUpdates`` caller per daemon (Telegram ends a long poll when another starts), and an update is
never acknowledged before it is in a note.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from vaultops.notify.telegram import Batch, Telegram, TelegramError

RETRY_MIN = 1.0  # seconds after a failed poll; doubled each time, up to RETRY_MAX
RETRY_MAX = 60.0


class ChatListener:
    def __init__(self, telegram: Telegram, wake: Callable[[str], None], warn: Callable[[str], None]) -> None:
        self.telegram = telegram
        self.wake = wake
        self.warn = warn
        self.stop = threading.Event()
        self._taken = threading.Event()
        self._lock = threading.Lock()
        self._waiting: Batch | None = None
        self.thread = threading.Thread(target=self._run, name="vaultops-telegram", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        """Stop asking (a poll under way is left to end on its own: the thread is a daemon thread)."""
        self.stop.set()
        self._taken.set()

    def take(self) -> Batch | None:
        """What the thread read and the main loop has not taken yet."""
        with self._lock:
            batch, self._waiting = self._waiting, None
        return batch

    def done(self) -> None:
        """The main loop has written (and acknowledged) what it took: the thread may ask for more."""
        self._taken.set()

    def _run(self) -> None:
        delay = RETRY_MIN
        said = False
        while not self.stop.is_set():
            offset = self.telegram.offset
            try:
                batch = self.telegram.fetch()
            except Exception as exc:  # a bug included: the thread must not die, or the daemon goes deaf
                if not said:  # once, until it works again: a chat service that is down is not news each time
                    why = str(exc) if isinstance(exc, TelegramError) else repr(exc)
                    self.warn(f"Telegram: cannot listen for answers ({why}); trying again")
                    said = True
                wait = getattr(exc, "retry_after", 0.0) or delay
                self.stop.wait(wait)
                delay = min(delay * 2, RETRY_MAX)
                continue
            delay, said = RETRY_MIN, False
            if batch.next_offset is None:
                continue  # the long poll ended with nothing new
            with self._lock:
                self._taken.clear()
                self._waiting = batch
            self.wake("chat")
            self._taken.wait()
            if self.telegram.offset == offset:
                # not acknowledged (the note could not be written): asked again after a while, not at once
                self.stop.wait(RETRY_MIN)
