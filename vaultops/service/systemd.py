"""systemd's notify protocol (sd_notify), stdlib only.

Under ``Type=notify`` systemd passes ``$NOTIFY_SOCKET``, a Unix datagram socket; the daemon sends
newline-separated ``KEY=value`` assignments to it: ``READY=1`` once it is watching, ``WATCHDOG=1`` at
least every half ``WatchdogSec`` (else systemd restarts it), ``STOPPING=1`` on the way out, ``STATUS=``
for ``systemctl status``.  Outside systemd the variable is unset and every call does nothing, so the
daemon calls these unconditionally.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping


class Notifier:
    """Sends sd_notify messages to $NOTIFY_SOCKET (a Unix datagram socket; a leading '@' means the abstract
    namespace).  A no-op when the variable is unset."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self._address = env.get("NOTIFY_SOCKET", "")
        self._watchdog_usec = env.get("WATCHDOG_USEC", "")
        self._watchdog_pid = env.get("WATCHDOG_PID", "")

    @property
    def enabled(self) -> bool:
        return bool(self._address)

    def send(self, *fields: str) -> bool:
        """Send one datagram holding ``fields``; True if it was sent.  Never raises: a daemon must not
        die because its supervisor went away, so errors are swallowed (and not logged: a watchdog ping
        every few seconds would flood the log)."""
        if not self._address or not fields:
            return False
        # '@name' is Linux's abstract namespace: the address starts with a NUL byte instead.
        address = "\0" + self._address[1:] if self._address.startswith("@") else self._address
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.sendto("\n".join(fields).encode("utf-8", "replace"), address)
        except (OSError, ValueError):
            return False
        return True

    def ready(self, status: str) -> None:
        self.send("READY=1", f"STATUS={_one_line(status)}")

    def watchdog(self) -> None:
        self.send("WATCHDOG=1")

    def stopping(self, status: str) -> None:
        self.send("STOPPING=1", f"STATUS={_one_line(status)}")

    def status(self, text: str) -> None:
        self.send(f"STATUS={_one_line(text)}")

    @property
    def watchdog_interval(self) -> float | None:
        """Seconds between watchdog pings (half of ``WatchdogSec``, as sd_watchdog_enabled advises), or
        None when systemd expects none.  ``$WATCHDOG_PID``, when set, names the process meant: a child
        that inherited the variables must not ping on its parent's behalf."""
        try:
            usec = int(self._watchdog_usec)
        except ValueError:
            return None
        if usec <= 0:
            return None
        if self._watchdog_pid:
            try:
                if int(self._watchdog_pid) != os.getpid():
                    return None
            except ValueError:
                return None
        return usec / 2 / 1e6


def _one_line(text: str) -> str:
    # A newline would start another assignment: STATUS text must not be able to send READY=1.
    return " ".join(text.splitlines())
