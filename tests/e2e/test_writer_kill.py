"""A writer SIGKILLed at random moments leaves the old note or the new one, never a mix, and no temp."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vaultops.scan.note import parse_note
from vaultops.scan.text import split_lines
from vaultops.store.notes import TEMP_SUFFIX, remove_stale_temps

# One process imports vaultops once and forks a fresh writer for each round (a writer per round, as a new
# process each would be, without paying Python's and vaultops's start-up 200 times): it prints the writer's
# pid, and once the writer is gone how it ended.
FORKS = r"""
import os
import sys
from pathlib import Path
from vaultops.config import Config
from vaultops.model import State
from vaultops.store.inserts import Insert, edits_for
from vaultops.model import Target
from vaultops.store.notes import NoteWriter
from vaultops.vault import Vault

root = Path(sys.argv[1])
rel = "_System/COO-Inbox.md"


def write_forever():
    writer = NoteWriter(Vault(root, Config()))
    while True:
        note = writer.read(rel)
        n = sum(1 for line in note.lines if "— write " in line)
        target = note.requests[n % len(note.requests)].id
        line = f"- status: done @ 2026-01-01T00:00:00+00:00 — write {n}"
        ins = [Insert(Target(target), (line,), frozenset(State))]
        writer.apply(rel, lambda nt: edits_for(nt, ins))


print("ready", flush=True)
for _ in sys.stdin:
    pid = os.fork()
    if pid == 0:
        try:
            write_forever()
        finally:
            os._exit(1)
    print(pid, flush=True)  # forked: the kill's timing starts from here, however slow the machine is
    _, status = os.waitpid(pid, 0)
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9
    print("killed" if killed else f"ended by itself ({status})", flush=True)
"""


def make_inbox(n: int) -> bytes:
    blocks = [
        f"## REQ-{i:04d} title {i}\n- type: env-check\nIs tool{i} installed?\n" + "filler line\n" * 20
        for i in range(n)
    ]
    return ("# Inbox\n\n" + "\n".join(blocks)).encode()


@pytest.mark.slow
def test_kill_nine_at_random_moments(tmp_path: Path) -> None:
    inbox = tmp_path / "_System" / "COO-Inbox.md"
    inbox.parent.mkdir(parents=True)
    original = make_inbox(300)  # ~200 KB, so that a write takes a while
    inbox.write_bytes(original)
    original_lines = split_lines(original.decode())
    script = tmp_path / "forks.py"
    script.write_text(FORKS)
    rng = random.Random(1234)
    seen_writes = 0
    mid_write = 0
    forks = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert forks.stdin is not None and forks.stdout is not None
    try:
        assert forks.stdout.readline() == "ready\n"  # the handshake: vaultops imported
        for _ in range(200):
            forks.stdin.write("go\n")
            forks.stdin.flush()
            pid = int(forks.stdout.readline())
            time.sleep(rng.uniform(0.0, 0.23))  # somewhere inside a write, or between two
            os.kill(pid, signal.SIGKILL)
            assert forks.stdout.readline() == "killed\n", "the writer was still writing when it was killed"
            seen_writes, landed = check(inbox, original_lines)
            mid_write += landed
    finally:
        forks.kill()
        forks.wait()
    assert seen_writes > 20, "the children got to write"
    assert mid_write > 0, "some kills landed in the middle of a write"


def check(inbox: Path, original_lines: list[str]) -> tuple[int, bool]:
    """(writes in the note, whether the kill left a temp file): the note is the old one or the new one."""
    raw = inbox.read_bytes()
    note = parse_note("_System/COO-Inbox.md", raw)
    lines = note.lines
    ours = [int(m.group(1)) for line in lines if (m := re.search(r"— write (\d+)$", line))]
    assert sorted(ours) == list(range(len(ours))), "each write is whole, once, in order"
    assert [line for line in lines if "— write " not in line] == original_lines, "nothing else changed"
    assert len(note.requests) == 300
    leftovers = list(inbox.parent.glob("*" + TEMP_SUFFIX))
    remove_stale_temps(inbox.parent)  # what the next writer does first
    assert not list(inbox.parent.glob("*" + TEMP_SUFFIX)), leftovers
    return len(ours), bool(leftovers)
