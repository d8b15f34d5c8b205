"""What a request asks, as the classifier reads it: its heading title, a plan note's file name and its
`tasks:`, and the text under them."""

from __future__ import annotations

from vaultops.model import Request


def test_what_is_asked_reads_title_tasks_and_text() -> None:
    request = Request("REQ-x", "Rotate keys", "_System/COO-Inbox.md", 0, 3, 2, {"tasks": "one\ntwo"}, "Body.")
    assert request.asked == "Rotate keys\none\ntwo\nBody."
    plan = Request("P", "drop-old-rows", "executor-queue/drop-old-rows.md", 0, 3, 2, {}, None)
    assert plan.asked == "drop old rows"
