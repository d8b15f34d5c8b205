"""Plan notes in ``executor-queue/``: one job per note.  The frontmatter is the person's settings, the body
is the prompt, and the daemon appends the same lock, status and result lines as under an inbox request.
Pure, except ``workdir_problem``, which resolves symlinks.

The frontmatter is read by python-frontmatter (PyYAML).  A note whose settings cannot be used gets one
problem sentence naming the note and what to change; the rest of the queue goes on.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from vaultops import lines as fmt
from vaultops.base.durations import parse_duration
from vaultops.base.names import name_from, name_problem
from vaultops.model import MISFIRES
from vaultops.scan.note import ParsedNote
from vaultops.scan.requests import whole_note_request
from vaultops.vault import inside_any

if TYPE_CHECKING:  # croniter is imported only when a plan note with a schedule is read
    from vaultops.scan.schedule import Schedule


_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_RUN_HEADING = re.compile(r"### Run\s+(?:—|–|-)\s+(?P<when>\d{4}-\d\d-\d\d \d\d:\d\d)\s+(?:—|–|-)\s")


@dataclass(frozen=True, slots=True)
class Plan:
    rel: str
    text: str  # the prompt: the body up to the daemon's first line
    type: str | None = None
    profile: str | None = None
    workdir: str | None = None
    files: tuple[str, ...] = ()
    schedule: Schedule | None = None
    timeout: float | None = None
    tasks: tuple[str, ...] = ()
    worker: str | None = None  # run as a long-lived worker session of this name (docs/architecture.md)
    max_cost_usd: str | None = None  # as written: vaultops.decide.route reads it as for an inbox request
    misfire: str | None = None  # once | skip | all: what happens to runs missed while nothing ran
    grace: float | None = None  # seconds a run may start late and still count as on time
    max_turns: str | None = None
    repo: str | None = None  # a git repository: the job runs in a worktree of its own
    review: str | None = None  # yes or no: the finished job waits for the person's review
    checks: tuple[str, ...] = ()  # each a command line (split as a shell would, run without one)
    skipped: str = ""  # why it is not run at all: "paused" or "a draft"
    problems: tuple[str, ...] = ()


def parse_plan(rel: str, text: str, tz: datetime) -> Plan:
    """A plan note's settings and prompt.  ``tz``: any aware time in the vault's zone (for ``once``)."""
    import frontmatter  # PyYAML: only a plan note being read needs it
    import yaml

    try:
        post = frontmatter.loads(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 1})" if where is not None else ""
        why = f"{rel}: the frontmatter is not valid YAML{at}; fix the lines between the --- lines"
        return Plan(rel, "", problems=(why,))
    meta: Mapping[str, Any] = post.metadata
    problems: list[str] = []
    body = _prompt(post.content)
    if not body.strip():
        problems.append(f"{rel}: the note has no text below its frontmatter; write what you want done")
    skipped = ""
    if _scalar(meta.get("status")) == "paused":
        skipped = "paused"
    elif meta.get("draft") is True or _scalar(meta.get("draft")) in ("true", "yes"):
        skipped = "a draft"

    def text_of(key: str) -> str | None:
        value = meta.get(key)
        if value is None:
            return None
        if isinstance(value, (dict, list)):
            problems.append(f"{rel}: `{key}:` must be one value, not a list or a mapping")
            return None
        return str(value).strip() or None

    files = _strings(meta.get("files"), "files", rel, problems)
    tasks = _strings(meta.get("tasks"), "tasks", rel, problems)
    schedule = None
    if (raw := text_of("schedule")) is not None:
        from vaultops.scan.schedule import ScheduleError, parse_schedule

        try:
            schedule = parse_schedule(raw, tz)
        except ScheduleError as exc:
            problems.append(f"{rel}: {exc}")
    timeout = None
    if (raw := text_of("timeout")) is not None:
        timeout = parse_duration(raw)
        if timeout is None or timeout <= 0:
            problems.append(f"{rel}: timeout {raw!r} is not a duration; write e.g. 900, 90s or 15m")
            timeout = None
    misfire = text_of("misfire")
    if misfire is not None and misfire.lower() not in MISFIRES:
        choices = ", ".join(MISFIRES)
        problems.append(f"{rel}: misfire {misfire!r} is not one of {choices}; write e.g. misfire: skip")
        misfire = None
    grace = None
    if (raw := text_of("grace")) is not None:
        grace = parse_duration(raw)
        if grace is None or grace < 0:
            problems.append(f"{rel}: grace {raw!r} is not a duration; write e.g. 10m or 1h")
            grace = None
    worker = _worker(meta.get("worker"), rel, problems)
    review = meta.get("review")  # YAML reads `yes` as True
    review_said = "yes" if review is True else "no" if review is False else text_of("review")
    checks = _checks(meta.get("checks"), rel, problems)
    if worker and tasks:
        problems.append(f"{rel}: a plan runs either as `tasks:` or as one `worker:`, not both; remove one")
    return Plan(
        rel, body, text_of("type"), text_of("profile"), text_of("workdir"), files, schedule, timeout, tasks,
        worker, text_of("max_cost_usd"), misfire=misfire.lower() if misfire else None, grace=grace,
        max_turns=text_of("max_turns"), repo=text_of("repo"), review=review_said, checks=checks,
        skipped=skipped, problems=tuple(problems),
    )  # fmt: skip


def _scalar(value: Any) -> str:
    """A setting's one value, lower-cased; "" for none, and for a list or a mapping, which is never
    turned into text (YAML aliases can nest one into a billion items)."""
    return str(value).strip().lower() if isinstance(value, str | int | float | bool) else ""


def _worker(value: Any, rel: str, problems: list[str]) -> str | None:
    """``worker: yes`` (named after the note) or ``worker: NAME``; ``no`` or nothing: a one-shot run."""
    if isinstance(value, (dict, list)):
        problems.append(f"{rel}: `worker:` must be yes or a name, not a list or a mapping")
        return None
    if value is None or value is False or _scalar(value) in ("", "no", "false"):
        return None
    if value is True or _scalar(value) in ("yes", "true"):
        return name_from(PurePosixPath(rel).stem)
    name = str(value).strip()
    if problem := name_problem(name):
        problems.append(f"{rel}: `worker:` {problem}")
        return None
    return name


def _checks(value: Any, rel: str, problems: list[str]) -> tuple[str, ...]:
    """``checks: [pytest -q, [ruff, check, .]]``: each a command line, or an argv list."""
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, list) and item and all(isinstance(a, str | int | float) for a in item):
            out.append(shlex.join(str(a) for a in item))
        elif isinstance(item, str | int | float) and str(item).strip():
            out.append(" ".join(str(item).split("\n")))
        else:
            problems.append(f"{rel}: `checks:` lists commands, e.g. checks: [pytest -q, [ruff, check, .]]")
            return ()
    return tuple(out)


def _strings(value: Any, key: str, rel: str, problems: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value.strip() else ()
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return tuple(str(v) for v in value if str(v).strip())
    problems.append(f"{rel}: `{key}:` must be a list of text, e.g. {key}: [src/tabs/**]")
    return ()


def _prompt(content: str) -> str:
    """The person's part of the body: everything before the first line the daemon wrote."""
    kept = []
    for line in content.splitlines():
        if line.startswith("### ") and fmt.is_result_heading(line[4:]):
            break
        item = fmt.item_field(line)
        if item is not None and item[0] in ("locked-by", "status", "worktree", *fmt.SLOT_KEYS):
            break
        kept.append(line)
    return "\n".join(kept).strip()


