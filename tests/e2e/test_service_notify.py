"""The sd_notify client against real Unix datagram sockets, as systemd's would be."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultops.service.systemd import Notifier


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """A datagram socket bound where $NOTIFY_SOCKET would point; (socket, its address)."""
    path = tmp_path / "notify.sock"
    if len(str(path)) >= 100:  # sun_path holds 108 bytes
        pytest.skip(f"{path} is too long for a Unix socket address")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(5)
        yield sock, str(path)


def test_ready_arrives_with_its_fields(listener: tuple[socket.socket, str]) -> None:
    sock, address = listener
    notifier = Notifier({"NOTIFY_SOCKET": address})
    assert notifier.enabled
    notifier.ready("watching ~/vault")
    assert sock.recv(4096) == b"READY=1\nSTATUS=watching ~/vault"


def test_watchdog_status_and_stopping_arrive(listener: tuple[socket.socket, str]) -> None:
    sock, address = listener
    notifier = Notifier({"NOTIFY_SOCKET": address})
    notifier.watchdog()
    assert sock.recv(4096) == b"WATCHDOG=1"
    notifier.status("2 jobs running")
    assert sock.recv(4096) == b"STATUS=2 jobs running"
    notifier.stopping("waiting for 2 jobs")
    assert sock.recv(4096) == b"STOPPING=1\nSTATUS=waiting for 2 jobs"
    assert notifier.send("STATUS=ü", "EXTEND_TIMEOUT_USEC=5000000")
    assert sock.recv(4096) == "STATUS=ü\nEXTEND_TIMEOUT_USEC=5000000".encode()


def test_a_status_text_cannot_smuggle_another_assignment(listener: tuple[socket.socket, str]) -> None:
    sock, address = listener
    Notifier({"NOTIFY_SOCKET": address}).status("done\nREADY=1")
    assert sock.recv(4096) == b"STATUS=done READY=1"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the abstract namespace is Linux's")
def test_abstract_namespace_socket() -> None:
    name = f"vaultops-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(5)
        notifier = Notifier({"NOTIFY_SOCKET": "@" + name})
        notifier.ready("up")
        assert sock.recv(4096) == b"READY=1\nSTATUS=up"
        notifier.watchdog()
        assert sock.recv(4096) == b"WATCHDOG=1"


def test_no_error_when_the_socket_is_gone(tmp_path: Path) -> None:
    path = tmp_path / "gone.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
    path.unlink()  # systemd went away (or restarted) under the daemon
    notifier = Notifier({"NOTIFY_SOCKET": str(path)})
    assert notifier.enabled
    assert notifier.send("WATCHDOG=1") is False
    notifier.ready("up")
    notifier.watchdog()
    notifier.stopping("bye")
    assert Notifier({"NOTIFY_SOCKET": str(tmp_path / "no" / "such" / "dir")}).send("READY=1") is False
    assert Notifier({"NOTIFY_SOCKET": "@vaultops-nobody-listens-" + uuid.uuid4().hex}).send("X=1") is False


def test_reads_the_process_environment_by_default(
    listener: tuple[socket.socket, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sock, address = listener
    monkeypatch.setenv("NOTIFY_SOCKET", address)
    Notifier().watchdog()
    assert sock.recv(4096) == b"WATCHDOG=1"


def test_a_child_process_under_notify_socket(listener: tuple[socket.socket, str]) -> None:
    """As systemd starts the daemon: the variables in its environment, the pid its own."""
    sock, address = listener
    code = (
        "import os; from vaultops.service.systemd import Notifier; n = Notifier(); "
        "assert n.watchdog_interval == 5.0, n.watchdog_interval; n.ready(f'pid {os.getpid()}')"
    )
    env = {**os.environ, "NOTIFY_SOCKET": address, "WATCHDOG_USEC": "10000000"}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    assert proc.wait(timeout=30) == 0
    assert sock.recv(4096) == f"READY=1\nSTATUS=pid {proc.pid}".encode()
