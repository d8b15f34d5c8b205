"""A code job's worktree and branch names, as values."""

from __future__ import annotations

from vaultops.run.worktrees import branch_for, job_name


def test_a_name_git_takes_as_it_is_stays_as_it_is() -> None:
    rid = "REQ-2026-05-06-fix_tabs.v2"
    assert branch_for(rid, "_System/COO-Inbox.md") == f"vaultops/{rid}"
    assert job_name("PLAN-tabs", "executor-queue/tabs.md") == "PLAN-tabs"
