"""The supervisor: the small process that owns one worker's pipes.  ``python -m vaultops.workers.supervise``.

Why a process of its own: the CLI call that spawns a worker exits at once, yet the worker's output must
still be logged (and the log rotated), its tagged requests answered, and its liveness recorded.  The
supervisor leads the worker's process group (``terminate`` signals the group), starts the command with
its stdin on the worker's FIFO, drains stdout and stderr into the rotating log, answers each
``[REQUEST:…]`` on the FIFO, and records the exit code when the command ends.

It imports only what starting the command needs; the policy is loaded after the worker is running, so
spawn time is the time to start one small Python process.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from vaultops.base.confine import write_text
from vaultops.hook.job import GateJob, job_from_spec
from vaultops.run.process import _Tree, process_start_time
from vaultops.store.state import StateDB
from vaultops.workers.logs import OWN_PREFIX, STDERR_PREFIX, RotatingLog
from vaultops.workers.plans import NEWS_FILE, is_news
from vaultops.workers.registry import Registry, Worker

if TYPE_CHECKING:  # the supervisor starts bare: the config (pydantic) only for a persona's Zulip
    from vaultops.config import ZulipConfig
    from vaultops.run.proof import Proof

TOUCH_EVERY = 1.0  # seconds between liveness writes to state.db: a chatty worker must not hammer it
DRAIN_AFTER_EXIT = 2.0  # seconds to finish reading pipes a leftover grandchild may hold open
NOTIFY_AFTER_EXIT = 30.0  # seconds the worker's last notices may take to go out
NOTIFY_RETRY = 2.0  # seconds between looks at the outbox for notices due again
TREE_EVERY = 1.0  # seconds between looks at the worker's process tree
LEFTOVER_GRACE = 2.0  # seconds descendants left behind by the worker get between TERM and KILL


class Supervisor:
    def __init__(
        self, state: StateDB, worker: Worker, folder: Path, log: RotatingLog, policy: dict[str, str]
    ):
        self.state = state
        self.registry = Registry(state)
        self.worker = worker
        self.folder = folder
        self.log = log
        self.policy = policy
        self.db_lock = threading.Lock()  # one sqlite connection, used by the reader and the main thread
        self.answers: queue.Queue[str | None] = queue.Queue()
        self.notices: queue.Queue[Any] = queue.Queue()  # Notice, or None to stop
        self.last_touch = 0.0
        self.reader: Any = None  # a ReportReader, made at the first line (it imports the policy)
        self.stdin_fd = -1
        # Agent CLIs run tools in sessions of their own (Claude Code's Bash tool does), out of reach of a
        # signal to the worker's group; the tree remembers them (pid and start time) so they can be stopped
        self.tree: _Tree | None = None
        # the sampler thread and the TERM handler (which runs on the main thread, perhaps inside
        # stop_leftovers) share the tree: reentrant, so the handler never waits on its own thread
        self.tree_lock = threading.RLock()
        self.done = threading.Event()
        self.stopping = False
        self.sender = "vaultops"  # the vault's agent name, given by spawn
        self.zulip: ZulipConfig | None = None  # a persona posts to its own topic of the vault's Zulip stream
        self.gate_job: GateJob | None = None  # a Claude Code worker's gate, given by spawn
        self.proof: Proof | None = None  # ...and the proof that it saw every call (vaultops.run.proof)

    # --- output -------------------------------------------------------------------------------

    def drain_stdout(self, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            self.log.write(raw)
            self.touch()
            if self.proof is not None and (why := self.proof.feed(raw.decode("utf-8", "replace"))):
                self.ungated(why)
            try:
                self.report(raw.decode("utf-8", "replace").rstrip("\r\n"))
            except Exception as exc:  # a bug in judging one line must not stop the logging of the rest
                self.log.write(f"{OWN_PREFIX}could not judge that line: {exc!r}".encode())

    def drain_stderr(self, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            self.log.write(STDERR_PREFIX.encode() + raw)
            self.touch()

    def touch(self) -> None:
        """Liveness comes only from here: a line the worker itself printed (never an answer or inject)."""
        now = time.time()
        if now - self.last_touch >= TOUCH_EVERY:
            self.last_touch = now
            with self.db_lock:
                self.registry.touched(self.worker.name, now)

    def report(self, line: str) -> None:
        if self.reader is None:
            from vaultops.policy.table import PolicyTable
            from vaultops.workers.reports import ReportReader, worker_scope

            table = PolicyTable(overrides=self.policy)  # type: ignore[arg-type]  # checked by Config
            self.reader = ReportReader(worker_scope(self.worker.dir, self.worker.files), table)
        for item in self.reader.feed(line):
            with self.db_lock:
                self.state.event(
                    "worker_report",
                    worker=self.worker.name,
                    tag=item.kind,
                    label=item.label,
                    verdict=item.verdict.kind,
                    reason=item.verdict.reason,
                    line=item.line,
                )
            if self.worker.plan and is_news(item.kind, item.verdict.kind):
                self.tell_daemon()
            if item.answer is not None:
                self.answers.put(item.answer)
            if self.worker.notify or self.zulip is not None:
                from vaultops.workers.persona import persona_notice

                notice = persona_notice(self.worker.name, self.worker.persona, item)
                if notice is not None:
                    self.notices.put(notice)

    def tell_daemon(self) -> None:
        """The daemon watches this file: its plan note has news to write (after the report is in state.db)."""
        with contextlib.suppress(OSError):
            write_text(self.folder.parent / NEWS_FILE, f"{self.worker.name} {time.time()}\n")

    # --- input --------------------------------------------------------------------------------

    def write_answers(self) -> None:
        """Answers go through their own thread: a worker that is not reading its stdin must not stop
        the supervisor from draining its stdout (each would wait on the other)."""
        from vaultops.base.claude_code import stream_json_message

        while (answer := self.answers.get()) is not None:
            text = stream_json_message(answer) if self.worker.input == "stream-json" else answer
            with contextlib.suppress(OSError):
                os.write(self.stdin_fd, (text + "\n").encode())
            self.log.write((OWN_PREFIX + "answered: " + answer).encode())
            self.to_bus(answer)

    def to_bus(self, text: str) -> None:
        try:
            from vaultops.bus import Bus  # another part of vaultops; absent in older versions
        except ImportError:
            return
        try:
            with self.db_lock:
                Bus(self.state).send(self.sender, self.worker.name, text)
        except Exception as exc:  # the answer is on stdin already; a bus problem must not stop the worker
            self.log.write(f"{OWN_PREFIX}could not put the answer on the bus: {exc}".encode())

    def send_notices(self) -> None:
        """The worker's own notifiers, through the outbox (keyed, so a notice goes out once; a failure is
        retried with the outbox's back-off), in a thread of its own with a connection of its own: a slow
        chat server must not hold up the worker's output or its answers.  After the worker ends, what is
        due goes out once more; a notice still failing then waits in the outbox for a worker of this name."""
        from vaultops.notify.outbox import Outbox
        from vaultops.notify.send import deliver

        sender = f"worker:{self.worker.name}"
        state = StateDB(self.state.path)
        log = _OwnLog(self.log)
        try:
            ending = False
            while not ending:
                try:
                    notice = self.notices.get(timeout=NOTIFY_RETRY)
                except queue.Empty:
                    notice = False
                if notice is None:
                    ending = True
                elif notice:
                    Outbox(state, sender).queue(notice)
                deliver(state, self.worker.notify, log, sender=sender, zulip=self.zulip)
        finally:
            state.close()

    # --- the process tree -----------------------------------------------------------------------

    def watch_tree(self) -> None:
        assert self.tree is not None
        while not self.done.wait(TREE_EVERY):
            with self.tree_lock:
                self.tree.sample()
            if self.proof is not None and (why := self.proof.overdue()):
                self.ungated(why)

    def ungated(self, why: str, stop: bool = True) -> None:
        """A tool call its gate did not see: the worker is stopped at once (as ``terminate`` stops it), and
        its plan note says why, which tells the person (``vaultops.workers.plans``).  The report is written
        first, a few milliseconds: the worker's end, recorded once it is stopped, must find it there."""
        from vaultops.run.proof import GATE_INCIDENT
        from vaultops.workers.plans import UNGATED

        with self.db_lock:
            self.state.event(GATE_INCIDENT, self.worker.plan, None, worker=self.worker.name, reason=why)
            self.state.event(
                "worker_report", worker=self.worker.name, tag=UNGATED, label="gate", verdict="deny",
                reason=why, line=why,
            )  # fmt: skip
        if stop:
            self.on_term(signal.SIGTERM, None)
        self.log.write(f"{OWN_PREFIX}{why}".encode())
        if self.worker.plan:
            self.tell_daemon()

    def on_term(self, signum: int, frame: object) -> None:
        """``terminate`` sends SIGTERM to the supervisor alone, so that the worker's tree is sampled while
        the worker still lives (once it is gone, what it started in sessions of its own belongs to init and
        cannot be found); the supervisor then passes the TERM on to its group and to those descendants, and
        stays to log the last lines and record the exit.  (A handler, not SIG_IGN, which the worker would
        inherit across exec.)"""
        if self.stopping:
            return  # our own TERM to the group, coming back to us
        self.stopping = True
        with self.tree_lock:
            if self.tree is not None:
                self.tree.sample()
            with contextlib.suppress(OSError):
                os.killpg(os.getpgrp(), signal.SIGTERM)
            if self.tree is not None:
                self.tree.signal(signal.SIGTERM)

    def stop_leftovers(self) -> None:
        """What the worker left running when it ended: TERM, then KILL (only processes whose start time
        still matches, never a stranger that reused a pid)."""
        with self.tree_lock:
            if self.tree is None or not self.tree.alive():
                return
            left = self.tree.alive()
            self.tree.signal(signal.SIGTERM)
            deadline = time.monotonic() + LEFTOVER_GRACE
            while self.tree.alive() and time.monotonic() < deadline:
                time.sleep(0.05)
            self.tree.signal(signal.SIGKILL)
        self.log.write(f"{OWN_PREFIX}stopped what the worker left running: pids {left}".encode())

    # --- life ---------------------------------------------------------------------------------

    def run(self) -> int:
        """The worker's whole life; a Claude Code worker behind its gate, which this process hosts."""
        command = list(self.worker.command)
        if self.gate_job is None:
            return self._run(command)
        from vaultops.base.claude_code import is_claude
        from vaultops.hook.claude import GateSetupError, gated_command  # the policy: only a gated worker
        from vaultops.hook.heard import Heard
        from vaultops.run.proof import Proof

        heard = Heard()
        self.proof = Proof(heard) if is_claude(command) else None
        try:
            with gated_command(self.gate_job, command, self.gate_escalated, heard) as argv:
                return self._run(argv)
        except GateSetupError as exc:
            self.log.write(f"{OWN_PREFIX}could not start {command[0]}: {exc}".encode())
            with self.db_lock:
                self.registry.ended(self.worker.name, "failed", None)
            return 1

    def gate_escalated(self, record: Mapping[str, Any]) -> None:
        """A tool call the gate stopped for the person: news for the plan note, as the worker's own
        escalation would be, naming the call."""
        from vaultops.store.asked import describe

        reason = f"the policy gate stopped {describe([record])}: {record.get('reason')}"
        with self.db_lock:
            self.state.event(
                "worker_report",
                worker=self.worker.name,
                tag="ESCALATE",
                label=str(record.get("action") or "tool_call"),
                verdict=str(record.get("kind") or "escalate"),
                reason=reason,
                line=f"[ESCALATE:{record.get('action')}] {reason}",
            )
        if self.worker.plan:
            self.tell_daemon()

    def _run(self, command: list[str]) -> int:
        name = self.worker.name
        # read-write: the FIFO then always has a writer, so the worker never sees EOF on stdin between
        # two `inject` calls (each opens, writes and closes it)
        self.stdin_fd = os.open(self.folder / "stdin", os.O_RDWR)
        try:
            proc = subprocess.Popen(
                command,
                cwd=self.worker.dir,
                stdin=self.stdin_fd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                close_fds=True,
            )
        except (OSError, ValueError) as exc:
            self.log.write(f"{OWN_PREFIX}could not start {self.worker.command[0]}: {exc}".encode())
            with self.db_lock:
                self.registry.ended(name, "failed", 127)
            return 1
        with self.db_lock:
            self.registry.running(name, proc.pid, process_start_time(proc.pid))
        self.tree = _Tree(proc.pid)
        assert proc.stdout is not None and proc.stderr is not None
        readers = [
            threading.Thread(target=self.drain_stdout, args=(proc.stdout,), daemon=True),
            threading.Thread(target=self.drain_stderr, args=(proc.stderr,), daemon=True),
        ]
        writer = threading.Thread(target=self.write_answers, daemon=True)
        sampler = threading.Thread(target=self.watch_tree, daemon=True)
        notifier = threading.Thread(target=self.send_notices, daemon=True)
        for thread in [*readers, writer, sampler, notifier]:
            thread.start()
        code = proc.wait()
        self.done.set()
        self.stop_leftovers()
        for thread in readers:
            thread.join(DRAIN_AFTER_EXIT)
        if self.proof is not None and not self.proof.reason and (why := self.proof.ended()):
            self.ungated(why, stop=False)  # it has ended: its note and the person are told all the same
        self.answers.put(None)
        writer.join(DRAIN_AFTER_EXIT)
        with self.db_lock:
            now = time.time()
            current = self.registry.get(name)
            stopped = current is not None and current.stop_requested is not None
            self.registry.ended(name, "exited" if code == 0 or stopped else "failed", code)
        if self.worker.plan:
            self.tell_daemon()
        self.log.write(f"{OWN_PREFIX}the worker ended with exit code {code} at {now:.0f}".encode())
        self.notices.put(None)  # after the end is recorded: a slow notifier must not make it look lost
        notifier.join(NOTIFY_AFTER_EXIT)
        return 0


