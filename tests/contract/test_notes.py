"""The notes' contract: the person's disk and HEAD are two things (what they saved and did not commit is on
disk only, and nothing vaultops pushes is built from it), and a note is written whole only over the
version that was read.  The note writer on a real vault, and the twin."""

from __future__ import annotations

import pytest

from tests.contract.worlds import INBOX_TEXT, Machine
from tests.support.helpers import INBOX
from vaultops.base.errors import UnsafePath
from vaultops.store.notes import NoteTooLarge

TYPED = b"\n## REQ-b Not committed yet\n- ready: yes\nSaved; obsidian-git has not committed it.\n"


def test_head_lacks_the_persons_uncommitted_lines_that_disk_has(machine: Machine) -> None:
    committed = INBOX_TEXT.encode()
    assert machine.notes.read(INBOX) == committed
    machine.save(INBOX, committed + TYPED)
    head, at_head = machine.notes.head_version(INBOX)
    assert head == machine.remote.head() and at_head == committed
    assert machine.notes.read(INBOX) == committed + TYPED
    machine.commit(INBOX)
    head_after, at_head = machine.notes.head_version(INBOX)
    assert head_after != head and at_head == committed + TYPED


def test_a_note_missing_from_head_or_disk_is_none(machine: Machine) -> None:
    assert machine.notes.read("Daily/nowhere.md") is None
    assert machine.notes.head_version("Daily/nowhere.md")[1] is None
    machine.save("Daily/new.md", b"new\n")
    assert machine.notes.head_version("Daily/new.md")[1] is None


def test_a_write_over_a_note_that_changed_since_it_was_read_is_refused(machine: Machine) -> None:
    read = machine.notes.read(INBOX)
    assert read is not None
    machine.save(INBOX, read + TYPED)  # the person saves between the read and the write
    assert machine.notes.replace(INBOX, read, read + b"- status: done\n") is False
    assert machine.notes.read(INBOX) == read + TYPED  # their save stands
    assert machine.notes.replace(INBOX, read + TYPED, read + TYPED + b"x\n") is True
    assert machine.notes.read(INBOX) == read + TYPED + b"x\n"


def test_a_new_note_is_written_only_while_it_still_does_not_exist(machine: Machine) -> None:
    assert machine.notes.replace("Daily/2026-05-04.md", None, b"# day\n") is True
    assert machine.notes.replace("Daily/2026-05-04.md", None, b"# other\n") is False
    assert machine.notes.read("Daily/2026-05-04.md") == b"# day\n"


def test_plan_notes_are_the_queue_folders_notes_in_name_order(machine: Machine) -> None:
    before = machine.notes.plan_notes()
    assert before == ["executor-queue/fix-tab-preview.md"]
    machine.save("executor-queue/a-first.md", b"---\nschedule: never\n---\n# A\n")
    machine.save("executor-queue/notes.txt", b"not a note\n")
    machine.save("executor-queue/deeper/b.md", b"# B\n")
    assert machine.notes.plan_notes() == ["executor-queue/a-first.md", "executor-queue/fix-tab-preview.md"]


def test_a_path_out_of_the_vault_is_refused(machine: Machine) -> None:
    for outside in ("../outside.md", "/etc/hostname", "Daily/../../outside.md"):
        with pytest.raises(UnsafePath):
            machine.notes.read(outside)
        with pytest.raises(UnsafePath):
            machine.notes.replace(outside, None, b"x\n")


def test_a_note_over_the_size_limit_is_not_read(machine: Machine) -> None:
    machine.save("Daily/huge.md", b"x" * 20_000_001)  # [inbox] max_mb's default is 20
    with pytest.raises(NoteTooLarge, match=r"Daily/huge.md is 20.0 MB, over the 20 MB limit"):
        machine.notes.read("Daily/huge.md")
