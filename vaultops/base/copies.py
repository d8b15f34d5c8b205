"""Conflict copies made by sync tools, told by their names alone.  Pure.

When two devices change one file before they have synced, a sync tool keeps both: the other version under
a new name beside the original.  A copy of a plan note would otherwise be a new job, and run the work
twice.  The names each tool gives:

- Syncthing: ``note.sync-conflict-20260102-101010-ABCDEFG.md``
- Dropbox: ``note (conflicted copy 2026-01-02).md``, ``note (Ann's conflicted copy 2026-01-02).md``,
  ``note (conflict 2026-01-02).md``, ``note (Case Conflict).md``
- Nextcloud: ``note (conflicted copy 2026-01-02 101010).md``; older ownCloud:
  ``note_conflict-20260102-101010.md``
- Obsidian Sync: ``note (Conflicted copy DEVICE 202601021010).md``; Seafile: ``note (SFConflict …).md``
- iCloud: ``note 2.md``; Google Drive (and Dropbox for some conflicts): ``note (1).md``
- OneDrive: ``note-MACHINENAME.md``, the Windows computer name (upper case, up to 15 characters)

A tool's own marker (``conflicted copy``, ``sync-conflict``…) makes a copy even with its original gone.
A number or a machine name alone is an ordinary way to name a note (``plan 2.md``, ``deploy-EU.md``): it
makes a copy only when the original is beside it.  A copy of a copy (``note (conflicted copy …) (1).md``)
is the original's copy too.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass

_SYNCTHING = re.compile(r"(?P<base>.+)\.sync-conflict-\d{8}-\d{6}(?:-[A-Za-z0-9]+)?")
_OWNCLOUD = re.compile(r"(?P<base>.+)_conflict-\d{8}-\d{6}")
_PAREN = re.compile(r"(?P<base>.*?\S) \((?P<inner>[^()]*)\)")
# what a tool writes in the brackets, enough to call it a copy whatever is beside it
_MARKED = re.compile(r"(?i).*conflicted copy.*|conflict \d.*|case conflict(?: \d+)?|sfconflict .*")
_NUMBER = re.compile(r"[1-9]\d?")  # iCloud's and Google Drive's counters stay small
_ICLOUD = re.compile(r"(?P<base>.*\S) (?P<n>[2-9]|[1-9]\d)")
_MACHINE = re.compile(r"(?=.*[A-Z])[A-Z0-9][A-Z0-9-]{0,14}")  # a Windows (NetBIOS) computer name
DEPTH = 3  # copies of copies of copies


@dataclass(frozen=True, slots=True)
class Copy:
    name: str  # the copy's file name
    original: str  # the file name of the note it is a copy of
    present: bool  # that note is beside it


def _stripped(stem: str) -> Iterator[tuple[str, bool]]:
    """Each shorter name ``stem`` may be a copy of, one tool's suffix off, with whether that suffix is a
    tool's own marker (True) or only a number or a machine name (False)."""
    for marked in (_SYNCTHING, _OWNCLOUD):
        if m := marked.fullmatch(stem):
            yield m["base"], True
    if m := _PAREN.fullmatch(stem):
        inner = m["inner"].strip()
        if _MARKED.fullmatch(inner):
            yield m["base"], True
        elif "conflict" in inner.lower() or _NUMBER.fullmatch(inner):
            yield m["base"], False
    if m := _ICLOUD.fullmatch(stem):
        yield m["base"], False
    for i, ch in enumerate(stem):  # OneDrive: the machine name may itself hold hyphens
        if ch == "-" and i > 0 and _MACHINE.fullmatch(stem[i + 1 :]):
            yield stem[:i], False


def _originals(stem: str, depth: int = DEPTH) -> Iterator[tuple[str, bool]]:
    """Every name ``stem`` may be a copy of, nearest first; True where a tool's marker says so."""
    for base, marked in _stripped(stem):
        yield base, marked
        if depth > 1:
            for deeper, more in _originals(base, depth - 1):
                yield deeper, marked or more


def copy_of(name: str, siblings: Collection[str]) -> Copy | None:
    """``name`` as a sync tool's conflict copy of a note, judged with the other file names of its folder
    (``siblings``); None for a note of its own."""
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        return None
    suffix = "." + ext
    candidates = list(_originals(stem))
    # the shortest name beside it: of a copy of a copy, the note both copy
    present = [base + suffix for base, _ in candidates if base + suffix in siblings]
    if present:
        return Copy(name, min(present, key=len), present=True)
    for base, marked in candidates:
        if marked:
            return Copy(name, base + suffix, present=False)
    return None


def copies_in(names: Collection[str]) -> dict[str, Copy]:
    """The conflict copies among the file names of one folder, by name."""
    return {name: found for name in names if (found := copy_of(name, names)) is not None}