class _OwnLog:
    """The notifier's log lines, in the worker's log as vaultops's own (never the URLs: they are redacted
    by the sender, and may hold a token)."""

    def __init__(self, log: RotatingLog) -> None:
        self.log = log

    def info(self, event: str, **fields: Any) -> None:
        if event == "notified":
            self.log.write(f"{OWN_PREFIX}notified: {fields.get('key', '')}".encode())

    def warn(self, message: str) -> None:
        self.log.write(f"{OWN_PREFIX}{message}".encode())


def _vault_zulip(state_db: Path) -> ZulipConfig | None:
    """The vault's ``[notify.zulip]``, when it can post: a persona's notices go to its own topic there."""
    from vaultops.config import load_config  # only for a worker with a persona

    root = state_db.parent.parent.parent  # <vault>/.vaultops/state/state.db
    try:
        zulip = load_config(root).notify.zulip
    except Exception:  # a config that cannot be read: its own URLs still tell the person
        return None
    return zulip if zulip.site and zulip.stream and zulip.api_key.get_secret_value() else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vaultops-supervise")
    parser.add_argument("state_db")
    parser.add_argument("folder")
    parser.add_argument("name")
    parser.add_argument("--log-max", type=int, default=1_000_000)
    parser.add_argument("--log-keep", type=int, default=3)
    parser.add_argument("--policy", default="{}")
    parser.add_argument("--sender", default="vaultops", help="who the answers on the bus are from")
    parser.add_argument("--gate", default="", help="the job the policy gate guards (JSON), if gated")
    args = parser.parse_args(argv)
    state = StateDB(Path(args.state_db))
    registry = Registry(state)
    worker = registry.get(args.name)
    deadline = time.monotonic() + 10
    while worker is None and time.monotonic() < deadline:  # spawn commits the row just after starting us
        time.sleep(0.005)
        worker = registry.get(args.name)
    if worker is None:
        print(f"no worker named {args.name} in {args.state_db}", file=sys.stderr)
        return 2
    folder = Path(args.folder)
    log = RotatingLog(folder, args.log_max, args.log_keep)
    supervisor = Supervisor(state, worker, folder, log, json.loads(args.policy))
    supervisor.sender = args.sender
    supervisor.gate_job = job_from_spec(args.gate) if args.gate else None
    if worker.persona:
        supervisor.zulip = _vault_zulip(Path(args.state_db))
    signal.signal(signal.SIGTERM, supervisor.on_term)
    try:
        return supervisor.run()
    finally:
        log.close()


if __name__ == "__main__":
    sys.exit(main())
