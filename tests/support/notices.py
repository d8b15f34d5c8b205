"""A notice to send: an escalation of one merge request in the inbox."""

from __future__ import annotations

from vaultops.notify.message import Notice, escalation_notice


def escalation(request_id: str = "REQ-2026-05-04-0900-merge", state: str = "escalated") -> Notice:
    return escalation_notice(
        vault_name="Work Vault",
        rel="_System/COO-Inbox.md",
        request_id=request_id,
        state=state,
        asked="Merge PR 12 on the shop repo and deploy it.",
        safety_class="external-write",
        reasons=["merges a pull request", "deploys"],
        proposed="gh pr merge 12",
    )
