"""The decision gate: what a pass does with each request of one note.  Pure.

It takes the parsed note and a ``Facts`` value (the clock, the note's mtime, first-seen times, earlier
runs, the budget, what is running, the model's opinions) and returns a ``Agenda``.  It reads no file and
writes no row: ``vaultops.engine.decide`` gathers the facts first, so every rule here is a unit test away
(tests/unit/test_decision_gate.py).  The rules, in the order they apply (docs/architecture.md, "The gate"):

1. another machine's claim whose lease ran out is taken over, judged only from a fresh view of the remote;
2. a scheduled plan note waits for its time;
3. a request the person may still be typing settles;
4. an input problem, a workdir outside the allowed roots, forged answers, a standing answer, or a run the
   note has lost its lines of, are said before anything is classified;
5. everything else is classified (with the model's second opinion, when one is configured);
6. interrupted heavy work waits for ``- retry: yes``; heavy work waits for the daily budget, and for
   its account's usage limit to reset (``decide.quota``);
7. what was said already is not said again;
8. plan notes whose ``files:`` overlap running work, or whose worker is busy, wait (``apart``), and with a
   remote no more is claimed than can start now (``within``).

A status or lock line vaultops did not write (``ParsedNote.disowned``) changes nothing: every rule reads
the request as if it were not there.  It is named once, in the first line vaultops writes after it, and
that line is the request's real state, so that the note reads true again (``owned``, ``restated``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from vaultops.base.visible import described
from vaultops.classifier.triage import SecondOpinion
from vaultops.config import Config
from vaultops.decide.answers import answered, forgery_action, ruling_of
from vaultops.decide.budget import Budget
from vaultops.decide.files import files_overlap, in_repo
from vaultops.decide.leases import lease_of
from vaultops.decide.quota import held, waiting_reason
from vaultops.decide.route import Handling, HandlingKind, decide, no_ruling
from vaultops.decide.schedules import SCHEDULABLE, firing_of, paused, slot_lines
from vaultops.decide.startable import may_start, retry_asked
from vaultops.decide.trust import as_written, named, unwritten
from vaultops.model import Lock, Request, State, Target, targets_of
from vaultops.scan.note import ParsedNote

HELD = frozenset({State.LOCKED, State.RUNNING})


@dataclass(frozen=True, slots=True)
class Sighting:
    """A first-seen time the gate needs: of one version of the person's lines (settling), of a schedule
    text, or of another machine's claim.  ``wall``: stamped with the wall clock, as the note's mtime is."""

    request_id: str
    key: str
    wall: bool = False


@dataclass(frozen=True, slots=True)
class Clone:
    """Who this clone is, to tell its own claims from others'."""

    host: str
    agent: str
    shared: bool  # the vault has a remote: other clones may share this host and agent name
    claims: frozenset[str] = frozenset()  # claims this clone's state.db recorded

    def made(self, lock: Lock) -> bool:
        """A claim made by this clone.  With a remote only a claim its state.db recorded counts."""
        if lock.host != self.host or lock.agent != self.agent:
            return False
        return not self.shared or lock.claim in self.claims


@dataclass(frozen=True, slots=True)
class LiveWorker:
    name: str
    files: tuple[str, ...]  # empty: any file


@dataclass(frozen=True, slots=True)
class Facts:
    """Everything besides the note that the gate's rules read, gathered before it is called."""

    now: datetime  # the pass's clock
    wall: float  # time.time(), to compare with the note's mtime
    mtime: float  # when the note was last saved
    clone: Clone
    budget: Budget
    first_seen: Mapping[tuple[str, str], float] = field(default_factory=dict)  # (request id, key)
    heavy_runs: Mapping[str, str] = field(default_factory=dict)  # request id -> claim of its last heavy run
    workdir_problems: Mapping[str, str] = field(
        default_factory=dict
    )  # request id -> why its workdir (or its repo) is refused
    repos: Mapping[str, str] = field(default_factory=dict)  # request id -> its repo:, resolved
    opinions: Mapping[Target, SecondOpinion | None] = field(default_factory=dict)  # model triage, as asked
    # the budget as it stood once each request's second opinion was paid for: asking the model costs too
    budget_after: Mapping[Target, Budget] = field(default_factory=dict)
    fresh: bool = True  # the view of the remote is fresh (or there is none): takeovers may be judged
    busy_files: tuple[tuple[str, ...], ...] = ()  # files: of plan jobs running or taken in this pass
    workers: tuple[LiveWorker, ...] = ()  # live workers
    starting: tuple[str, ...] = ()  # worker names claimed in this pass, not spawned yet
    slots: int | None = None  # jobs this clone may still start now (None: as many as the limits allow)
    # each profile whose account met its usage limit: when that resets (an epoch), from state.db
    quota: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AgendaItem:
    target: Target
    request: Request
    handling: Handling
    closes: str = ""  # the request's last status line: what this answers, once it is written
    # a scheduled run's lines, written with its claim: the times it skips, and the time it is for
    slots: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Settling:
    request_id: str
    seconds: float  # until it may be claimed