def workdir_problem(workdir: str | None, vault_root: Path, roots: list[Path]) -> str:
    """Why a plan's ``workdir`` may not be used ("" when it may): it must resolve, through ``..`` and
    symlinks, inside one of ``[limits] allowed_roots`` (or the vault)."""
    if workdir is None:
        return ""
    path = workdir_path(workdir, vault_root)
    if not inside_any(path, roots):
        real = os.path.realpath(path)
        return (
            f"workdir {workdir} resolves to {real}, outside [limits] allowed_roots; "
            "add its folder there or choose another workdir"
        )
    if not path.is_dir():
        return f"workdir {workdir} is not a folder; create it or fix the path"
    return ""


def workdir_path(workdir: str, vault_root: Path) -> Path:
    path = Path(os.path.expanduser(workdir))
    return path if path.is_absolute() else vault_root / path


def last_run(lines: Sequence[str], tz: datetime) -> datetime | None:
    """The time the note's schedule was last served: the latest ``- scheduled:`` or ``- missed:`` line
    (each run says the time it is for, each skipped time is said), else, in a note from before those
    lines, its last ``### Run — YYYY-MM-DD HH:MM — agent`` block, in the vault's zone."""
    # only lines of its own: not inside a fence (an agent's output), never in the future (a run is
    # always written for a time that has come), so neither can stop or shift the schedule
    slots = [when for line in outside_fences(lines) if (when := _slot(line)) is not None and when <= tz]
    if slots:
        return max(slots)
    for line in reversed(lines):
        if m := _RUN_HEADING.match(line):
            try:
                return datetime.strptime(m["when"], "%Y-%m-%d %H:%M").replace(tzinfo=tz.tzinfo)
            except ValueError:
                continue
    return None


