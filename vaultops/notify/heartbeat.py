"""``[daemon] heartbeat_url``: a dead-man's switch (healthchecks.io, Uptime Kuma's push monitors) that
vaultops pings while its passes go well, and pings in its fail form when one fails.  The monitor raises
the alarm when the pings stop, so it fires even when the only machine is down.

The URL is a secret (anyone holding it can keep the alarm quiet): it is never logged.  Pings leave from
one background thread, so a monitor that hangs never holds up a pass.
"""

from __future__ import annotations

import queue
import threading
import time
import urllib.request
from collections.abc import Callable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

TIMEOUT = 10.0  # seconds a ping may take
EVERY = 60.0  # seconds between two pings that say the same


def fail_url(url: str) -> str:
    """The monitor's fail form: Uptime Kuma's ``status=up`` becomes ``status=down``; otherwise
    (healthchecks.io) ``/fail`` goes at the end of the path."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if any(k == "status" for k, _ in query):
        query = [(k, "down" if k == "status" else v) for k, v in query]
        return urlunsplit(parts._replace(query=urlencode(query)))
    path = parts.path.rstrip("/")
    if not path.endswith("/fail"):
        path += "/fail"
    return urlunsplit(parts._replace(path=path))


def ping(url: str, ok: bool) -> str:
    """One ping; "" when the monitor took it, else why not (without the URL)."""
    try:
        request = urllib.request.Request(url if ok else fail_url(url), headers={"User-Agent": "vaultops"})
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            response.read(1024)
        return ""
    except Exception as exc:  # any failure of a ping is said, never raised into a pass
        return f"the heartbeat monitor did not take a ping ({type(exc).__name__})"


class Heartbeat:
    """Pings from a thread: the latest state wins; the same state at most every ``EVERY`` seconds, a change
    at once."""

    def __init__(self, url: str, warn: Callable[[str], None], every: float = EVERY) -> None:
        self.url = url
        self.warn = warn
        self.every = every
        self.pending: queue.Queue[bool | None] = queue.Queue()
        self.last: tuple[bool, float] | None = None
        self.failing = ""
        self.thread = threading.Thread(target=self._run, name="vaultops-heartbeat", daemon=True)
        self.thread.start()

    def passed(self) -> None:
        self._want(True)

    def failed(self) -> None:
        self._want(False)

    def _want(self, ok: bool) -> None:
        now = time.monotonic()
        if self.last is not None and self.last[0] == ok and now - self.last[1] < self.every:
            return
        self.last = (ok, now)
        self.pending.put(ok)

    def close(self) -> None:
        self.pending.put(None)
        self.thread.join(timeout=TIMEOUT + 1)

    def _run(self) -> None:
        while True:
            ok = self.pending.get()
            while ok is not None and not self.pending.empty():
                ok = self.pending.get()  # only the latest counts
            if ok is None:
                return
            why = ping(self.url, ok)
            if why and why != self.failing:
                self.warn(why)
            self.failing = why