@dataclass(frozen=True, slots=True)
class Agenda:
    items: tuple[AgendaItem, ...] = ()
    settling: tuple[Settling, ...] = ()
    asks: tuple[Target, ...] = ()  # requests waiting for the model's opinion: ask, then call again

    @property
    def next_settle(self) -> float | None:
        return min((s.seconds for s in self.settling), default=None)


def candidates(note: ParsedNote) -> list[tuple[Target, Request]]:
    return targets_of(note.requests, lambda r: may_start(r) or "schedule" in r.fields)


def held_elsewhere(note: ParsedNote, facts: Facts) -> list[tuple[Target, Request]]:
    return targets_of(
        note.requests, lambda r: r.state in HELD and r.lock is not None and not facts.clone.made(r.lock)
    )


def sightings(note: ParsedNote, facts: Facts) -> list[Sighting]:
    """The first-seen times ``agenda_for`` will read (``Facts.first_seen`` must hold each)."""
    out = [
        Sighting(r.id, f"claim:{r.lock.claim}") for _, r in held_elsewhere(note, facts) if r.lock is not None
    ]
    for _, r in candidates(note):
        if (key := schedule_key(r)) is not None:
            out.append(Sighting(r.id, key))
        if not r.ready_flag:
            out.append(Sighting(r.id, r.person_hash, wall=True))
    return out


def schedule_key(request: Request) -> str | None:
    """The first-seen key of a scheduled request whose schedule decides now (None when it does not).
    ``sightings`` and ``agenda_for`` both ask this one function, so the gate never reads a time that
    was not gathered (an escalated scheduled note once stopped every pass with a KeyError)."""
    if "schedule" not in request.fields or request.state not in SCHEDULABLE:
        return None
    return f"schedule:{request.fields['schedule']}"


def takeovers(note: ParsedNote, facts: Facts, config: Config) -> list[AgendaItem]:
    """Other machines' claims whose lease ran out, as this machine measures it: from when it first
    saw the claim, never by comparing clocks across machines."""
    now = facts.now.timestamp()
    out = []
    for target, request in held_elsewhere(note, facts):
        lock = request.lock
        assert lock is not None
        lease = lease_of(lock, config)
        if now - facts.first_seen[(request.id, f"claim:{lock.claim}")] <= lease:
            continue
        why = (
            f"taken over: claim {lock.claim} ({lock.agent} on {lock.host}) gave no result within its "
            f"lease ({lease:.0f} s); a light check runs again by itself, other work only after "
            "`- retry: yes`"
        )
        out.append(AgendaItem(target, request, Handling("takeover", no_ruling(), why)))
    return out


def settle_left(request: Request, facts: Facts, config: Config) -> float:
    """Seconds until this request may be claimed (0 when it may be now)."""
    if request.ready_flag:
        return 0.0
    settle = config.inbox.settle
    if facts.mtime <= facts.wall - settle:
        return 0.0
    first = facts.first_seen[(request.id, request.person_hash)]
    # never more than ``settle``: a wall clock set back after the request was first seen would otherwise
    # hold it for as long as the clock went back
    return max(0.0, min(settle, first + settle - facts.wall))


def said_before_classifying(request: Request, facts: Facts, config: Config) -> Handling | None:
    """What is said of a request without classifying it (rule 4), or None."""
    if request.problems:
        return Handling("error", no_ruling(), request.problems[0])
    if workdir := facts.workdir_problems.get(request.id, ""):
        return Handling("error", no_ruling(), workdir)
    if request.forged:
        return forgery_action(request, config)
    if (said := answered(request, config)) is not None:
        return said
    unclaimed = request.lock is None and not retry_asked(request)
    if unclaimed and (claim := facts.heavy_runs.get(request.id)) is not None:
        # Its lines were removed from the note (an editor that saved an old copy, say): the work was done
        # once and is not done again; the note is told, and `- retry: yes` still runs it.
        why = (
            f"vaultops already ran this request (claim {claim}); its lines are gone from the "
            "note, the log is in .vaultops/state/logs/runs/; write `- retry: yes` to run it again"
        )
        return Handling("error", no_ruling(), why)
    return None


