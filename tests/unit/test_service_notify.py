"""The sd_notify client without a socket: disabled when NOTIFY_SOCKET is unset, and the watchdog interval
honouring WATCHDOG_PID."""

from __future__ import annotations

import os

import pytest

from vaultops.service.systemd import Notifier


def test_disabled_when_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    for notifier in (Notifier({}), Notifier(), Notifier({"NOTIFY_SOCKET": ""})):
        assert not notifier.enabled
        assert notifier.send("READY=1") is False
        notifier.ready("up")  # nothing to do, nothing raised


def test_watchdog_interval_honours_watchdog_pid() -> None:
    usec = {"WATCHDOG_USEC": "30000000"}
    assert Notifier(usec).watchdog_interval == 15.0
    assert Notifier({**usec, "WATCHDOG_PID": str(os.getpid())}).watchdog_interval == 15.0
    assert Notifier({**usec, "WATCHDOG_PID": str(os.getpid() + 1)}).watchdog_interval is None
    assert Notifier({**usec, "WATCHDOG_PID": "nonsense"}).watchdog_interval is None
    assert Notifier({}).watchdog_interval is None
    assert Notifier({"WATCHDOG_USEC": "0"}).watchdog_interval is None
    assert Notifier({"WATCHDOG_USEC": "soon"}).watchdog_interval is None
