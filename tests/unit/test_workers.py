"""What workers write and read, as text: stream-json lines, their log as a person reads it, reports read
from an offset across a rotation, and which file sets overlap."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.helpers import REPO
from vaultops.base.claude_code import message_lines
from vaultops.decide.files import files_overlap, patterns_overlap
from vaultops.workers.logs import RotatingLog
from vaultops.workers.reports import ReportReader, shown_lines, watch_reports, worker_scope


def test_watch_reports_reads_a_log_from_an_offset_across_rotation(tmp_path: Path) -> None:
    folder = tmp_path / "w"
    log = RotatingLog(folder, max_bytes=120, keep=2)
    reader = ReportReader(worker_scope(str(tmp_path)))
    log.write(b"[REQUEST:create_worktree] branch=fix/x\n")
    log.write(b"[stderr] [REQUEST:merge_pr]\n")  # stderr is not a report
    log.write(b"[vaultops] answered: [ANSWER:x] approve\n")
    reports, offset = watch_reports(folder, 0, reader)
    assert [(r.kind, r.label, r.verdict.kind) for r in reports] == [("REQUEST", "create_worktree", "approve")]
    assert reports[0].answer and reports[0].answer.startswith("[ANSWER:create_worktree] approve — ")
    log.write(b"[REQUEST:push] branch=fix/x\n")  # its own branch, known from the window
    log.write(b"[DONE:pr_ready] CI green\n")  # the log rotates under the reader here
    log.write(b"[ESCALATE:scope_expansion] found another bug\n")
    log.close()
    assert (folder / "stdout.log.1").exists()
    reports, offset = watch_reports(folder, offset, reader)
    got = [(r.kind, r.label, r.verdict.kind) for r in reports]
    assert ("REQUEST", "push", "approve") in got and ("DONE", "pr_ready", "approve") in got
    assert ("ESCALATE", "scope_expansion", "deny") in got
    (done,) = [r for r in reports if r.kind == "DONE"]
    assert done.answer is None  # DONE is a value for the pipeline, not a question
    assert watch_reports(folder, offset, reader) == ([], offset)


def test_stream_json_lines_are_read_and_written() -> None:
    event = {
        "type": "assistant",
        "message": {"content": [{"type": "text", "text": "ok\n[DONE:pr_ready] green"}]},
    }
    assert message_lines(json.dumps(event)) == ["ok", "[DONE:pr_ready] green"]
    assert message_lines("[STATUS:x] plain") == ["[STATUS:x] plain"]


def test_logs_show_claude_codes_stream_json_as_text() -> None:
    captured = (REPO / "fixtures" / "claude-code" / "stream.jsonl").read_text().splitlines()
    shown = [line for raw in captured for line in shown_lines(raw)]
    assert shown[0].startswith("[session] 89e73a01-") and "claude-opus" in shown[0]
    assert shown[1:] == [
        "[tool] Bash: echo hello > out.txt",
        "[tool result] (Bash completed with no output)",
        "done",
        "[result] success · 2 turns · $0.0184",
    ]
    assert shown_lines("[STATUS:x] plain") == ["[STATUS:x] plain"]
    assert shown_lines('{"type": broken') == ['{"type": broken']


def test_files_overlap_errs_towards_overlap() -> None:
    assert patterns_overlap("src/*.py", "src/app/x.py")
    assert patterns_overlap("src", "src/x.py") and patterns_overlap("docs/", "docs/a.md")
    assert not patterns_overlap("src/*.py", "docs/x.md")
    assert not patterns_overlap("src/a.py", "src/b.py")
    assert patterns_overlap("a/*.py", "a/*.md")  # two wildcards under one folder: not told apart
    assert files_overlap((), ("x",)) and not files_overlap(("a/*",), ("b/*",))
