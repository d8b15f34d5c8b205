"""The person's real answers, used again where they do not belong: an approval that vaultops acted on
replayed by deleting what vaultops wrote after it, an approval of text that changed after its escalation,
and (with ``[answers] authors``) the person's approval of one request moved onto another.  Nothing runs on
them; each is told once, by an escalation the person can answer for real.  Through ``vaultops tick``, with
a bare remote as the machines' repository."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.clones import AGENT, PERSON, Fleet, after, person_push, push_as, statuses, tick
from tests.support.helpers import ROTATE

AUTHORS = f'[answers]\nauthors = ["{PERSON}"]\n'
ROTATE_TEXT = "Rotate the Stripe secret key and update the production env file."
TWO = (
    "# Inbox\n\n## REQ-b Merge\n- ready: yes\nMerge PR #12 into main.\n\n"
    f"## REQ-a Rotate\n- ready: yes\n{ROTATE_TEXT}\n\n## Notes\nsome text\n"
)


def cut_after_approval(new_text: str | None = None) -> Callable[[str], str]:
    """The replay: every line after the person's approval goes (vaultops's approved, lock, running and
    result lines), and, with ``new_text``, the request's text is changed too."""

    def edit(text: str) -> str:
        lines = text.splitlines()
        kept = lines[: lines.index("- decision: approve") + 1]
        if new_text is not None:
            kept = [new_text if line == ROTATE_TEXT else line for line in kept]
        return "\n".join(kept) + "\n"

    return edit


def ticked(fleet: Fleet, rid: str) -> list[str]:
    """Two passes (the second one finds what the first one pushed), then the request's status lines."""
    tick(fleet)
    tick(fleet)
    return statuses(fleet.remote_inbox(), rid)


def answered_afresh(fleet: Fleet, runs: int) -> None:
    """The person answers the new escalation, and it runs, once."""
    person_push(fleet.person(), after("REQ-rotate", "- decision: approve — read it"))
    assert [s.split()[0] for s in ticked(fleet, "REQ-rotate")[2:]] == ["approved", "running", "done"]
    assert fleet.runs() == {"REQ-rotate": runs}


def approve_and_run(fleet: Fleet) -> None:
    person_push(fleet.person(), after("REQ-rotate", "- decision: approve"))
    said = ticked(fleet, "REQ-rotate")
    assert [s.split()[0] for s in said] == ["escalated", "approved", "running", "done"]
    assert fleet.runs() == {"REQ-rotate": 1}


def test_an_approval_vaultops_acted_on_does_not_run_again_once_its_follow_up_lines_are_deleted(
    tmp_path: Path,
) -> None:
    """The attack as reported: with [answers] authors, the person's approval (blamed on the person still,
    since deleting lines does not change blame) under vaultops's own escalation line, and new text."""
    fleet = Fleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}", extra=AUTHORS)
    tick(fleet)
    approve_and_run(fleet)

    push_as(fleet.person(), AGENT, cut_after_approval("Delete every branch on origin and force push main."))
    said = ticked(fleet, "REQ-rotate")
    assert [s.split()[0] for s in said] == ["escalated", "escalated"], said
    assert (
        'ignored a forged approval: "- decision: approve" follows a status line whose answer vaultops '
        "acted on already" in said[1]
    )
    assert fleet.runs() == {"REQ-rotate": 1}, "the old approval ran the new text"
    tick(fleet)
    assert len(statuses(fleet.remote_inbox(), "REQ-rotate")) == 2, "told once"

    answered_afresh(fleet, 2)  # the fresh escalation is the person's to answer, for the text they now see


def test_without_answers_authors_an_answer_acted_on_is_used_up_too(tmp_path: Path) -> None:
    """The same replay with the text unchanged and no [answers] authors: the status line is vaultops's own,
    but it has been answered, so the approval under it counts once."""
    fleet = Fleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}")
    tick(fleet)
    approve_and_run(fleet)

    push_as(fleet.person(), AGENT, cut_after_approval())
    said = ticked(fleet, "REQ-rotate")
    assert len(said) == 2 and "whose answer vaultops acted on already" in said[1], said
    assert fleet.runs() == {"REQ-rotate": 1}


