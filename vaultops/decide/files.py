"""Whether two file sets overlap (workers' --files, plan notes' files:).  Pure: globs in, a verdict out.

Two sets overlap when some path could match a pattern of each.  Deciding that exactly for arbitrary
globs is not worth it; this errs on the side of overlap (a refused spawn is a small cost, two agents
editing one file is not): patterns that match each other as text, or where one's literal folder holds
the other's, count as overlapping.  An empty set means "any file", which overlaps everything.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import PurePosixPath

_MAGIC = frozenset("*?[")


def _literal_prefix(pattern: str) -> tuple[str, ...]:
    """The leading folder parts of a pattern that hold no wildcard."""
    parts: list[str] = []
    for part in PurePosixPath(pattern).parts:
        if _MAGIC & set(part):
            break
        parts.append(part)
    return tuple(parts)


def _normal(pattern: str) -> str:
    text = pattern.strip().removeprefix("./")
    return text.rstrip("/") + "/**" if text.endswith("/") else text


def patterns_overlap(a: str, b: str) -> bool:
    a, b = _normal(a), _normal(b)
    if a == b or fnmatch.fnmatchcase(a, b) or fnmatch.fnmatchcase(b, a):
        return True
    pa, pb = _literal_prefix(a), _literal_prefix(b)
    whole_a, whole_b = pa == PurePosixPath(a).parts, pb == PurePosixPath(b).parts
    if (whole_a and pb[: len(pa)] == pa) or (whole_b and pa[: len(pb)] == pb):
        return True  # a literal folder holds the other pattern's files
    if whole_a or whole_b:
        return False  # a literal path the other pattern does not match (checked above)
    # two wildcards: a ``*`` may stand for any number of folders (fnmatch's ``*`` crosses ``/``), so they
    # can be told apart only where their literal folders part ways
    n = min(len(pa), len(pb))
    return pa[:n] == pb[:n]


def in_repo(files: Sequence[str], repo: str) -> tuple[str, ...]:
    """A code job's files as paths in its repository (all of it when it names none), so that two jobs
    on one repository are compared, and jobs on two repositories never are."""
    folder = repo.rstrip("/")
    return tuple(f"{folder}/{f.strip().removeprefix('./').lstrip('/')}" for f in files) or (f"{folder}/**",)


def files_overlap(a: Sequence[str], b: Sequence[str]) -> bool:
    if not a or not b:
        return True
    return any(patterns_overlap(x, y) for x in a for y in b)
