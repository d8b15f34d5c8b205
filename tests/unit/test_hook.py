"""The hook's answers as values: the decision JSON of each event, and an approval for the request holding
for that call until its job ends (store/asked.py, on files in a temp folder)."""

from __future__ import annotations

from pathlib import Path

from vaultops.hook.answer import decision_json


def test_decision_json_shapes() -> None:
    assert decision_json("PreToolUse", False, "no") == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": "no"}
    }  # fmt: skip
    assert decision_json("PermissionRequest", False, "no") == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "no"},
        }
    }


def test_an_approval_for_the_request_holds_for_its_calls_until_its_job_ends(tmp_path: Path) -> None:
    from vaultops.store.asked import consume_allowance, end_of_job, fingerprint, grant

    call = {"command": "gh pr merge 12"}
    record = {"tool_name": "Bash", "tool_input": call, "fingerprint": fingerprint("Bash", call)}
    grant(tmp_path, [{**record, "request": "REQ-a", "tool_use_id": "t1"}], lasting=True)
    assert consume_allowance(tmp_path, "Bash", call, "REQ-a") == "for this request"
    assert consume_allowance(tmp_path, "Bash", call, "REQ-a"), "again, within the job"
    assert not consume_allowance(tmp_path, "Bash", call, "REQ-b"), "never another request's"
    assert not consume_allowance(tmp_path, "Bash", {"command": "gh pr merge 13"}, "REQ-a"), "only that call"
    end_of_job(tmp_path, "REQ-a")
    assert not consume_allowance(tmp_path, "Bash", call, "REQ-a"), "the job ended"
    grant(tmp_path, [{**record, "request": "REQ-a", "tool_use_id": "t2"}])
    assert consume_allowance(tmp_path, "Bash", call, "REQ-a") == "once"
    assert not consume_allowance(tmp_path, "Bash", call, "REQ-a"), "once means once"
