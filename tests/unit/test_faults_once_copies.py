"""Sync tools' conflict copies told by name (vaultops.base.copies): every tool's names, and no false copy."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultops.base.copies import copies_in, copy_of

# each tool's name for a copy of ``{}``, and whether its own marker says "copy" without the original
MADE = [
    ("{} 2", False),  # iCloud
    ("{} 13", False),
    ("{} (1)", False),  # Google Drive
    ("{} (conflicted copy 2026-01-02)", True),  # Dropbox
    ("{} (Ann O'Neil's conflicted copy 2026-01-02)", True),
    ("{} (conflict 2026-01-02)", True),
    ("{} (Case Conflict)", True),
    ("{} (conflicted copy 2026-01-02 101010)", True),  # Nextcloud
    ("{}_conflict-20260102-101010", True),  # ownCloud
    ("{}.sync-conflict-20260102-101010-ABCDEFG", True),  # Syncthing
    ("{}.sync-conflict-20261129-101010-ABCDEF", True),
    ("{}.sync-conflict-20261129-101010", True),
    ("{} (Conflicted copy Pixel 7 202601021010)", True),  # Obsidian Sync
    ("{} (SFConflict ann@example.org 2026-01-02-10-10-10)", True),  # Seafile
    ("{}-DESKTOP-AB12CD", False),  # OneDrive
    ("{}-LAPTOP", False),
]

stems = st.text(
    st.characters(codec="utf-8", exclude_characters="/\0\n()", exclude_categories=("Cs", "Cc")),
    min_size=1,
    max_size=30,
).filter(lambda s: s == s.strip() and not s.startswith("."))


@pytest.mark.parametrize(("made", "marked"), MADE)
def test_each_tools_copy_is_a_copy_of_its_original(made: str, marked: bool) -> None:
    name = made.format("weekly review") + ".md"
    found = copy_of(name, {"weekly review.md", name})
    assert found is not None and found.original == "weekly review.md" and found.present
    alone = copy_of(name, {name})
    assert (alone is not None) == marked, "a number or a machine name alone makes no copy"
    if alone is not None:
        assert alone.original == "weekly review.md" and not alone.present


@given(stems, st.sampled_from(MADE))
def test_any_note_s_copy_is_told_with_the_original_beside_it(stem: str, made: tuple[str, bool]) -> None:
    name = made[0].format(stem) + ".md"
    found = copy_of(name, {f"{stem}.md", name})
    assert found is not None, name
    # the shortest name beside it: the original (or, when the stem itself reads as a copy, its own root)
    assert len(found.original) <= len(f"{stem}.md") and found.present


@given(stems, st.sampled_from([m for m, marked in MADE if not marked]))
def test_a_numbered_name_without_its_original_is_a_note_of_its_own(stem: str, made: str) -> None:
    name = made.format(stem) + ".md"
    others = {name, f"{stem}2.md", f"{stem}.txt"}  # longer than any name it may copy
    found = copy_of(name, others)
    assert found is None or not found.present  # only a tool's marker inside ``stem`` could make it one


@given(st.lists(st.text(min_size=0, max_size=40), max_size=8))
def test_any_names_are_judged_without_error_and_never_as_their_own_copy(names: list[str]) -> None:
    for name, copy in copies_in(names).items():
        assert copy.name == name and copy.original != name
        assert not copy.present or copy.original in names


@pytest.mark.parametrize(
    ("name", "siblings"),
    [
        ("plan 2.md", {"plan-2.md", "plans.md"}),  # not the same note
        ("report 2024.md", {"report.md"}),  # a year is not iCloud's counter
        ("deploy-eu.md", {"deploy.md"}),  # lower case: a name, not a Windows computer
        ("deploy (draft).md", {"deploy.md"}),
        ("notes (1)", {"notes"}),  # no extension
        ("(1).md", {".md"}),
    ],
)
def test_names_that_only_look_like_copies(name: str, siblings: set[str]) -> None:
    assert copy_of(name, siblings | {name}) is None


def test_a_copy_of_a_copy_names_the_note_both_copy() -> None:
    names = {"n.md", "n (conflicted copy 2026-01-02).md", "n (conflicted copy 2026-01-02) (1).md", "n 2 3.md"}
    assert {c.original for c in copies_in(names).values()} == {"n.md"}
