"""The daemon's log: JSON lines in ``.vaultops/state/logs/daemon.jsonl`` (rotated), and a short human line
on stderr for each of them (what journald or ~/Library/Logs keeps).

Writing the log never fails the daemon: a full or read-only disk, a deleted ``.vaultops/``, or a log file
that became a folder would otherwise end it at its next line, with a job's result unrecorded.  While the
file cannot be written its lines still reach stderr, which says once that the file cannot be written and
why; the first line that can be written again is preceded by one that says from when to when it could not.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from vaultops.base.confine import confine, make_dirs, write_text
from vaultops.base.errors import VaultopsError
from vaultops.base.redact import redact, redact_fields

MAX_BYTES = 10_000_000
KEEP = 3
WHEN = "%Y-%m-%d %H:%M:%S"


@dataclass
class Outage:
    """The file log cannot be written: since when, why (as first found), and how many lines missed it."""

    since: float
    reason: str
    missed: int = 0


def _reason(exc: Exception) -> str:
    if isinstance(exc, VaultopsError):
        return exc.message
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return repr(exc)


class DaemonLog:
    def __init__(self, path: Path, stream: TextIO | None = None) -> None:
        self.path = path
        self.stream = stream if stream is not None else sys.stderr
        self.lock = threading.Lock()
        self.outage: Outage | None = None
        with contextlib.suppress(OSError):  # a disk that refuses it now: said at the first line, if still
            make_dirs(path.parent)

    def _rotate(self) -> None:
        if self.path.exists() and self.path.stat().st_size > MAX_BYTES:
            for i in range(KEEP - 1, 0, -1):
                older = self.path.with_suffix(f".jsonl.{i}")
                if older.exists():
                    older.replace(self.path.with_suffix(f".jsonl.{i + 1}"))
            self.path.replace(self.path.with_suffix(".jsonl.1"))

    def _append(self, text: str) -> None:
        confine(self.path)  # a log folder linked out of the vault since: not written (the pass says why)
        self._rotate()
        try:
            write_text(self.path, text, append=True)
        except FileNotFoundError:
            # .vaultops/ (or its logs folder) deleted while the daemon runs: made again, never through a
            # symlink out of the vault (make_dirs checks each folder before and after)
            make_dirs(self.path.parent)
            write_text(self.path, text, append=True)

    def _record(self, level: str, event: str, fields: dict[str, Any]) -> tuple[str, str]:
        # each value redacted before it is encoded (an encoding hides secrets), then the line itself
        fields = redact_fields(fields)
        record = {"at": round(time.time(), 3), "level": level, "event": event, **fields}
        line = redact(json.dumps(record, ensure_ascii=False, default=str))
        human = " ".join([time.strftime("%H:%M:%S"), event, *(f"{k}={v}" for k, v in fields.items())])
        return line, redact(human)

    def _to_file(self, line: str) -> None:
        """``line`` into the file, after the line that ends an outage; an outage begun or gone on else."""
        outage, lines, ended = self.outage, [line], ""
        if outage is not None:
            ended = self._ended(outage)
            lines.insert(0, self._record("warning", "warning", {"message": ended})[0])
        try:
            self._append("".join(each + "\n" for each in lines))
        except Exception as exc:  # whatever it is, the daemon goes on: its lines still reach stderr
            if outage is None:
                self.outage = outage = Outage(time.time(), _reason(exc))
                self._say(
                    f"vaultops: the log {self.path} cannot be written: {outage.reason}; its lines go to"
                    " stderr only until it can"
                )
            outage.missed += 1
            return
        if outage is not None:
            self.outage = None
            self._say(f"vaultops: {ended}")

    def _ended(self, outage: Outage) -> str:
        since, until = time.strftime(WHEN, time.localtime(outage.since)), time.strftime(WHEN)
        return (
            f"the log could not be written from {since} to {until}: {outage.reason};"
            f" {outage.missed} lines of that time are only on stderr (journald)"
        )

    def _say(self, text: str) -> None:
        with contextlib.suppress(Exception):  # stderr gone (or closed): the file log is what counts
            print(redact(text), file=self.stream, flush=True)

    def write(self, level: str, event: str, **fields: Any) -> None:
        """One line in the file and on stderr.  Never raises: nothing the log meets may stop the daemon."""
        try:
            line, human = self._record(level, event, fields)
        except Exception as exc:  # a value that cannot be shown: the event is still said
            line = json.dumps({"at": round(time.time(), 3), "level": level, "event": event})
            human = f"{time.strftime('%H:%M:%S')} {event} (fields not shown: {exc!r})"
        with self.lock:
            self._to_file(line)
            self._say(human)

    def info(self, event: str, **fields: Any) -> None:
        self.write("info", event, **fields)

    def warn(self, message: str) -> None:
        self.write("warning", "warning", message=message)
