"""The values that flow through the pipeline.  Plain frozen dataclasses: no I/O, no behaviour beyond
what can be read off the value itself."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, NamedTuple, TypeVar

# What an approval lets through of the calls it answers: each once, or (``approve for this request``) the
# same calls again for the rest of that request's job.  Nothing wider exists.
ApprovalScope = Literal["once", "request"]
APPROVAL_WORDS: dict[ApprovalScope, str] = {"once": "once", "request": "for this request"}


class State(StrEnum):
    OPEN = "open"
    LOCKED = "locked"
    RUNNING = "running"
    WAITING = "waiting"
    DONE = "done"
    ERROR = "error"
    ESCALATED = "escalated"
    APPROVED = "approved"
    DENIED = "denied"
    INTERRUPTED = "interrupted"
    CANCELLED = "cancelled"
    SUPERSEDED = "superseded"
    REVIEW = "review"  # a code job finished and checked: the person accepts it, or asks for changes


STATES = frozenset(s.value for s in State)
# What a schedule does with the runs it missed while nothing ran (vaultops.scan.schedule.fire).
Misfire = Literal["once", "skip", "all"]
MISFIRES: tuple[Misfire, ...] = ("once", "skip", "all")
# A request in one of these states is finished until the person answers.
SETTLED = frozenset(
    {State.DONE, State.ERROR, State.ESCALATED, State.DENIED, State.CANCELLED, State.INTERRUPTED, State.REVIEW}
)


@dataclass(frozen=True, slots=True)
class Lock:
    agent: str
    at: str
    host: str
    claim: str
    line: int
    lease: float | None = None  # seconds the claimer may take; None in locks written before leases


@dataclass(frozen=True, slots=True)
class StatusLine:
    state: State
    at: str
    reason: str
    line: int


@dataclass(frozen=True, slots=True)
class Answer:
    key: str  # decision | retry | cancel
    value: str
    comment: str
    line: int
    scope: ApprovalScope = "once"


@dataclass(frozen=True, slots=True)
class Outcome:
    """The summary line of a result: ``- outcome: done · env-check · light · routine · direct · 0.4 s``."""

    state: str
    type: str
    complexity: str
    safety_class: str
    route: str
    duration: str
    line: int


@dataclass(frozen=True, slots=True)
class Request:
    id: str
    title: str
    file: str  # vault-relative, with forward slashes
    start: int  # the heading's line (0-based)
    end: int  # the first line after the block
    last_line: int  # the block's last non-blank line: the daemon inserts after it
    fields: Mapping[str, str]
    text: (
        str | None
    )  # the prompt; None when it cannot run as it stands (finished, or escalated and unanswered)
    locks: tuple[Lock, ...] = ()
    statuses: tuple[StatusLine, ...] = ()
    answers: tuple[Answer, ...] = ()
    outcomes: tuple[Outcome, ...] = ()
    problems: tuple[str, ...] = ()
    person_hash: str = ""  # hash of the lines the person wrote (settle and re-evaluation use it)
    # why the answers typed under it were not counted ("" when none were forged): vaultops.decide.trust
    forged: str = ""
    # hash of what the person asks (heading, fields and text; not answers, not vaultops's lines): an
    # approval counts for the text its escalation was written for (vaultops.decide.trust)
    text_hash: str = ""
    # answer lines after its last status whose value vaultops does not read (`- decision: approved`), as
    # typed, by line: told once what the request takes, never guessed at (vaultops.decide.answers)
    unread: tuple[tuple[int, str], ...] = ()

    @property
    def asked(self) -> str:
        """All an agent is told to do: the heading's title (a plan note's file name, its dashes read as
        spaces), a plan's tasks, and the text.  The classifier and the triage judge all of it."""
        title = self.title
        if self.file.endswith(f"{title}.md"):
            title = title.replace("-", " ").replace("_", " ")
        parts = (title, self.fields.get("tasks", ""), self.text or "")
        return "\n".join(p for p in parts if p.strip())

    @property
    def state(self) -> State:
        if self.statuses:
            return self.statuses[-1].state
        return State.LOCKED if self.locks else State.OPEN

    @property
    def lock(self) -> Lock | None:
        return self.locks[-1] if self.locks else None

    @property
    def updated(self) -> str | None:
        stamps = [s.at for s in self.statuses if s.at] + [lk.at for lk in self.locks]
        return max(stamps) if stamps else None

    @property
    def ready_flag(self) -> bool:
        return self.fields.get("ready", "").strip().lower() in ("yes", "true", "1", "now")


@dataclass(frozen=True, slots=True)
class Ruling:
    """The classifier's ruling on one request's text, with the route of profiles it gives (not the
    person's `- decision:`, an answer)."""

    type: str
    complexity: str  # light | heavy
    safety_class: str  # routine | high | blocked | unknown
    reasons: tuple[str, ...] = ()
    route: tuple[str, ...] = ()
    blocked: tuple[str, ...] = field(default=())  # names of the blocked classes that matched

    def as_json(self) -> dict[str, object]:
        return {
            "type": self.type,
            "complexity": self.complexity,
            "safety_class": self.safety_class,
            "reasons": list(self.reasons),
            "route": list(self.route),
        }


@dataclass(frozen=True, slots=True)
class Target:
    """One request, by id and by which occurrence of that id it is (ids may be duplicated)."""

    request_id: str
    occurrence: int = 0

    def find(self, index: dict[str, list[Request]]) -> Request | None:
        same = index.get(self.request_id, [])
        return same[self.occurrence] if self.occurrence < len(same) else None


def index_by_id(requests: Iterable[Request]) -> dict[str, list[Request]]:
    index: dict[str, list[Request]] = {}
    for r in requests:
        index.setdefault(r.id, []).append(r)
    return index


def targets_of(
    requests: Iterable[Request], wanted: Callable[[Request], bool]
) -> list[tuple[Target, Request]]:
    """The wanted requests, each with the target that finds it again (which occurrence of its id)."""
    seen: dict[str, int] = {}
    out = []
    for r in requests:
        n = seen.get(r.id, 0)
        seen[r.id] = n + 1
        if wanted(r):
            out.append((Target(r.id, n), r))
    return out


class PassOutcome(NamedTuple):
    """What a pass did with one request: its new state (or "claimed", "answered", …) and why."""

    request_id: str
    state: str
    detail: str


@dataclass(frozen=True, slots=True)
class Limits:
    """What one run may spend.  None: no limit of that kind."""

    max_cost_usd: float | None = None
    max_turns: int | None = None

    def __bool__(self) -> bool:
        return self.max_cost_usd is not None or self.max_turns is not None

    def within(self, other: Limits) -> Limits:
        """The tighter of the two, limit by limit."""
        return Limits(_least(self.max_cost_usd, other.max_cost_usd), _least(self.max_turns, other.max_turns))


_N = TypeVar("_N", int, float)


def _least(a: _N | None, b: _N | None) -> _N | None:
    return b if a is None else a if b is None else min(a, b)
