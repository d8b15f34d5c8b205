"""Who wrote the lines that a request's answers stand on: the I/O half of vaultops.decide.trust.

vaultops knows its own lines from its own records.  Every status line it writes (and every answer it
writes for the person, from a Telegram reply) is remembered in state.db, by note, request and exact text,
before the write puts it in the note.  A status line the records do not have, for that request, is not
vaultops's, however much it looks like one; a copy of a real line from another request is not either.

Git is a fallback for one case only, and it never makes a line count.  With several machines, another
clone's vaultops may have written the escalation the person answers: this clone has no record of it, and
finds it came in with a commit authored as vaultops.  Such a line only makes this clone wait (the machine
that wrote it knows it, and acts on the answer through the remote, as claims do).  Trusting it would not be
safe: a commit's author is whatever whoever made the commit says (an agent that commits its requests can
call itself ``vaultops (hermes-coo)``), and vaultops's own commits stage whole notes, so they carry lines
that someone else typed and had not committed yet.  Neither makes a line vaultops's.

``[answers] authors`` asks git who brought each answer line in (``git blame`` over the note as it was read).
That is as strong as the rule over who may commit under which name in the vault's repository: git does not
check an author's name, and vaultops does not check signatures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from vaultops import lines as fmt
from vaultops.decide.trust import By, Committer, Origin, Provenance, standing, vet
from vaultops.model import Request
from vaultops.pipeline.plan import Insert
from vaultops.scan.note import ParsedNote
from vaultops.store.state import StateDB
from vaultops.sync.git import AUTHOR_PREFIX, Git

_REMEMBERED = frozenset({"status", "decision", "retry", "cancel"})


def own_lines(inserts: Sequence[Insert]) -> list[tuple[str, str]]:
    """The (request id, line) pairs of ``inserts`` that vaultops remembers writing: status lines, and the
    answers it writes for the person."""
    out = []
    for ins in inserts:
        for line in ins.lines:
            item = fmt.item_field(line) if line.startswith("- ") else None
            if item is not None and item[0] in _REMEMBERED:
                out.append((ins.target.request_id, line))
    return out


class Vetter:
    """Lives as long as a pass: blame answers are kept per version of a note."""

    def __init__(self, state: StateDB, git: Git, authors: tuple[str, ...] | None) -> None:
        self.state = state
        self.git = git
        self.authors = frozenset(" ".join(a.split()) for a in authors) if authors is not None else None
        self._blamed: dict[tuple[str, str], dict[int, str]] = {}

    def remember(self, rel: str, inserts: Sequence[Insert]) -> None:
        """``inserts`` that a write put in the note, or that a push is about to carry.  Only what vaultops
        itself inserts: a line it meant to write and found in the note already is not remembered, or a
        forger who typed, to the second, the escalation vaultops was about to write would own it.  A kill
        between the write and this leaves a line of vaultops's it does not know: its answer is then
        taken for a forgery and escalated afresh, which is safe."""
        pairs = own_lines(inserts)
        if pairs:
            self.state.remember_lines(rel, pairs)

    def note(self, note: ParsedNote) -> tuple[ParsedNote, list[str]]:
        """The note with only the answers that count, and why some of them wait."""
        if not any(standing(r) for r in note.requests):
            return note, []
        requests: list[Request] = []
        waiting: list[str] = []
        for request in note.requests:
            if not standing(request):
                requests.append(request)
                continue
            vetted = vet(request, note.lines, self.provenance(note, request))
            requests.append(vetted.request)
            if vetted.waiting:
                waiting.append(vetted.waiting)
        return replace(note, requests=requests), waiting

    def provenance(self, note: ParsedNote, request: Request) -> Provenance:
        status = self._status_origin(note, request)
        if self.authors is None or status in (Origin.VAULTOPS, Origin.OTHER):
            return Provenance(status)
        answers = standing(request)
        blamed = self._blame(note, [a.line for a in answers])
        committers = {}
        for a in answers:
            text = note.lines[a.line]
            who = blamed.get(a.line)
            if self.state.wrote_line(note.rel, request.id, text):
                committers[a.line] = Committer(By.VAULTOPS)
            elif who is None:
                committers[a.line] = Committer(By.UNCOMMITTED)
            else:
                listed = " ".join(who.split()) in self.authors
                committers[a.line] = Committer(By.LISTED if listed else By.UNLISTED, who)
        return Provenance(status, committers)

    def _status_origin(self, note: ParsedNote, request: Request) -> Origin | None:
        if not request.statuses:
            return None
        n = request.statuses[-1].line
        text = note.lines[n]
        if note.lines[request.start : request.end].count(text) > 1:
            return Origin.OTHER  # vaultops never writes one status line twice: one of them is a copy
        if self.state.wrote_line(note.rel, request.id, text):
            return Origin.OURS
        who = self._blame(note, [n]).get(n, "")
        return Origin.VAULTOPS if who.startswith(AUTHOR_PREFIX) else Origin.OTHER

    def _blame(self, note: ParsedNote, lines: list[int]) -> dict[int, str]:
        known = self._blamed.setdefault((note.rel, note.digest), {})
        missing = [n for n in lines if n not in known]
        if missing:
            found = self.git.blame(note.rel, note.raw, missing)
            known.update({n: found.get(n, "") for n in missing})
        return {n: known[n] for n in lines if known[n]}
