"""Approving from the phone: how soon a Telegram button press is the note's decision line, and the approved
job has run, under the daemon (loopback Bot API, a fake agent).  The baseline, measured in the same run,
is the same approval typed into the note (an editor's save, seen by the daemon's watcher).

    .venv/bin/python benchmarks/approve.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from tests.support.fake_servers import FakeBotAPI  # noqa: E402
from tests.support.helpers import make_vault  # noqa: E402

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
ME = 4242
INBOX = "_System/COO-Inbox.md"


def wait(what: Callable[[], Any], limit: float = 20.0) -> Any:
    deadline = time.perf_counter() + limit
    while not (found := what()):
        if time.perf_counter() > deadline:
            raise SystemExit("timed out waiting")
        time.sleep(0.0005)
    return found


def measure(runs: int) -> tuple[list[float], list[float], list[float], list[float]]:
    """(press → decision line, press → job ran, note save → approved line, note save → job ran), seconds."""
    with tempfile.TemporaryDirectory() as tmp, FakeBotAPI(TOKEN) as api:
        vault = make_vault(Path(tmp) / "v", "# Inbox\n")
        with (vault / ".vaultops" / "local.toml").open("a") as fh:
            fh.write(f'\n[notify.telegram]\ntoken = "{TOKEN}"\nchat_ids = [{ME}]\napi_base = "{api.base}"\n')
            fh.write("[inbox]\nsettle = 0\n")
        log = Path(tmp) / "runs.log"
        log.touch()
        env = {**os.environ, "FAKE_AGENT_LOG": str(log)}
        argv = [sys.executable, "-m", "vaultops", "--vault", str(vault), "run"]
        proc = subprocess.Popen(argv, env=env, stderr=subprocess.DEVNULL)
        inbox = vault / INBOX
        pressed: list[float] = []
        ran: list[float] = []
        typed: list[float] = []
        typed_ran: list[float] = []
        try:
            for i in range(2 * runs):
                rid = f"REQ-rotate-{i}"
                with inbox.open("a") as fh:
                    fh.write(f"\n## {rid}\n- ready: yes\nRotate the Stripe secret key of shop {i}.\n")
                message = wait(partial(_message, api, rid))
                start = time.perf_counter()
                if i % 2 == 0:  # the press
                    api.press(message, "Approve once")
                    wait(partial(_said, inbox, rid, "via Telegram button"))
                    pressed.append(time.perf_counter() - start)
                else:  # the baseline: the same answer typed into the note
                    inbox.write_text(_with_answer(inbox.read_text(), rid))
                    wait(partial(_said, inbox, rid, "- status: approved"))
                    typed.append(time.perf_counter() - start)
                wait(partial(_ran, log, rid))
                (ran if i % 2 == 0 else typed_ran).append(time.perf_counter() - start)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
    return pressed, ran, typed, typed_ran


def _message(api: FakeBotAPI, rid: str) -> dict[str, Any] | None:
    return next((m for m in api.sent if f"{rid} is escalated" in m["text"]), None)


def _said(inbox: Path, rid: str, words: str) -> bool:
    return words in _block(inbox, rid)


def _ran(log: Path, rid: str) -> bool:
    return rid in log.read_text().split()


def _block(inbox: Path, rid: str) -> str:
    text = inbox.read_text()
    start = text.find(f"## {rid}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _with_answer(text: str, rid: str) -> str:
    block = _block_in(text, rid)
    return text.replace(block, block.rstrip("\n") + "\n- decision: approve\n", 1)


def _block_in(text: str, rid: str) -> str:
    start = text.find(f"## {rid}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end + 1 if end >= 0 else len(text)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    pressed, ran, typed, typed_ran = measure(args.runs)

    def ms(values: list[float]) -> str:
        return f"p50 {1000 * statistics.median(values):6.1f} ms, max {1000 * max(values):6.1f} ms"

    def ratio(values: list[float], base: list[float]) -> str:
        return f"{statistics.median(values) / statistics.median(base):.2f}x"

    print(f"approve   note save -> approved line (baseline)     {ms(typed)}   1.00x")
    print(f"approve   button press -> decision line             {ms(pressed)}   {ratio(pressed, typed)}")
    print(f"approve   note save -> the approved job ran (base)  {ms(typed_ran)}   1.00x")
    print(f"approve   button press -> the approved job ran      {ms(ran)}   {ratio(ran, typed_ran)}")


if __name__ == "__main__":
    main()