def agenda_for(note: ParsedNote, facts: Facts, config: Config) -> Agenda:
    """What to do with each request of ``note`` that a pass acts on now (rules 1-8 above).  A request
    the rules fail on gets an error line of its own; the others are decided as usual."""
    items: list[AgendaItem] = takeovers(note, facts, config) if facts.fresh else []
    items = [told for item in items for told in owned(note, item)]
    settling: list[Settling] = []
    asks: list[Target] = []
    for target, request in candidates(note):
        try:
            step = next_step(note, target, request, facts, config)
        except Exception as exc:  # one request's fault is that request's, never the note's
            step = failed(note, target, request, exc)
        if isinstance(step, AgendaItem):
            items += owned(note, step)
        elif isinstance(step, Settling):
            settling.append(step)
        elif isinstance(step, Target):
            asks.append(step)
    if asks:
        return Agenda(settling=tuple(settling), asks=tuple(asks))
    items += restated(note, facts, config)
    return Agenda(tuple(within(apart(items, facts, config), facts, config)), tuple(settling))


# What vaultops writes as a status line's reason: the naming of lines it did not write goes there.
_SAID_IN_REASON = frozenset(
    {"escalate", "error", "wait", "deny", "cancel", "accept", "takeover", "misanswered"}
)


def owned(note: ParsedNote, item: AgendaItem) -> list[AgendaItem]:
    """``item`` as the note writer must find its request (its state as the note's lines give it), and the
    lines under it that vaultops did not write, named once: in its status line's reason, or, when its
    lines are a claim or a result, on a ``waiting`` line of its own written just before them."""
    quoted = unwritten(note, item.request)
    item = replace(item, request=as_written(item.request, note.disowned.get(item.request.start)))
    if not quoted:
        return [item]
    said = named(quoted)
    handling = item.handling
    if handling.kind in _SAID_IN_REASON:
        reason = f"{handling.reason}; {said}" if handling.reason else said
        return [replace(item, handling=replace(handling, reason=reason))]
    first = AgendaItem(item.target, item.request, Handling("wait", no_ruling(), said), item.closes)
    return [first, item]


def restated(note: ParsedNote, facts: Facts, config: Config) -> list[AgendaItem]:
    """Requests that no rule acts on now, under whose real state a line vaultops did not write stands
    last: the real state is written again after it, with the line named (an escalation is escalated again,
    and told again).  A request held by a job is left to its result; one whose state has no line of its
    own to say it again (an error, an interruption, a review) is read as vetted, and its line stays."""
    out = []
    for target, request in targets_of(note.requests, lambda r: bool(unwritten(note, r))):
        if (
            may_start(request)
            or "schedule" in request.fields
            or request.state in HELD
            or not request.statuses
        ):
            continue
        last = request.statuses[-1]
        kind = _RESTATED.get(last.state)
        if kind is None:
            continue
        ruling = ruling_of(request, config) if last.state is State.ESCALATED else no_ruling()
        item = AgendaItem(target, request, Handling(kind, ruling, last.reason), note.lines[last.line])
        out += owned(note, item)
    return out


_RESTATED: dict[State, HandlingKind] = {
    State.ESCALATED: "escalate",
    State.DONE: "accept",
    State.DENIED: "deny",
    State.CANCELLED: "cancel",
}


def failed(note: ParsedNote, target: Target, request: Request, exc: Exception) -> AgendaItem | None:
    """The error line of a request vaultops failed to decide on (a fault of vaultops's, said on the
    request so the rest of the queue goes on), unless it is the request's last status already."""
    why = (
        f"vaultops failed while deciding on this request ({described(exc, 200)}); edit the request to "
        "have it looked at again, and report this if it stays"
    )
    return said_unless_said(note, target, request, Handling("error", no_ruling(), why))


def said_unless_said(
    note: ParsedNote, target: Target, request: Request, handling: Handling, slots: tuple[str, ...] = ()
) -> AgendaItem | None:
    """``handling`` as an item, or None for an error or wait that is the request's last status already
    (an input error is looked at again once the person changes it)."""
    last = request.statuses[-1] if request.statuses else None
    if handling.kind in ("error", "wait") and last is not None and last.reason == handling.reason:
        return None
    closes = note.lines[last.line] if last is not None else ""
    return AgendaItem(target, request, handling, closes, slots)


