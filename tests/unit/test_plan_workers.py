"""Plan notes for workers, as values: the news a worker's reports make (what the note must say first) and
the `worker:` field."""

from __future__ import annotations

from datetime import UTC

import pytest

from vaultops.model import State
from vaultops.scan.plan import as_plan_note
from vaultops.workers.plans import Heard, news


def test_news_reads_the_first_thing_the_note_must_say() -> None:
    def heard(i: int, tag: str, verdict: str = "approve", label: str = "x") -> Heard:
        return Heard(i, tag, label, verdict, f"[{tag}:{label}] line {i}")

    assert news("w", "running", None, [heard(1, "STATUS"), heard(2, "REQUEST")]) is None
    done = news("w", "running", None, [heard(1, "STATUS"), heard(2, "DONE"), heard(3, "ESCALATE")])
    assert done is not None and done.state is State.DONE and done.heard == 2 and done.stop
    assert done.output == "[STATUS:x] line 1\n[DONE:x] line 2"
    asked = news("w", "running", None, [heard(4, "REQUEST", "escalate"), heard(5, "DONE")])
    assert asked is not None and asked.state is State.ESCALATED and asked.heard == 4 and not asked.stop
    denied = news("w", "running", None, [heard(6, "REQUEST", "deny")])
    assert denied is None, "a denied request is the worker's business; it was answered"
    ended = news("w", "failed", 3, [heard(7, "STATUS")], log_tail=["boom"])
    assert ended is not None and ended.state is State.ERROR and "exit code 3" in ended.reason
    assert ended.output.endswith("boom") and ended.heard == 7
    late = news("w", "running", None, [], overdue=60.0)
    assert late is not None and late.stop and "within its time (60 s)" in late.reason


@pytest.mark.parametrize(
    ("value", "name"), [("yes", "Fix-the-tab"), ("true", "Fix-the-tab"), ("coder-1", "coder-1"), ("no", None)]
)
def test_the_worker_field(value: str, name: str | None) -> None:
    from datetime import datetime

    from vaultops.scan.note import parse_note

    text = f"---\nworker: {value}\n---\nDo it\n"
    note = as_plan_note(parse_note("executor-queue/Fix the tab.md", text.encode()), datetime.now(UTC))
    (request,) = note.requests
    assert request.fields.get("worker") == name
