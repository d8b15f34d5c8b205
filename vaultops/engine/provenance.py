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

``[answers] authors`` asks git who brought each answer line in (``git blame`` over the note as it was read),
and reads the note as that commit left it: the line must have stood there too, in the same request, right
under the same status line (lines moved from another request, or from under another escalation, keep
their blame but not their place).  That is as strong as the rule over who may commit under which name in
the vault's repository: git does not check an author's name, and vaultops does not check signatures.

A status line vaultops acted on (it wrote the approval, the claim, the denial after it) is marked used in
state.db: deleting what vaultops wrote after it does not make the answer under it count again.  Each
status line is remembered with a hash of the request's text as vaultops decided it, which an approval
must still match.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from vaultops import lines as fmt
from vaultops.decide.trust import By, Committer, Origin, Provenance, standing, vet
from vaultops.engine.ports import Repo
from vaultops.model import Request
from vaultops.scan.note import ParsedNote
from vaultops.store.inserts import Insert
from vaultops.store.state import StateDB
from vaultops.sync.git import AUTHOR_PREFIX, Blamed

_REMEMBERED = frozenset({"status", *fmt.ANSWER_KEYS})
_ANSWERS = frozenset(fmt.ANSWER_KEYS)


def own_lines(inserts: Sequence[Insert]) -> list[tuple[str, str, str]]:
    """The (request id, line, text hash) of the lines of ``inserts`` that vaultops remembers writing:
    status lines, and the answers it writes for the person."""
    out = []
    for ins in inserts:
        for line in ins.lines:
            item = fmt.item_field(line) if line.startswith("- ") else None
            if item is not None and item[0] in _REMEMBERED:
                out.append((ins.target.request_id, line, ins.seen))
    return out


def answered_there(note: ParsedNote, request_id: str, line: int, answer: str, status: str) -> bool:
    """``note`` (a commit's version) has ``answer`` on ``line``, in request ``request_id``, under the status
    line ``status`` with only blank, answer or comment lines between them."""
    request = held_by(note, request_id, line, answer)
    if request is None:
        return False
    lines = note.lines
    for n in range(line - 1, request.start, -1):
        text = lines[n]
        if text == status:
            return True
        if not _between(text):
            return False
    return False


def held_by(note: ParsedNote, request_id: str, line: int, text: str) -> Request | None:
    """The request ``request_id`` of ``note`` when ``text`` is its line ``line``."""
    if not 0 <= line < len(note.lines) or note.lines[line] != text:
        return None
    return next((r for r in note.requests if r.id == request_id and r.start < line < r.end), None)


def _between(text: str) -> bool:
    """A line that may stand between a status line and its answer."""
    stripped = text.strip()
    if not stripped or stripped.startswith(("<!--", "%%")):
        return True
    item = fmt.item_field(text)
    return item is not None and item[0] in _ANSWERS and fmt.parse_answer(item[2], 0) is not None


class Vetter:
    """Lives as long as a pass: blame answers are kept per version of a note."""

    def __init__(
        self,
        state: StateDB,
        git: Repo,
        authors: tuple[str, ...] | None,
        parse: Callable[[str, bytes], ParsedNote],
    ) -> None:
        self.state = state
        self.git = git
        self.authors = frozenset(" ".join(a.split()) for a in authors) if authors is not None else None
        self.parse = parse  # a note's bytes as the pass parses them (a commit's version of it, here)
        self._blamed: dict[tuple[str, str], dict[int, Blamed | None]] = {}
        self._versions: dict[tuple[str, str], ParsedNote | None] = {}

    def remember(self, rel: str, inserts: Sequence[Insert]) -> None:
        """``inserts`` that a write put in the note, or that a push is about to carry.  Only what vaultops
        itself inserts: a line it meant to write and found in the note already is not remembered, or a
        forger who typed, to the second, the escalation vaultops was about to write would own it.  A kill
        between the write and this leaves a line of vaultops's it does not know: its answer is then
        taken for a forgery and escalated afresh, which is safe."""
        pairs = own_lines(inserts)
        if pairs:
            self.state.remember_lines(rel, pairs)

    def acted(self, rel: str, request_id: str, status: str) -> None:
        """vaultops wrote its answer to ``status`` (the request's last status line when it decided): from
        now on no answer after that line counts, even if the lines vaultops wrote after it are deleted."""
        self.state.consume(rel, request_id, status)

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
        if status in (Origin.VAULTOPS, Origin.OTHER, None):
            return Provenance(status)
        line = note.lines[request.statuses[-1].line]
        own = self.state.own_line(note.rel, request.id, line)
        consumed, seen = (own.consumed, own.seen) if own is not None else (False, None)
        if self.authors is None:
            return Provenance(status, None, consumed, seen)
        answers = standing(request)
        blamed = self._blame(note, [a.line for a in answers])
        committers = {}
        for a in answers:
            text = note.lines[a.line]
            came = blamed.get(a.line)
            if self.state.wrote_line(note.rel, request.id, text):
                committers[a.line] = Committer(By.VAULTOPS)
            elif came is None:
                committers[a.line] = Committer(By.UNCOMMITTED)
            elif " ".join(came.who.split()) not in self.authors:
                committers[a.line] = Committer(By.UNLISTED, came.who)
            elif not self._answered_then(note, request.id, came, text, line):
                committers[a.line] = Committer(By.MOVED, came.who)
            else:
                committers[a.line] = Committer(By.LISTED, came.who)
        return Provenance(status, committers, consumed, seen)

    def _answered_then(
        self, note: ParsedNote, request_id: str, came: Blamed, answer: str, status: str
    ) -> bool:
        """The commit that brought ``answer`` in had it under ``status``, in this request."""
        version = self._version(note, came)
        return version is not None and answered_there(version, request_id, came.line, answer, status)

    def _version(self, note: ParsedNote, came: Blamed) -> ParsedNote | None:
        """``note`` as the commit ``came`` names left it."""
        key = (came.commit, came.path)
        if key not in self._versions:
            raw = self.git.blob(came.commit, came.path)
            self._versions[key] = None if raw is None else self.parse(note.rel, raw)
        return self._versions[key]

    def _status_origin(self, note: ParsedNote, request: Request) -> Origin | None:
        if not request.statuses:
            return None
        n = request.statuses[-1].line
        text = note.lines[n]
        if note.lines[request.start : request.end].count(text) > 1:
            return Origin.OTHER  # vaultops never writes one status line twice: one of them is a copy
        if self.state.wrote_line(note.rel, request.id, text):
            return Origin.OURS
        came = self._blame(note, [n]).get(n)
        if came is None or not came.who.startswith(AUTHOR_PREFIX):
            return Origin.OTHER
        # a line another vaultops wrote under another request (the block moved to this id) is not this one's
        version = self._version(note, came)
        mine = version is not None and held_by(version, request.id, came.line, text) is not None
        return Origin.VAULTOPS if mine else Origin.OTHER

    def _blame(self, note: ParsedNote, lines: list[int]) -> dict[int, Blamed]:
        known = self._blamed.setdefault((note.rel, note.digest), {})
        missing = [n for n in lines if n not in known]
        if missing:
            found = self.git.blame(note.rel, note.raw, missing)
            known.update({n: found.get(n) for n in missing})
        return {n: b for n in lines if (b := known[n]) is not None}
