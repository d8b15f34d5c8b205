"""How Obsidian names a heading in a link.  Pure, standard library only: the notes' links and the
messages' ``obsidian://`` links are made the same way."""

from __future__ import annotations

import re

# what Obsidian's own stripHeadingForLink takes out of a heading before it links to it
_NOT_IN_LINKS = re.compile(r"[\[\]|#^:\\%]")


def heading_anchor(heading: str) -> str:
    """The heading as a link names it: the characters a link cannot carry become spaces."""
    return " ".join(_NOT_IN_LINKS.sub(" ", heading).split())


def request_heading(request_id: str, title: str) -> str:
    """The heading of an inbox request (``## REQ-… title``); "" for a plan note, which is its whole note."""
    return "" if request_id.startswith("PLAN-") else f"{request_id} {title}".strip()
