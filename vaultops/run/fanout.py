"""Fan-out: a plan note whose frontmatter lists ``tasks:`` runs one agent per task, ``max_concurrent`` at a
time, and records one result with the tasks in the list's order.  A partial failure says which tasks failed;
``- retry: yes`` then runs only those, because the result's ``- tasks:`` line records each task's state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime

from vaultops.model import State
from vaultops.render.results import RunResult
from vaultops.run.jobs import Job


def task_prompt(job: Job, number: int, task: str) -> str:
    return (
        f"{job.text}\n\nThis run does one part of that plan: task {number} of {len(job.tasks)}.\n"
        f"Task {number}: {task}"
    )


def run_tasks(
    job: Job, run: Callable[[Job], RunResult], workers: int, started: datetime, clock: Callable[[], datetime]
) -> RunResult:
    """Each task not yet done, ``workers`` at a time, as a job of its own (its own claim suffix, so the
    runs table tells them apart); then one result for the request."""
    todo = [(n, task) for n, task in enumerate(job.tasks, 1) if n not in job.done_tasks]

    def one(item: tuple[int, str]) -> RunResult:
        n, task = item
        part = replace(job, text=task_prompt(job, n, task), tasks=(), claim=f"{job.claim}-t{n}")
        return run(part)

    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(todo) or 1))) as pool:
        results = dict(zip((n for n, _ in todo), pool.map(one, todo), strict=True))
    return combine(job, results, started, clock())


def combine(job: Job, results: Mapping[int, RunResult], started: datetime, ended: datetime) -> RunResult:
    """One result for a fanned-out request, the tasks in the list's order.  Pure."""
    numbers = range(1, len(job.tasks) + 1)
    states = {n: (State.DONE if n in job.done_tasks else results[n].state) for n in numbers}
    sections = []
    for n, task in enumerate(job.tasks, 1):
        if n in results:
            r = results[n]
            said = f"task {n} — {r.state.value}" + (f" ({r.reason})" if r.reason else "")
            sections.append(f"{said}: {task}\n{r.output.strip()}".rstrip())
        else:
            sections.append(f"task {n} — done in an earlier run: {task}")
    failed = [n for n, state in states.items() if state is not State.DONE]
    reason = ""
    if failed:
        which = ", ".join(map(str, failed))
        reason = (
            f"{len(failed)} of {len(job.tasks)} tasks did not finish (task {which}); "
            f"`- retry: yes` runs only {'that one' if len(failed) == 1 else 'those'} again"
        )
    costs = [r.cost_usd for r in results.values() if r.cost_usd is not None]
    first = next(iter(results.values()), None)
    return RunResult(
        State.ERROR if failed else State.DONE,
        first.profile if first else job.profile,
        started,
        (ended - started).total_seconds(),
        "\n\n".join(sections),
        reason,
        cost_usd=sum(costs) if costs else None,
        tasks=" · ".join(f"{n} {state.value}" for n, state in states.items()),
        incident="; ".join(f"task {n}: {r.incident}" for n, r in sorted(results.items()) if r.incident),
    )
