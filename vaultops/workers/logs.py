"""A worker's log: ``stdout.log`` under its folder, rotated at a size limit, a few old ones kept.

Only the supervisor writes it (one writer, so rotation needs no lock between processes); readers may be
anywhere.  Rotation renames ``stdout.log`` to ``stdout.log.1`` (and ``.1`` to ``.2``, …), so a reader that
holds an offset into the current file notices the rotation because the file became shorter than it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from pathlib import Path
from typing import BinaryIO

from vaultops.base.confine import make_dirs, open_fd
from vaultops.base.redact import redact

LOG_NAME = "stdout.log"
# Lines in the log that are not the worker's stdout: its stderr, and what vaultops wrote to it (answers).
# Neither prefix opens a tag (vaultops.policy.tags), so they can never be read as the worker's reports.
STDERR_PREFIX = "[stderr] "
OWN_PREFIX = "[vaultops] "


def log_files(folder: Path, keep: int = 100) -> list[Path]:
    """The log and its rotated copies that exist, oldest first."""
    older = [folder / f"{LOG_NAME}.{i}" for i in range(keep, 0, -1)]
    return [p for p in [*older, folder / LOG_NAME] if p.exists()]


class RotatingLog:
    """Appends whole lines; rotates before a line would take the file past ``max_bytes``."""

    def __init__(self, folder: Path, max_bytes: int, keep: int) -> None:
        self.folder = folder
        self.path = folder / LOG_NAME
        self.max_bytes = max_bytes
        self.keep = keep
        self._lock = threading.Lock()  # stdout and stderr are drained by two threads
        make_dirs(folder)
        self._fh = self._open()  # held for the worker's whole life
        self._size = self._fh.tell()

    def write(self, line: bytes) -> None:
        """Append one line, redacted: a worker prints what its tools print."""
        line = redact(line.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        if not line.endswith(b"\n"):
            line += b"\n"
        with self._lock:
            if self._size and self._size + len(line) > self.max_bytes:
                self._rotate()
            self._fh.write(line)
            self._fh.flush()  # readers (logs, watch_reports) see each line as soon as it is written
            self._size += len(line)

    def _rotate(self) -> None:
        self._fh.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.folder / f"{LOG_NAME}.{self.keep}")
        for i in range(self.keep - 1, 0, -1):
            with contextlib.suppress(FileNotFoundError):
                os.replace(self.folder / f"{LOG_NAME}.{i}", self.folder / f"{LOG_NAME}.{i + 1}")
        os.replace(self.path, self.folder / f"{LOG_NAME}.1")
        self._fh = self._open()
        self._size = 0

    def _open(self) -> BinaryIO:
        return os.fdopen(open_fd(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab")

    def close(self) -> None:
        with self._lock:
            self._fh.close()


def tail(folder: Path, lines: int) -> list[str]:
    """The last ``lines`` lines across the log and its rotated copies."""
    out: deque[str] = deque(maxlen=max(lines, 0))
    if lines <= 0:
        return []
    for path in log_files(folder):
        with contextlib.suppress(FileNotFoundError), path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                out.append(line.rstrip("\n"))
    return list(out)


def read_since(folder: Path, offset: int) -> tuple[list[str], int]:
    """Whole lines of the current log after byte ``offset``, and the offset to read from next time.
    An offset past the end means the log rotated: the rest of the rotated copy is read, then the new file."""
    path = folder / LOG_NAME
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return [], 0
    chunks: list[bytes] = []
    if offset > size:
        with contextlib.suppress(FileNotFoundError), (folder / f"{LOG_NAME}.1").open("rb") as fh:
            fh.seek(offset)
            chunks.append(fh.read())
        offset = 0
    with path.open("rb") as fh:
        fh.seek(offset)
        data = fh.read()
    end = data.rfind(b"\n") + 1  # a line still being written is read next time
    chunks.append(data[:end])
    text = b"".join(chunks).decode("utf-8", "replace")
    return text.splitlines(), offset + end