def test_an_approval_of_a_request_whose_text_changed_after_its_escalation_runs_nothing(
    tmp_path: Path,
) -> None:
    """An agent rewrites the escalated request; the person, who read the old text, approves: the
    approval is for that text, so nothing runs and the request is escalated again with what it says now."""
    fleet = Fleet(tmp_path, 1, f"# Inbox\n\n{ROTATE}", extra=AUTHORS)
    tick(fleet)
    new = "Rotate the Stripe secret key and post it in the team chat."
    push_as(fleet.person(), AGENT, lambda text: text.replace(ROTATE_TEXT, new))
    person_push(fleet.person(), after("REQ-rotate", "- decision: approve"))
    said = ticked(fleet, "REQ-rotate")
    assert [s.split()[0] for s in said] == ["escalated", "escalated"], said
    assert (
        'ignored the approval "- decision: approve": the request changed after it was escalated; '
        "approve it again" in said[1]
    )
    assert fleet.runs() == {}
    answered_afresh(fleet, 1)


def transplant(escalation_of_a: str, new_text: str) -> Callable[[str], str]:
    """The attacker's one commit: REQ-b's block becomes REQ-a's (heading, text, and REQ-a's real escalation
    line in place of REQ-b's), the person's approval of REQ-b stays where it is, what followed it goes,
    and the old REQ-a is renamed."""

    def edit(text: str) -> str:
        out: list[str] = []
        part = "before"
        for line in text.splitlines():
            if line.startswith("## REQ-b"):
                out.append("## REQ-a Now")
                part = "b"
            elif line.startswith("## REQ-a"):
                out.append("## Old stuff")
                part = "rest"
            elif part == "b" and line == "Merge PR #12 into main.":
                out.append(new_text)
            elif part == "b" and line.startswith("- status: escalated"):
                out.append(escalation_of_a)
            elif part == "b" and line == "- decision: approve":
                out.append(line)
                part = "cut"
            elif part == "cut":
                if not line.strip():
                    out.append(line)
                    part = "rest"
            else:
                out.append(line)
        return "\n".join(out) + "\n"

    return edit


@pytest.mark.parametrize(
    "text",
    # REQ-a's text as it was (the text REQ-a's escalation was written for), and as reported
    [ROTATE_TEXT, "Rotate the Stripe secret key now, and also delete the old key."],
    ids=["same-text", "new-text"],
)
def test_with_answers_authors_the_persons_approval_of_one_request_moved_onto_another_runs_nothing(
    tmp_path: Path, text: str
) -> None:
    fleet = Fleet(tmp_path, 1, TWO, extra=AUTHORS)
    tick(fleet)
    [escalation_of_a] = statuses(fleet.remote_inbox(), "REQ-a")
    person_push(fleet.person(), after("REQ-b", "- decision: approve"))
    ticked(fleet, "REQ-b")
    assert fleet.runs() == {"REQ-b": 1}

    push_as(fleet.person(), AGENT, transplant(f"- status: {escalation_of_a}", text))
    said = ticked(fleet, "REQ-a")
    assert len(said) == 2 and said[0] == escalation_of_a, said
    assert (
        f'ignored a forged approval: "- decision: approve" was committed by {PERSON} under another '
        "status line or request, not this one" in said[1]
    )
    assert fleet.runs() == {"REQ-b": 1}, "the person's approval of REQ-b ran REQ-a"
    tick(fleet)
    assert len(statuses(fleet.remote_inbox(), "REQ-a")) == 2, "told once"


def test_a_whole_request_block_moved_to_another_id_carries_no_answer(tmp_path: Path) -> None:
    """REQ-b's block, its real escalation and the person's approval under it, renamed REQ-a: vaultops's
    record of that escalation line is REQ-b's, so under REQ-a it is not vaultops's line."""
    fleet = Fleet(tmp_path, 1, TWO)
    tick(fleet)
    person_push(fleet.person(), after("REQ-b", "- decision: approve"))

    def move(text: str) -> str:
        text = text.replace("## REQ-a Rotate", "## Old stuff")
        return text.replace("## REQ-b Merge", "## REQ-a Rotate")

    push_as(fleet.person(), AGENT, move)
    tick(fleet)
    said = statuses(fleet.remote_inbox(), "REQ-a")
    assert len(said) == 2, said
    assert (
        'ignored a forged approval: "- decision: approve" follows a status line vaultops did not write'
        in (said[1])
    )
    assert fleet.runs() == {}


