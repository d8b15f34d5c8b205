"""What every stage of one pass shares: the vault, state.db, the clock, the note writer and the publisher,
and the report the stages add to.  Each note is named on every call (``read(rel)``, ``write(rel, …)``):
nothing here is "the current note".

Reading vets the note (only answers that are answers count, ``engine.provenance``); writing puts
insertions in with one write per note and keeps what could not be placed, so a result is never lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from vaultops.base.errors import VaultopsError
from vaultops.decide.budget import Budget, day_start
from vaultops.decide.gate import Clone
from vaultops.engine.moved import Gone, inbox_gone
from vaultops.engine.ports import Sides
from vaultops.engine.provenance import Vetter
from vaultops.engine.publish import Publisher
from vaultops.engine.report import PassReport
from vaultops.engine.tell import Teller
from vaultops.model import Lock, PassOutcome, State
from vaultops.render.late import late_result
from vaultops.scan.note import ParsedNote
from vaultops.store.inserts import CLAIM_LOST, MISSING, Applied, Insert, edits_for
from vaultops.store.notes import NoteWriter, WriteResult, conflict_message
from vaultops.store.state import StateDB
from vaultops.vault import Vault

Clock = Callable[[], datetime]
EVERY_STATE = frozenset(State)
OTHER_GIT_WAIT = 30.0  # seconds a write waits for another tool's rebase or merge to end


def local_now() -> datetime:
    return datetime.now().astimezone()


@dataclass(frozen=True, slots=True)
class Unplaced:
    """A result whose request was not in its note as read (caught mid-save): tried again later."""

    rel: str
    insert: Insert


@dataclass
class Context:
    vault: Vault
    state: StateDB
    clock: Clock
    writer: NoteWriter
    publisher: Publisher
    report: PassReport = field(default_factory=PassReport)
    unplaced: list[Unplaced] = field(default_factory=list)
    sides: Sides = field(default_factory=Sides)  # the twins a test runs the pass on (``engine.memory``)

    def __post_init__(self) -> None:
        self.config = self.vault.config
        self.last_read: dict[str, ParsedNote] = {}  # each note as this pass last read it
        self.teller = Teller(self.vault, self.state, self.report.warnings, self.sides)
        self.vetter = Vetter(
            self.state, self.publisher.git, self.config.answers.authors, self.writer.parse, mine=self.mine
        )

    @property
    def inbox(self) -> str:
        return self.vault.inbox_rel

    @cached_property
    def inbox_gone(self) -> Gone | None:
        """The configured inbox's absence, and where it went (``engine.moved``); asked once a pass."""
        return inbox_gone(self.vault, self.publisher.git, self.writer.read)

    def notes(self) -> list[str]:
        """The notes a pass reads, in order: the inbox, then each plan note of the queue folder."""
        return [self.inbox, *self.vault.plan_notes()]

    def warn(self, line: str) -> None:
        self.report.warn(line)

    def mine(self, lock: Lock) -> bool:
        """A claim made by this clone."""
        return self.clone(lock).made(lock)

    def clone(self, *locks: Lock) -> Clone:
        """This clone, knowing which of ``locks`` it made: state.db is asked only of this host's and agent's
        (it records no other)."""
        me = (self.vault.host, self.vault.agent)
        known = frozenset(
            lk.claim for lk in locks if (lk.host, lk.agent) == me and self.state.knows_claim(lk.claim)
        )
        return Clone(*me, self.publisher.shared, known)

    def budget(self) -> Budget:
        spent = self.state.cost_since(day_start(self.clock()))
        return Budget(self.config.limits.daily_budget_usd, spent)

    # --- notes --------------------------------------------------------------------------------

    def read(self, rel: str, *, full: bool = False) -> ParsedNote | None:
        """The note as its answers stand (forged ones set aside), or None when it cannot be worked on now;
        the report says why.  ``full``: every request whole, finished ones too (``NoteWriter.parse``)."""
        try:
            note = self.writer.read(rel, full=full)
        except VaultopsError as exc:
            self.warn(exc.message)
            return None
        if note is None:
            if rel == self.inbox and (gone := self.inbox_gone) is not None:
                self.warn(gone.sentence())  # never `vaultops init`: a moved inbox would get a second one
            return None
        if note.frontmatter_error:
            self.warn(f"{rel}: {note.frontmatter_error}")
        if note.conflict_line is not None:
            self.warn(conflict_message(note))
            return None
        note, waiting = self.vetter.note(note)  # only the answers that are answers, from here on
        for line in waiting:
            self.warn(line)
        self.last_read[rel] = note
        return note

    def write(self, rel: str, inserts: list[Insert]) -> tuple[WriteResult | None, Applied]:
        applied = Applied()
        if not inserts:
            return None, applied
        self.wait_for_other_git()
        try:
            result = self.writer.apply(rel, lambda note: edits_for(note, inserts, applied))
            self.vetter.remember(rel, applied.written())
        except VaultopsError as exc:  # conflict markers, a note grown too big, one that keeps changing
            self.warn(exc.message)
            applied.landed.clear()
            self.unplaced += [Unplaced(rel, ins) for ins in inserts if ins.claim]  # tried again later
            return None, applied
        if result.changed and rel not in self.report.written:
            self.report.written.append(rel)
        late = []
        for ins, why in applied.dropped:
            if why == MISSING and ins.claim:
                self.unplaced.append(Unplaced(rel, ins))  # a result must not be lost: tried again later
            elif why == CLAIM_LOST and late_result(ins.lines, ins.claim):
                late.append(Insert(ins.target, tuple(late_result(ins.lines, ins.claim)), EVERY_STATE))
                self.report.warnings.append(
                    f"{ins.target.request_id}: claim {ins.claim} was taken over before its result arrived; "
                    "the result is kept as a late result"
                )
            else:
                self.report.warnings.append(f"{ins.target.request_id}: not recorded, {why}")
        if late:
            self.write(rel, late)
        return result, applied

    def wait_for_other_git(self) -> None:
        """A rebase or merge that obsidian-git (or the person) has under way rewrites the notes as it goes:
        lines written into one meanwhile would be lost.  Wait for it to end (it takes seconds); after
        ``OTHER_GIT_WAIT`` write anyway, as the lines would be put back from state.db by a later pass."""
        git = self.publisher.git
        if not self.publisher.shared or not (git.git_dir / "HEAD").exists():
            return
        deadline = time.monotonic() + OTHER_GIT_WAIT
        while git.in_progress() and time.monotonic() < deadline:
            time.sleep(0.1)

    def pull(self) -> None:
        self.publisher.pull(self.report.warnings)

    def commit(self, drawn: Collection[str] = ()) -> None:
        """Commit (and, with a remote, push) what this pass wrote and what earlier ones could not.
        ``drawn``: the daily notes this pass wrote; with the dashboard and the machine notes, a daemon
        holds changes to them alone for ``[git] batch`` seconds (``Publisher.hold``): its claims and
        results went to the remote as commits of their own already."""
        if not self.publisher.git.is_repo():
            if self.report.written and self.state.get("warned-no-git") is None:
                self.report.warnings.append(
                    f"{self.vault.root} is not a git repository; results are not committed"
                )
                self.state.set("warned-no-git", "1")
            return
        written = self.report.written
        waiting = {*written, *self.publisher.uncommitted}
        rendered = tuple(self.vault.rendered_paths)
        held = {*drawn, *self.publisher.held}
        drawn_only = bool(waiting) and all(p in held or p.startswith(rendered) for p in waiting)
        if drawn_only and not self.report.urgent and self.publisher.hold(written):
            return
        if drawn_only and not self._rendered_only():  # a result's commit already named its requests
            outcomes = [PassOutcome("daily note and dashboard", "updated", "")]
        else:
            outcomes = self.report.outcomes or self._rendered_only()
        self.report.commit = self.publisher.commit(written, outcomes, self.report.warnings)

    def _rendered_only(self) -> list[PassOutcome]:
        """A commit of the dashboard alone says so ("vaultops: dashboard heartbeat" when it carries this
        machine's heartbeat)."""
        rendered = self.vault.rendered_paths
        if not self.report.written or not rendered:
            return []
        mine = [p for p in self.report.written if p.startswith(rendered[-1])]
        if len(mine) + (rendered[0] in self.report.written) != len(self.report.written):
            return []
        return [PassOutcome("dashboard", f"heartbeat of {self.vault.host}" if mine else "updated", "")]
