"""The gate of one job: the policy, answering Claude Code's hook events over a private Unix socket.

A hook is a new process per tool call, and Python's start with vaultops's imports costs most of a tenth of
a second; the thin client (``vaultops.hook.client``) starts bare and asks this server, which has the policy
loaded already.  One server per job: the socket names the job, so the client needs to say nothing but the
event, and the job's scope comes from vaultops itself, never from the agent's environment.

The socket sits in a fresh folder only this user may enter (``mkdtemp``: mode 0700), under the system's
temp folder rather than the vault: a socket path must fit in about 100 bytes.  Each connection is one
event: the client sends it and shuts its side; the server answers ``<exit code>\\n<stdout>\\0<stderr>``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import struct
import tempfile
import threading
from pathlib import Path
from types import TracebackType

from vaultops.hook.answer import HookAnswer, OnRecord, answer, refusal
from vaultops.hook.heard import Heard
from vaultops.hook.job import GateJob
from vaultops.hook.memory import Memory

MAX_EVENT = 64 * 1024 * 1024  # bytes: a Write of a big file comes whole; past this the call is denied
READ_TIMEOUT = 5.0  # seconds a client may take to send its event (the client itself gives up after 5 s)
BACKLOG = 64  # parallel tool calls of one agent and its subagents


def encode(result: HookAnswer) -> bytes:
    """The reply the client prints: its exit code, stdout and stderr."""
    return b"%d\n%s\0%s" % (
        result.exit_code,
        result.stdout.encode("utf-8", "surrogateescape"),
        result.stderr.encode("utf-8", "surrogateescape"),
    )


class GateServer:
    """``with GateServer(job) as gate:`` answers on ``gate.socket_path`` until the block ends."""

    def __init__(self, job: GateJob, on_record: OnRecord | None = None, heard: Heard | None = None) -> None:
        self.job = job
        self.on_record = on_record
        self.heard = heard or Heard()  # the session's start and the calls judged: the proof's gate side
        self.memory = Memory.of(job)  # what this job's agent wrote: running it later is running its own code
        self.folder = Path(tempfile.mkdtemp(prefix="vaultops-gate-"))
        self.socket_path = self.folder / "s"
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.bind(str(self.socket_path))
            self._sock.listen(BACKLOG)
        except OSError:
            self._sock.close()
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="vaultops-gate", daemon=True)
        self._thread.start()

    def __enter__(self) -> GateServer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop answering: a client that comes later cannot connect, so its call is denied."""
        if self._closed.is_set():
            return
        self._closed.set()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._thread.join(READ_TIMEOUT)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(READ_TIMEOUT)
                if not _same_user(conn):
                    conn.sendall(encode(refusal("", "the event came from another user")))
                    return
                raw = _read_event(conn)
                if raw is None:
                    result = refusal("", f"the event is larger than {MAX_EVENT} bytes")
                else:
                    text = raw.decode("utf-8", "surrogateescape")
                    result = self.heard.hear(text) or answer(
                        text, self.job, on_record=self.on_record, memory=self.memory
                    )
                conn.sendall(encode(result))
            except OSError:
                return  # the client gave up: it has denied by itself


def _read_event(conn: socket.socket) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while chunk := conn.recv(65536):
        size += len(chunk)
        if size > MAX_EVENT:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _same_user(conn: socket.socket) -> bool:
    """The folder's mode keeps other users out already; where the kernel says who connected, check it."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    uid: int = struct.unpack("3i", creds)[1]
    return uid == os.getuid()
