"""Counting words in what vaultops writes for people.  Pure."""

from __future__ import annotations


def counted(n: int, noun: str) -> str:
    """``1 commit``, ``2 commits``, ``0 checks``: a noun that takes an ``s``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
