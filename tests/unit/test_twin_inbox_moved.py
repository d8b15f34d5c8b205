"""A renamed or moved inbox on the twins (``engine.moved``): the pass names the exact setting to change, in
the log, this machine's problems (its note, the dashboard) and the channels, once; never `vaultops init`;
and a note nobody meant as an inbox is never named as one.  Real git's rename detection is in
tests/unit/test_inbox_moved_git.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.clones import request_block
from tests.support.helpers import INBOX
from tests.support.twin import TwinFleet, no_processes  # noqa: F401
from vaultops.config import load_config
from vaultops.engine.memory import PERSON
from vaultops.model import State
from vaultops.render.dashboard import escape

pytestmark = pytest.mark.usefixtures("no_processes")

NEW = "Inbox/Requests.md"
SETTING = f'`[inbox] path = "{NEW}"` in .vaultops/config.toml'
DASHBOARD = "_System/vaultops.md"


def worked_fleet(tmp_path: Path) -> TwinFleet:
    """Two machines that have run a request of the inbox: vaultops's lines stand under it."""
    fleet = TwinFleet(tmp_path, 2, "# Inbox\n" + request_block("REQ-one", "Summarise the week."))
    fleet.tick(0)
    fleet.tick(1)
    assert fleet.remote_requests()["REQ-one"].state is State.DONE
    return fleet


def rename_on_phone(fleet: TwinFleet, old: str, new: str) -> None:
    """The person renames the note on the phone and obsidian-git pushes the rename."""
    tree = dict(fleet.origin.tree(fleet.origin.tip))
    tree[new] = tree.pop(old)
    fleet.origin.tip = fleet.origin.commit(fleet.origin.tip, tree, "vault backup", PERSON)


def moved_lines(lines: list[str]) -> list[str]:
    return [w for w in lines if w.startswith(f"{INBOX}: the inbox is not there")]


def test_an_inbox_renamed_on_the_phone_is_named_with_the_setting_once_and_followed_once_set(
    tmp_path: Path,
) -> None:
    fleet = worked_fleet(tmp_path)
    rename_on_phone(fleet, INBOX, NEW)
    fleet.person_push(lambda t: t + request_block("REQ-two", "Summarise the month."), NEW)
    for _ in range(2):
        for i in (0, 1):
            report = fleet.tick(i)
            [line] = moved_lines(report.warnings)
            assert f"git saw it renamed to {NEW}" in line and SETTING in line
            assert "vaultops init" not in " ".join(report.warnings)
            assert not fleet[i].tree.get(INBOX), "no second, empty inbox is made"
    assert fleet.runs()["REQ-two"] == 0  # not followed by itself: the shared config names the inbox
    for i in (0, 1):
        assert SETTING in fleet[i].text(f"_System/vaultops/host{i}.md")  # the machine's note
        assert escape(SETTING) in fleet[i].text(DASHBOARD)  # escaped for Markdown: Obsidian shows it as typed
        told = [n for n in fleet[i].chat.sent if SETTING in n.body]
        assert len(told) == 1, [n.title for n in fleet[i].chat.sent]  # each machine tells of its problem once

    config = fleet.remote_text(".vaultops/config.toml").replace(f'path = "{INBOX}"', f'path = "{NEW}"')
    fleet.origin.person_push({".vaultops/config.toml": config.encode()})
    for i in (0, 1):
        fleet[i].tick()  # pulls the fix
        fleet[i].vault.reconfigure(load_config(fleet[i].root))  # what the daemon's reload does
        report = fleet.tick(i)
        assert not moved_lines(report.warnings)
        # vaultops's lines in the moved note are still its own (found under its old name): nothing of the
        # finished request is taken for a claim that never ended
        assert [o.request_id for o in report.outcomes if o.request_id == "REQ-one"] == [], report.outcomes
    assert fleet.runs()["REQ-two"] == 1
    assert fleet.remote_requests(NEW)["REQ-two"].state is State.DONE
    for i in (0, 1):
        over = [n for n in fleet[i].chat.sent if "its inbox problem" in n.body and "is over" in n.body]
        assert len(over) == 1 and "works again" in over[0].title


def test_a_move_saved_on_this_machine_and_not_committed_is_found_by_vaultops_lines(tmp_path: Path) -> None:
    fleet = worked_fleet(tmp_path)
    m = fleet[0]
    m.save(NEW, m.text(INBOX))
    del m.tree[INBOX]
    [line] = moved_lines(fleet.tick(0).warnings)
    assert f"vaultops's request lines are now in {NEW}" in line and SETTING in line


@pytest.mark.parametrize(
    "others",
    [
        # a note that merely mentions a request, and one with request headings vaultops never wrote under
        {
            "Notes/ideas.md": "See REQ-one for the summary.\n",
            "Notes/draft.md": request_block("REQ-x", "Draft."),
        },
        # two notes vaultops has worked in (an archive of finished requests beside the moved inbox): neither
        "two",
    ],
)
def test_a_deleted_inbox_names_no_note_nobody_meant(tmp_path: Path, others: dict[str, str] | str) -> None:
    fleet = worked_fleet(tmp_path)
    m = fleet[0]
    worked = m.text(INBOX)
    del m.tree[INBOX]
    if others == "two":
        m.save("Archive/2025.md", worked)
        m.save(NEW, worked)
    else:
        assert isinstance(others, dict)
        for rel, text in others.items():
            m.save(rel, text)
    [line] = moved_lines(fleet.tick(0).warnings)
    assert '`[inbox] path = "<its new path>"` in .vaultops/config.toml' in line, line
    assert "otherwise create the note" in line and "vaultops init" not in line
