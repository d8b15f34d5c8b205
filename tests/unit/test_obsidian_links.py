"""Links to a request: ``[[note#heading|id]]`` in notes, ``obsidian://open?…&file=note%23heading`` in
messages, both naming the heading as Obsidian's own stripHeadingForLink does."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from hypothesis import given
from hypothesis import strategies as st

from vaultops.base.obsidian import heading_anchor, request_heading
from vaultops.notify.message import obsidian_link
from vaultops.render.results import heading_link


def test_the_anchor_drops_what_obsidian_drops() -> None:
    # the example of Obsidian's API documentation for stripHeadingForLink
    assert heading_anchor("foo:#|^\\\r\n%%[[]]bar") == "foo bar"
    assert heading_anchor("REQ-1 Проверить диск: /var") == "REQ-1 Проверить диск /var"


@given(st.text())
def test_an_anchor_never_holds_what_would_end_or_split_a_link(heading: str) -> None:
    anchor = heading_anchor(heading)
    assert not set(anchor) & set("[]|#^:\\%\r\n")
    assert anchor == anchor.strip() and "  " not in anchor


def test_a_message_opens_the_request_at_its_heading() -> None:
    link = obsidian_link("My Vault", "_System/COO-Inbox.md", "REQ-1 Is git: installed? #x")
    query = parse_qs(urlsplit(link).query)
    assert query == {"vault": ["My Vault"], "file": ["_System/COO-Inbox#REQ-1 Is git installed? x"]}
    assert "%23" in link and "#" not in link  # the heading's # is encoded, as Obsidian wants
    assert obsidian_link("v", "executor-queue/fix.md") == "obsidian://open?vault=v&file=executor-queue%2Ffix"


def test_a_plan_note_is_linked_whole() -> None:
    assert request_heading("PLAN-fix", "fix") == ""
    assert heading_link("executor-queue/fix.md", "", "PLAN-fix") == "[[executor-queue/fix|PLAN-fix]]"
    inbox = heading_link("_System/COO-Inbox.md", "REQ-a [x] | y", "REQ-a")
    assert inbox == "[[_System/COO-Inbox#REQ-a x y|REQ-a]]"
