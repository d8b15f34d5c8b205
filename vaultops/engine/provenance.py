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

A status or lock line vaultops did not write changes nothing (``Vetter.disown``).  The request's last
status line and its last lock line are the ones its state is read from: each must be this clone's
(state.db, or ``mine`` for a lock), another machine's vaultops's (git, as above), or the ``running`` line
written with such a lock, or it is set aside, and the one before it is asked the same.  A line that
only imitates one (capitals, a non-breaking or zero-width space: what a phone types) is set aside too
(``scan.lookalike``).  The request is then read as if those lines were not there (they are blanked in a
second parse), and the note keeps them in ``ParsedNote.disowned`` for the gate, which names them once and
writes the request's real state after them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol

from vaultops import lines as fmt
from vaultops.decide.trust import EDITED, By, Committer, Origin, Provenance, edited, standing, vet
from vaultops.engine.moved import RENAMES_LOOKED_AT, earlier
from vaultops.engine.ports import Repo
from vaultops.model import Lock, Request, State
from vaultops.scan.lookalike import imitated
from vaultops.scan.note import Disowned, ParsedNote
from vaultops.scan.text import encode
from vaultops.store.inserts import Insert
from vaultops.store.state import OwnLine, StateDB
from vaultops.sync.git import AUTHOR_PREFIX, Blamed

# lock lines too: a lock this clone wrote is known as its own, not only by its claim
_REMEMBERED = frozenset({"status", "locked-by", *fmt.ANSWER_KEYS})
# a request's last status line set aside uncovers the one before it: asked in turn, this many at most
_MAX_UNCOVER = 8


class Parse(Protocol):
    """A note's bytes as the pass parses them (``store.notes.NoteWriter.parse``)."""

    def __call__(self, rel: str, raw: bytes, *, full: bool = ...) -> ParsedNote: ...


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
    return fmt.read_answer(text, 0) is not None  # as the request's reader reads it (a phone's too)