def next_step(
    note: ParsedNote, target: Target, request: Request, facts: Facts, config: Config
) -> AgendaItem | Settling | Target | None:
    """One request's decision: an item to act on, a wait for it to settle, a model to ask (its
    target), or nothing now."""
    slots: tuple[str, ...] = ()
    if "schedule" in request.fields:
        if paused(request, config):
            return None  # until the person writes `- retry: yes` under it
        key = schedule_key(request)
        if key is None:  # escalated, running, in review: its time waits; the person's answer does not
            if not may_start(request):
                return None
        else:
            firing = firing_of(note, request, facts.first_seen[(request.id, key)], facts.now)
            if firing is None:
                return None
            slots = tuple(slot_lines(firing))
            if firing.run is None:  # only times to skip: said, and the note waits for its next time
                return AgendaItem(target, request, Handling("missed", no_ruling(), firing.why), "", slots)
    remaining = settle_left(request, facts, config)
    if remaining > 0:
        return Settling(request.id, remaining)
    handling = said_before_classifying(request, facts, config)
    if handling is None:
        if config.classify.triage and target not in facts.opinions:
            return target
        handling = decide(request, config, facts.opinions.get(target))
    elif handling.kind == "cleanup" and request.lock is not None and not facts.clone.made(request.lock):
        return None  # the worktree is on the machine that ran the job: that machine removes it
    if (
        request.state is State.INTERRUPTED
        and not retry_asked(request)
        and not request.forged
        and handling.kind not in ("builtin", "cancel", "cleanup")
    ):
        return None  # heavy work that was cut short runs again only when the person says `- retry: yes`
    budget = facts.budget_after.get(target, facts.budget)
    if handling.kind == "profile" and budget.exhausted:
        if handling.approved:
            return None  # a status line now would close the approval: it runs once the budget allows
        handling = Handling("wait", handling.ruling, budget.waiting_reason())
    limited = held(handling.profile, facts.quota, facts.now) if handling.kind == "profile" else None
    if limited is not None and not retry_asked(request):  # `- retry: yes` tries it now all the same
        if handling.approved:
            return None  # as for the budget: it runs once its account's limit has reset
        handling = Handling("wait", handling.ruling, waiting_reason(*limited))  # docs/quota.md
    return said_unless_said(note, target, request, handling, slots)


def files_of(request: Request) -> tuple[str, ...]:
    """A plan note's ``files:`` (the inbox's requests do not say)."""
    return tuple(f for f in request.fields.get("files", "").split("\n") if f)


def busy_of(request: Request, facts: Facts) -> tuple[str, ...]:
    """What a job may change, as the overlap rule compares it: a code job's files in its repository."""
    files = files_of(request)
    repo = facts.repos.get(request.id)
    return in_repo(files, repo) if repo else files


def apart(items: Sequence[AgendaItem], facts: Facts, config: Config) -> list[AgendaItem]:
    """Plan notes whose ``files:`` overlap a job's already taken in this pass, or a live worker's, wait
    for a later pass: two jobs that might change one file never run at once.  Code jobs on one
    repository count as its files (all of it, when they name none), whatever worktree each runs in.  A
    plan run by a worker also waits for a free place (``[workers] max``) and for its worker's name."""
    busy = [*facts.busy_files, *(w.files for w in facts.workers)]  # a worker without files: any file
    places = (config.workers.max or config.limits.max_concurrent) - len(facts.workers) - len(facts.starting)
    names = {w.name for w in facts.workers} | set(facts.starting)
    out = []
    for p in items:
        files = busy_of(p.request, facts)
        if p.handling.kind == "profile" and (name := p.request.fields.get("worker")):
            if name in names or places <= 0 or any(files_overlap(files, b) for b in busy):
                continue  # it starts once the worker of that name, a place, or its files are free
            names.add(name)
            places -= 1
            busy.append(files)
        elif files and p.handling.kind == "profile":
            if any(files_overlap(files, b) for b in busy):
                continue
            busy.append(files)
        out.append(p)
    return out


def within(items: Sequence[AgendaItem], facts: Facts, config: Config) -> list[AgendaItem]:
    """With a remote, claim no more than this machine can start now: a claim waiting in a queue would
    use up its lease while other machines sit idle.  Without one, only what ``slots`` allows of the
    agents' work (``tick`` takes a queue in bounded batches, each recorded before the next is claimed);
    light checks then run within the claim itself."""
    if not facts.clone.shared and facts.slots is None:
        return list(items)
    free = config.limits.max_concurrent if facts.slots is None else facts.slots
    counted = ("profile", "builtin") if facts.clone.shared else ("profile",)
    out = []
    for p in items:
        if p.handling.kind in counted:
            if free <= 0:
                continue
            free -= 1
        out.append(p)
    return out
