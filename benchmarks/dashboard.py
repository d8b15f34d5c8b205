"""The dashboard on a 10,000-request inbox: what drawing it adds to a pass.

The baseline is the pass's own parse of the same inbox; the dashboard's stage parses it whole (finished
requests with their outcome) and vets its answers, then renders.  ``show`` is measured on a vault, once
with the inbox just changed (a fresh parse) and once unchanged (what most passes see).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from inbox_gen import inbox

from vaultops.engine.context import Context
from vaultops.engine.dashboard import fleet, show
from vaultops.engine.publish import Publisher
from vaultops.render.dashboard import render_dashboard
from vaultops.scan.note import parse_note
from vaultops.store.notes import NoteWriter
from vaultops.store.state import StateDB
from vaultops.vault import Vault


def _time(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def measure(n: int = 10_000, runs: int = 5) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="vaultops-dash-"))
    try:
        subprocess.run([sys.executable, "-m", "vaultops", "init", str(root)], capture_output=True, check=True)
        text = inbox(n)
        path = root / "_System" / "COO-Inbox.md"
        path.write_text(text)
        raw = path.read_bytes()
        vault = Vault.open(root)
        state = StateDB(vault.state_dir / "state.db")
        now = lambda: datetime.now().astimezone()  # noqa: E731
        ctx = Context(vault, state, now, NoteWriter(vault), Publisher.open(vault))
        parse = _time(lambda: parse_note(vault.inbox_rel, raw, full=False), runs)
        drawn = fleet(ctx, datetime.now().astimezone())
        assert drawn is not None
        render = _time(lambda: render_dashboard(drawn), runs)
        unchanged = _time(lambda: show(ctx), runs)

        def changed() -> None:
            ctx.writer._parsed.clear()  # as after a save: the inbox is parsed again
            show(ctx)

        fresh = _time(changed, runs)
        state.close()
        return {"parse": parse, "render": render, "show_unchanged": unchanged, "show_changed": fresh}
    finally:
        shutil.rmtree(root, ignore_errors=True)
