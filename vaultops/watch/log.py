"""The daemon's log: JSON lines in ``.vaultops/state/logs/daemon.jsonl`` (rotated), and a short human line
on stderr for each of them (what journald or ~/Library/Logs keeps)."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from vaultops.base.confine import confine, make_dirs, write_text
from vaultops.base.errors import UnsafePath
from vaultops.base.redact import redact, redact_fields

MAX_BYTES = 10_000_000
KEEP = 3


class DaemonLog:
    def __init__(self, path: Path, stream: TextIO | None = None) -> None:
        self.path = path
        self.stream = stream if stream is not None else sys.stderr
        self.lock = threading.Lock()
        make_dirs(path.parent)

    def _rotate(self) -> None:
        if self.path.exists() and self.path.stat().st_size > MAX_BYTES:
            for i in range(KEEP - 1, 0, -1):
                older = self.path.with_suffix(f".jsonl.{i}")
                if older.exists():
                    older.replace(self.path.with_suffix(f".jsonl.{i + 1}"))
            self.path.replace(self.path.with_suffix(".jsonl.1"))

    def write(self, level: str, event: str, **fields: Any) -> None:
        # each value redacted before it is encoded (an encoding hides secrets), then the line itself
        fields = redact_fields(fields)
        record = {"at": round(time.time(), 3), "level": level, "event": event, **fields}
        line = redact(json.dumps(record, ensure_ascii=False, default=str))
        human = " ".join([time.strftime("%H:%M:%S"), event, *(f"{k}={v}" for k, v in fields.items())])
        with self.lock:
            # a log folder linked out of the vault since: the line still reaches stderr (the pass says why)
            with contextlib.suppress(UnsafePath):
                confine(self.path)
                self._rotate()
                write_text(self.path, line + "\n", append=True)
            with contextlib.suppress(OSError, ValueError):  # stderr gone: the file log is what counts
                print(redact(human), file=self.stream, flush=True)

    def info(self, event: str, **fields: Any) -> None:
        self.write("info", event, **fields)

    def warn(self, message: str) -> None:
        self.write("warning", "warning", message=message)
