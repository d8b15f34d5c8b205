"""Rebuilding this clone's commits on the remote's tip never puts a request in a note twice (issue 25, "The
person's bytes"): whatever the two versions, the count of each ``## REQ-`` heading in the result is never
higher than in either of them; a merge that cannot keep to that stops (``blocked``) instead.  Real git: a
repository on disk, commits built with git's plumbing, ``Remote.rebuild`` as ``pull`` calls it."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultops.sync.git import Git
from vaultops.sync.remote import Pulled, Remote, request_headings

INBOX = "_System/COO-Inbox.md"
PERSON = ("Person", "person@example.invalid", "")
VAULTOPS = ("vaultops (agent0)", "agent0@vaultops.invalid", "")
IDS = ["REQ-a", "REQ-b", "REQ-c", "REQ-typed"]
LINES = [
    "- locked-by: agent1 @ 2026-01-01T00:00:00+00:00 (host1, claim abc123, lease 60 s)",
    "- status: running @ 2026-01-01T00:00:00+00:00",
    "- status: done @ 2026-01-01T00:01:00+00:00",
    "### Result — agent1 @ 2026-01-01T00:01:00+00:00",
    "The answer is 42.",
    "Typed by the person.",
    "",
]


def block(rid: str, text: str) -> list[str]:
    return ["", f"## {rid}", "- type: research", "- ready: yes", text]


blocks = st.builds(block, st.sampled_from(IDS), st.sampled_from(["Summarise a.", "Summarise b.", "Do c."]))


@st.composite
def edited(draw: st.DrawFn, base: list[str], shared: list[str] | None) -> list[str]:
    """``base`` with a few lines or blocks inserted, removed or changed; ``shared`` (a block both sides
    add, as a claim commit that carried the person's block and the person's own commit of it) goes in
    somewhere too."""
    lines = list(base)
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["line", "block", "remove", "change"]))
        at = draw(st.integers(0, len(lines)))
        if kind == "line":
            lines[at:at] = [draw(st.sampled_from(LINES))]
        elif kind == "block":
            lines[at:at] = draw(blocks)
        elif lines and kind == "remove":
            del lines[min(at, len(lines) - 1)]
        elif lines:
            lines[min(at, len(lines) - 1)] = draw(st.sampled_from(LINES))
    if shared is not None:
        at = draw(st.sampled_from([len(lines), draw(st.integers(0, len(lines)))]))
        lines[at:at] = shared
        if draw(st.booleans()):  # vaultops's claim lines right under it, on this side only
            lines[at + len(shared) : at + len(shared)] = LINES[:2]
    return lines


def text(lines: list[str]) -> bytes:
    return ("# Inbox\n" + "\n".join(lines) + "\n").encode()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Git:
    root = tmp_path_factory.mktemp("merge")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return Git(root)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_rebuilt_note_never_holds_a_request_more_often_than_either_version(
    repo: Git, data: st.DataObject
) -> None:
    base = [line for b in data.draw(st.lists(blocks, max_size=3)) for line in b]
    shared = data.draw(st.one_of(st.none(), blocks))
    theirs = data.draw(edited(base, shared))
    mine = data.draw(edited(base, shared))
    author = data.draw(st.sampled_from([PERSON, VAULTOPS]))
    start = repo.commit_files(None, {INBOX: text(base)}, "start\n", PERSON)
    remote = repo.commit_files(start, {INBOX: text(theirs)}, "remote\n", VAULTOPS)
    local = repo.commit_files(start, {INBOX: text(mine)}, "local\n", author)
    pulled = Pulled(True)
    rebuilt = Remote(repo, "origin", "main").rebuild(remote, local, pulled)
    if rebuilt is None:
        assert pulled.blocked, "stopped without saying why"
        return
    result = repo.blob(rebuilt, INBOX)
    assert result is not None
    most = request_headings(text(theirs)) | request_headings(text(mine))
    twice = {rid: n for rid, n in request_headings(result).items() if n > most[rid]}
    assert twice == {}, result.decode()


def test_the_persons_block_already_on_the_remote_stops_the_rebuild_and_keeps_this_clones_version(
    repo: Git,
) -> None:
    """The issue's case: the remote's commit carries the person's block (an old claim commit built from the
    bytes on disk), and the person's own commit adds it too.  No merge keeps it once: stop, keep both."""
    base = block("REQ-a", "Summarise a.")
    typed = block("REQ-typed", "Summarise the typed note.")
    start = repo.commit_files(None, {INBOX: text(base)}, "start\n", PERSON)
    remote = repo.commit_files(
        start, {INBOX: text(base + LINES[:2] + typed + LINES[:2])}, "claim\n", VAULTOPS
    )
    local = repo.commit_files(start, {INBOX: text(base + typed)}, "vault backup\n", PERSON)
    pulled = Pulled(True)
    assert Remote(repo, "origin", "main").rebuild(remote, local, pulled) is None
    assert "REQ-typed in it twice" in pulled.blocked and "origin/main" in pulled.blocked, pulled.blocked
    saved = repo.root / ".vaultops" / "state" / "conflicts" / f"_System__COO-Inbox.md.{local[:8]}"
    assert saved.read_bytes() == text(base + typed)
    assert str(saved.relative_to(repo.root)) in pulled.blocked
