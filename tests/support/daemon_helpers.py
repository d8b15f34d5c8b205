"""Running the real daemon in tests: start it, edit the inbox like an editor, wait for what it writes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.helpers import fake_profiles_config, inbox_path, vault_with
from vaultops.model import Request
from vaultops.scan.note import parse_note


def daemon_vault(root: Path, inbox: str = "# Inbox\n", *, settle: float = 0, extra: str = "") -> Path:
    daemon = f"[inbox]\nsettle = {settle}\n\n[daemon]\nreconcile = 2\ngrace = 10\n\n{extra}"
    local = fake_profiles_config(timeout=60) + daemon
    return vault_with(root, inbox, local)  # local.toml is git-ignored, as in every vault


class Daemon:
    def __init__(self, vault: Path, env: dict[str, str] | None = None) -> None:
        self.vault = vault
        self.log = vault / ".vaultops" / "state" / "logs" / "daemon.jsonl"
        self.stderr = vault.parent / f"daemon-{time.time_ns()}.err"
        full = {**os.environ, **(env or {})}
        with self.stderr.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "vaultops", "--vault", str(vault), "run"],
                env=full,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )

    def wait_ready(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.log.exists() and '"event": "ready"' in self.log.read_text():
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"the daemon exited {self.proc.returncode}: {self.stderr.read_text()}")
            time.sleep(0.02)
        raise AssertionError(f"the daemon did not get ready: {self.stderr.read_text()}")

    def stop(self, sig: signal.Signals = signal.SIGTERM, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)

    def errors(self) -> str:
        return self.stderr.read_text()

    def explain(self, lines: int = 40) -> str:
        """For a failed wait: every request's state, the inbox's tail and the daemon's last log lines, whole
        (pytest shortens a dict in an assertion message, which hid the request that was stuck)."""
        states = {rid: r.state.value for rid, r in requests(self.vault).items()}
        log = self.log.read_text().splitlines()[-lines:] if self.log.exists() else ["(no log)"]
        inbox = inbox_path(self.vault).read_text()[-3000:]
        return "\n".join(
            [
                f"states: {states}",
                "--- inbox (tail) ---",
                inbox,
                "--- daemon log (tail) ---",
                *log,
                "--- stderr ---",
                self.errors()[-3000:],
            ]
        )


def requests(vault: Path) -> dict[str, Request]:
    note = parse_note("i", inbox_path(vault).read_bytes())
    return {r.id: r for r in note.requests}


def save_in_place(path: Path, text: str) -> None:
    """How Obsidian saves: truncate and write the same file."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write(text)


def save_by_rename(path: Path, text: str) -> None:
    """How many editors save: write a temp file next to it, then rename it into place."""
    tmp = path.with_name(f".{path.name}.swp-{time.time_ns()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def block(rid: str, text: str, kind: str = "research", ready: bool = True) -> str:
    return f"\n## {rid}\n- type: {kind}\n" + ("- ready: yes\n" if ready else "") + f"{text}\n"


def state_of(vault: Path, rid: str) -> str | None:
    """The inbox request's state, or None when it is not there."""
    request = requests(vault).get(rid)
    return None if request is None else request.state.value


def add_request(vault: Path, rid: str) -> None:
    """A research request appended to the inbox, saved as Obsidian saves."""
    path = inbox_path(vault)
    save_in_place(path, path.read_text() + block(rid, f"Summarise the notes for {rid}."))