def outside_fences(lines: Sequence[str]) -> list[str]:
    """The lines not inside a fenced code block (``` or ~~~, closed by a fence as long at least)."""
    out: list[str] = []
    fence = ""
    for line in lines:
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) <= 3 and stripped[:3] in ("```", "~~~"):
            run = stripped[: len(stripped) - len(stripped.lstrip(stripped[0]))]
            if not fence:
                fence = run
                continue
            if run[0] == fence[0] and len(run) >= len(fence) and not stripped[len(run) :].strip():
                fence = ""
                continue
        if not fence:
            out.append(line)
    return out


def _slot(line: str) -> datetime | None:
    if not line.startswith("- ") or not line.startswith(fmt.SLOT_KEYS, 2):
        return None
    return fmt.parse_slot(line[2:])


_TASK_STATE = re.compile(r"(\d+)\s+([a-z]+)")


def tasks_done(block: Sequence[str]) -> str:
    """The tasks (numbered from 1) the last ``- tasks:`` line of a block says are done: ``"1,3"``."""
    for line in reversed(block):
        if line.startswith("- tasks: "):
            return ",".join(n for n, state in _TASK_STATE.findall(line[9:]) if state == "done")
    return ""


def plan_id(rel: str) -> str:
    """A plan note's request id, from its file name: ``PLAN-fix-tab-preview``."""
    stem = PurePosixPath(rel).stem
    return "PLAN-" + (_ID_UNSAFE.sub("-", stem).strip("-") or "note")


def as_plan_note(note: ParsedNote, tz: datetime) -> ParsedNote:
    """The note with its one request: the body below the frontmatter, its settings as the request's
    fields.  A paused or draft note has none (it is not a job until the person says so)."""
    plan = parse_plan(note.rel, "\n".join(note.lines), tz)
    if plan.skipped:
        return replace(note, requests=[])
    request = whole_note_request(
        note.lines,
        note.outline,
        note.rel,
        note.body_start - 1,
        plan_id(note.rel),
        PurePosixPath(note.rel).stem,
    )
    fields = dict(request.fields)
    for key, value in (("type", plan.type), ("profile", plan.profile), ("workdir", plan.workdir),
                       ("max_cost_usd", plan.max_cost_usd), ("max_turns", plan.max_turns),
                       ("repo", plan.repo)):  # fmt: skip
        if value is not None:
            fields[key] = value
    if plan.timeout is not None:
        fields["timeout"] = f"{plan.timeout:g}"
    if plan.files:
        fields["files"] = "\n".join(plan.files)
    if plan.schedule is not None:
        fields["schedule"] = plan.schedule.text
    if plan.worker:
        fields["worker"] = plan.worker
    if plan.review is not None:
        fields["review"] = plan.review
    if plan.checks:
        fields["checks"] = "\n".join(plan.checks)
    if plan.misfire is not None:
        fields["misfire"] = plan.misfire
    if plan.grace is not None:
        fields["grace"] = f"{plan.grace:g}"
    if plan.tasks:
        fields["tasks"] = "\n".join(" ".join(t.split()) for t in plan.tasks)
        fields["tasks-done"] = tasks_done(note.lines[request.start + 1 : request.end])
    fields["ready"] = "yes"  # a plan note is saved whole: no settle wait for a half-typed request
    problems = tuple(p.removeprefix(f"{note.rel}: ") for p in plan.problems)
    # a scheduled note runs again after it is done: its prompt is always read
    text = plan.text if request.text is not None or plan.schedule is not None else None
    # what the person asks is the frontmatter's settings as much as the body
    asked = "\n".join([*note.lines[: note.body_start], request.text_hash])
    text_hash = hashlib.blake2b(asked.encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()
    problems = request.problems + problems
    request = replace(request, fields=fields, text=text, problems=problems, text_hash=text_hash)
    return replace(note, requests=[request])
