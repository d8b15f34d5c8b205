"""What a job's agent wrote, as its gate remembers it (``vaultops.policy.written``): each call the gate
lets through adds its writes before the answer goes out, so the next call is judged knowing them; a call
that was denied or escalated wrote nothing.

The memory outlives one gate: a job resumed after the person approved something (``claude --resume``), or
run again in the same worktree, starts a new gate, and what the agent wrote before is still its own code.
So with a vault it is kept in ``<vault>/.vaultops/state/written/``, one file per worktree, which neither
the gate (``.vaultops`` guards the agent) nor the sandbox lets the agent touch.  A file that cannot be
read counts as the whole worktree written: forgetting must never loosen the gate.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path

from vaultops.base.layout import STATE_DIR
from vaultops.hook.job import GateJob
from vaultops.policy.written import Written

FOLDER = "written"


def memory_path(job: GateJob) -> Path | None:
    """Where ``job``'s memory is kept; None without a vault or a worktree (it lives as long as the gate)."""
    if job.vault is None or not job.workdir:
        return None
    key = hashlib.sha256(os.path.realpath(job.workdir).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return job.vault / STATE_DIR / FOLDER / f"{key}.json"


class Memory:
    """One job's memory; calls come on parallel connections, so a lock."""

    def __init__(self, path: Path | None = None, workdir: str = "") -> None:
        self._lock = threading.Lock()
        self._path = path
        self._written = _load(path, workdir) if path is not None else Written()

    @classmethod
    def of(cls, job: GateJob) -> Memory:
        return cls(memory_path(job), job.workdir)

    @property
    def written(self) -> Written:
        with self._lock:
            return self._written

    def remember(self, more: Written) -> None:
        with self._lock:
            merged = self._written | more
            if merged == self._written:
                return
            self._written = merged
            if self._path is not None:
                _save(self._path, merged)


def _load(path: Path, workdir: str) -> Written:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Written()
    except (OSError, ValueError):
        return Written(trees=frozenset({os.path.realpath(workdir)} if workdir else ()))
    if not isinstance(raw, dict):
        return Written(trees=frozenset({os.path.realpath(workdir)} if workdir else ()))
    paths, trees = raw.get("paths"), raw.get("trees")
    return Written(
        frozenset(p for p in paths if isinstance(p, str)) if isinstance(paths, list) else frozenset(),
        frozenset(t for t in trees if isinstance(t, str)) if isinstance(trees, list) else frozenset(),
    )


def _save(path: Path, written: Written) -> None:
    """Whole or not at all (a temp file renamed over it); a disk that refuses leaves the gate's own copy,
    which still holds for this gate."""
    text = json.dumps({"paths": sorted(written.paths), "trees": sorted(written.trees)}, ensure_ascii=False)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".written-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as out:
                out.write(text)
            os.replace(temp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