class Vetter:
    """Lives as long as a pass: blame answers are kept per version of a note."""

    def __init__(
        self,
        state: StateDB,
        git: Repo,
        authors: tuple[str, ...] | None,
        parse: Parse,
        mine: Callable[[Lock], bool] | None = None,
    ) -> None:
        self.state = state
        self.git = git
        self.authors = frozenset(" ".join(a.split()) for a in authors) if authors is not None else None
        self.parse = parse  # a note's bytes as the pass parses them (a commit's version of it, here)
        self._blamed: dict[tuple[str, str], dict[int, Blamed | None]] = {}
        self._versions: dict[tuple[str, str], ParsedNote | None] = {}
        self._wholes: dict[tuple[str, str], ParsedNote] = {}  # (note, digest) -> read whole (``_whole``)
        self._renames: list[tuple[str, str]] | None = None  # git's, asked once when needed (``_before``)
        self._mine: set[tuple[str, str, str]] = set()  # (note, request id, line) this clone wrote
        # a lock this clone made, as the gate tells them (``Context.mine``): without a remote, its host
        # and agent; with one, a claim state.db recorded.  None: only state.db's records and git say so
        self.mine = mine

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
        for path in (rel, *self._before(rel)):
            self.state.consume(path, request_id, status)

    def _own_line(self, rel: str, request_id: str, line: str) -> OwnLine | None:
        """What this clone remembers of a line it wrote under the request, in this note or in it before it
        was moved (a renamed inbox keeps its escalations answerable)."""
        own = self.state.own_line(rel, request_id, line)
        for old in self._before(rel) if own is None else ():
            own = own or self.state.own_line(old, request_id, line)
        return own

    def _before(self, rel: str) -> tuple[str, ...]:
        """The paths git saw ``rel`` renamed from (``engine.moved.earlier``); asked of git once a pass, and
        only when a line is not found under ``rel``."""
        if self._renames is None:
            self._renames = self.git.renames(RENAMES_LOOKED_AT) if self.git.is_repo() else []
        return earlier(rel, self._renames)

    def note(self, note: ParsedNote) -> tuple[ParsedNote, list[str]]:
        """The note with only the answers that count, read as if the status and lock lines vaultops did
        not write were not there, and why some answers wait."""
        answered, waiting = self._answers(note)
        disowned = self.disown(note)
        if not disowned:
            return self._edited(answered, note, {}), waiting
        again = self._without(note, disowned)
        requests: list[Request] = []
        for raw, kept in zip(note.requests, answered.requests, strict=True):
            lines = disowned.get(raw.start)
            bare = again.get(raw.start)
            if lines is None or bare is None:
                requests.append(kept)
                continue
            # its answers judged afresh under its real last status line, less those judged forged already
            asked = standing(bare) or bare.unread
            vetted = vet(bare, note.lines, self.provenance(note, bare)) if asked else None
            request = vetted.request if vetted is not None else bare
            if vetted is not None and vetted.waiting:
                waiting.append(vetted.waiting)
            if kept.forged:
                gone = {a.line for a in raw.answers} - {a.line for a in kept.answers}
                answers = tuple(a for a in request.answers if a.line not in gone)
                request = replace(request, answers=answers, forged=kept.forged)
            requests.append(request)
        found = {
            raw.start: Disowned(lines, raw) for raw in note.requests if (lines := disowned.get(raw.start, ()))
        }
        return self._edited(replace(answered, requests=requests, disowned=found), note, disowned), waiting

    def _edited(self, note: ParsedNote, read: ParsedNote, disowned: dict[int, tuple[int, ...]]) -> ParsedNote:
        """The escalations this clone wrote whose request was edited since, unanswered (``trust.edited``):
        read whole, and marked (``trust.EDITED``) to be escalated again on the text as it reads now.  Only
        while nothing stands under it as ``read``: an answer set aside (forged, or waiting for its commit)
        is said by its own rules, and an escalation written after it would use it up.  A request with
        lines vaultops did not write is left to the gate's rules for those."""
        typed = {r.start for r in read.requests if standing(r) or r.unread}
        asked = {
            r.start: own.seen
            for r in note.requests
            if r.state is State.ESCALATED and r.statuses and not standing(r) and not r.forged
            and r.start not in disowned and r.start not in typed
            and (own := self._own_line(note.rel, r.id, note.lines[r.statuses[-1].line])) is not None
            and own.seen and not own.consumed
        }  # fmt: skip
        if not asked:
            return note
        whole = {r.start: r for r in self._whole(note).requests if r.start in asked}
        requests = []
        for request in note.requests:
            full = whole.get(request.start)
            ours = Provenance(Origin.OURS, None, False, asked.get(request.start))
            if full is not None and full.id == request.id and edited(full, ours):
                request = replace(full, forged=EDITED)
            requests.append(request)
        return replace(note, requests=requests) if requests != list(note.requests) else note

    def _whole(self, note: ParsedNote) -> ParsedNote:
        """``note`` read whole (its waiting escalations with their text): parsed once a pass per version."""
        if all(r.text is not None for r in note.requests if r.state is State.ESCALATED):
            return note
        key = (note.rel, note.digest)
        if key not in self._wholes:
            self._wholes[key] = self.parse(note.rel, note.raw, full=True)
        return self._wholes[key]

    def _answers(self, note: ParsedNote) -> tuple[ParsedNote, list[str]]:
        """The note with only the answers that count, and why some of them wait."""
        if not any(standing(r) or r.unread for r in note.requests):
            return note, []
        requests: list[Request] = []
        waiting: list[str] = []
        for request in note.requests:
            if not standing(request) and not request.unread:
                requests.append(request)
                continue
            vetted = vet(request, note.lines, self.provenance(note, request))
            requests.append(vetted.request)
            if vetted.waiting:
                waiting.append(vetted.waiting)
        return replace(note, requests=requests), waiting

    # --- status and lock lines vaultops did not write --------------------------------------------

    def disown(self, note: ParsedNote) -> dict[int, tuple[int, ...]]:
        """Request start -> the lines under it that look like vaultops's and are not, in order: its last
        status and lock lines while they are not vaultops's (each one set aside uncovers the one before
        it), and the lines that only imitate one."""
        found: dict[int, set[int]] = {}
        # A lock line is asked only when the gate says which locks are this clone's (``mine``): a pass
        # killed between writing a claim and recording it leaves a lock only that can tell this clone's.
        # Without it, a lock holds its request for its lease, as before, and is then taken over and said.
        locks = self.mine is not None
        for request in note.requests:
            if request.text is not None and (fake := _imitations(note, request)):
                found[request.start] = set(fake)  # an imitation matters only where the text is read
        requests = note.requests
        for _ in range(_MAX_UNCOVER):
            last = [
                (r, n) for r in requests for n in _last_lines(r, locks) if n not in found.get(r.start, ())
            ]
            foreign = self._not_ours(note, last)
            if not foreign:
                break
            for request, n in foreign:
                found.setdefault(request.start, set()).add(n)
            uncovered = self._without(note, {start: tuple(lines) for start, lines in found.items()})
            starts = dict.fromkeys(r.start for r, _ in foreign)
            requests = [uncovered[start] for start in starts if start in uncovered]
        return {start: tuple(sorted(lines)) for start, lines in found.items()}

    def _not_ours(self, note: ParsedNote, lines: list[tuple[Request, int]]) -> list[tuple[Request, int]]:
        """Of (request, line) pairs, those whose line neither this clone nor another machine's vaultops
        wrote under that request."""
        unknown = []
        out = []
        for request, n in lines:
            text = note.lines[n]
            block = note.lines[request.start : request.end]
            if block.index(text) + request.start != n:
                out.append((request, n))  # vaultops never writes one line twice: the later is a copy
            elif not self._wrote(note.rel, request.id, text) and not self._claimed_with(note, request, n):
                unknown.append((request, n))
        blamed = self._blame(note, [n for _, n in unknown])
        for request, n in unknown:
            came = blamed.get(n)
            if came is None or not came.who.startswith(AUTHOR_PREFIX):
                out.append((request, n))
                continue
            version = self._version(note, came)
            if version is None or held_by(version, request.id, came.line, note.lines[n]) is None:
                out.append((request, n))  # another vaultops's line, from another request: a copy
        return out

    def _wrote(self, rel: str, request_id: str, text: str) -> bool:
        """This clone wrote ``text`` under the request (a line once its own stays its own: kept for the
        pass, whose stages read a note several times), in this note or in it before it was moved."""
        key = (rel, request_id, text)
        if key in self._mine:
            return True
        mine = self._own_line(rel, request_id, text) is not None or self._own_claim(text)
        if mine:
            self._mine.add(key)
        return mine

    def _claimed_with(self, note: ParsedNote, request: Request, n: int) -> bool:
        """Line ``n`` is the ``running`` line vaultops writes with a lock line, right under it and at its
        time, and that lock counts (it is this clone's; or, told nothing of which locks are, any lock holds
        as it always has): a pass killed after writing the claim and before remembering its lines leaves
        such a pair, and its request must be closed as interrupted, never run again as if new."""
        if n <= request.start + 1:
            return False
        status = fmt.item_field(note.lines[n])
        lock = fmt.item_field(note.lines[n - 1])
        if status is None or lock is None or status[0] != "status" or lock[0] != "locked-by":
            return False
        said, held = fmt.parse_status(status[2], n), fmt.parse_lock(lock[2], n - 1)
        return (
            said is not None and held is not None and said.state is State.RUNNING and said.at == held.at
            and (self.mine is None or self._wrote(note.rel, request.id, note.lines[n - 1]))
        )  # fmt: skip

    def _own_claim(self, text: str) -> bool:
        """A lock line of a claim this clone made (written before lock lines were remembered, or by a pass
        killed before it remembered them)."""
        item = fmt.item_field(text)
        lock = fmt.parse_lock(item[2], 0) if item is not None and item[0] == "locked-by" else None
        if lock is None:
            return False
        return self.state.knows_claim(lock.claim) or (self.mine is not None and self.mine(lock))

    def _without(self, note: ParsedNote, lines: dict[int, tuple[int, ...]]) -> dict[int, Request]:
        """Request start -> the request as it reads with ``lines`` blanked (a second parse of the note)."""
        blank = {n for group in lines.values() for n in group}
        text = [("" if n in blank else line) for n, line in enumerate(note.lines)]
        again = self.parse(note.rel, encode(note.text.newline.join(text) + note.text.newline), full=True)
        return {r.start: r for r in again.requests}

    def provenance(self, note: ParsedNote, request: Request) -> Provenance:
        status = self._status_origin(note, request)
        if status in (Origin.VAULTOPS, Origin.OTHER, None):
            return Provenance(status)
        line = note.lines[request.statuses[-1].line]
        own = self._own_line(note.rel, request.id, line)
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
        if self._own_line(note.rel, request.id, text) is not None:  # also in the note under an older name
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


def _last_lines(request: Request, locks: bool) -> tuple[int, ...]:
    """The lines a request's state is read from: its last status line, and (``locks``) its last lock line
    while the request is held (a finished request's lock decides nothing: not asked, a 10,000-request
    inbox is read with one look-up per request)."""
    out = []
    if request.statuses:
        out.append(request.statuses[-1].line)
    if locks and request.lock is not None and request.state in _HELD:
        out.append(request.lock.line)
    return tuple(out)


_HELD = frozenset({State.LOCKED, State.RUNNING})


def _imitations(note: ParsedNote, request: Request) -> list[int]:
    """The lines of ``request`` that imitate a status or lock line and are not read as one (outside code)."""
    parsed = {s.line for s in request.statuses} | {lk.line for lk in request.locks}
    return [
        n
        for n in range(request.start + 1, request.end)
        if n not in parsed and imitated(note.lines[n]) and note.outline.open_after(n - 1) is None
    ]
