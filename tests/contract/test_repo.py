"""The repository's contract (``engine.ports.Repo``): a commit of exactly the paths named, by the author the
caller gives; a commit's file; another git's rebase or merge under way; and blame, which forged-answer
detection stands on: each line goes to the commit that brought it in, and to its author, as ``git blame``
gives it.  ``sync.git.Git`` on a real repository, and the twin (``engine.memory.MemoryGit``)."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.helpers import GIT_ENV, git
from vaultops.engine.memory import PERSON, MemoryClone, MemoryGit, MemoryOrigin
from vaultops.engine.ports import Repo
from vaultops.sync.git import Git, GitError, identity

SIDES = ["real", "memory"]
NOTE = "Inbox.md"
START = {"README.md": b"# Vault\n"}
AGENT = "agent0"
VAULTOPS = "{} <{}>".format(*identity(AGENT))
REBASING = "a rebase is in progress in this clone (obsidian-git's or the person's)"
PICKING = "a cherry-pick is in progress in this clone (obsidian-git's or the person's)"
MERGING = "a merge is in progress in this clone (obsidian-git's or the person's)"
DETACHED = "HEAD is not on a branch (detached)"


@dataclass
class RepoSide:
    """One side: the port, and what the person and another git do there, each side its own way."""

    repo: Repo
    save: Callable[[str, bytes | None], None]  # the person saves a note (None: deletes it), in no commit
    person: Callable[[str], str]  # the person commits a note as disk has it (obsidian-git): the commit's id
    author: Callable[[str], str]  # a commit's author, as the side records it (``Name <email>``)
    merging: Callable[[], None]  # another git stops in a merge, on a conflict
    rebasing: Callable[[], None]  # another git stops in a rebase, on a conflict
    picking: Callable[[], None]  # another git stops in a cherry-pick, on a conflict
    detach: Callable[[], None]  # HEAD is checked out on no branch
    # the person commits the note as ``theirs`` on a branch from ``base`` and merges it (``merged``: the
    # note after the merge): the branch's commit and the merge's
    join: Callable[[str, bytes, bytes], tuple[str, str]]
    labels: dict[str, str] = field(default_factory=dict)  # a commit's id -> the name a case gave it


def real_side(root: Path) -> RepoSide:
    root.mkdir(parents=True)
    git(root, "init", "-q")
    for rel, raw in START.items():
        (root / rel).write_bytes(raw)
    git(root, "add", "--", *START)
    git(root, "commit", "-qm", "start")
    repo = Git(root)

    def save(rel: str, raw: bytes | None) -> None:
        if raw is None:
            (root / rel).unlink()
            return
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(raw)

    def person(rel: str) -> str:
        git(root, "add", "--", rel)
        git(root, "commit", "-qm", "person", "--", rel)
        return git(root, "rev-parse", "HEAD").strip()

    def author(sha: str) -> str:
        return git(root, "log", "-1", "--format=%an <%ae>", sha).strip()

    def stopped(command: str) -> None:
        """``command`` (merge or rebase) of a branch that changed README.md as this one did: a conflict."""
        base = git(root, "rev-parse", "HEAD").strip()
        git(root, "checkout", "-q", "-b", "theirs", base)
        (root / "README.md").write_bytes(b"# Their vault\n")
        git(root, "commit", "-qam", "theirs")
        git(root, "checkout", "-q", "-")
        (root / "README.md").write_bytes(b"# Our vault\n")
        git(root, "commit", "-qam", "ours")
        done = subprocess.run(
            ["git", command, "theirs"], cwd=root, capture_output=True, check=False, env={**GIT_ENV}
        )
        assert done.returncode != 0, done.stdout

    def detach() -> None:
        git(root, "checkout", "-q", "--detach")

    def join(base: str, theirs: bytes, merged: bytes) -> tuple[str, str]:
        git(root, "checkout", "-q", "-b", f"from-{base[:8]}", base)
        save(NOTE, theirs)
        branch = person(NOTE)
        git(root, "checkout", "-q", "-")
        git(root, "merge", "-q", "--no-ff", "--no-edit", f"from-{base[:8]}")
        assert (root / NOTE).read_bytes() == merged  # git's merge of the two
        return branch, git(root, "rev-parse", "HEAD").strip()

    return RepoSide(
        repo, save, person, author, lambda: stopped("merge"), lambda: stopped("rebase"),
        lambda: stopped("cherry-pick"), detach, join,
    )  # fmt: skip


def memory_side(root: Path) -> RepoSide:
    clone = MemoryClone.of(MemoryOrigin(START))
    repo = MemoryGit(clone, root)

    def save(rel: str, raw: bytes | None) -> None:
        if raw is None:
            del clone.disk[rel]
        else:
            clone.disk[rel] = raw

    # the twin keeps no state folder of another git: a case tells it what is under way, in git's words
    def merging() -> None:
        repo.under_way = MERGING

    def rebasing() -> None:
        repo.under_way, repo.detached = REBASING, True

    def picking() -> None:
        repo.under_way = PICKING

    def detach() -> None:
        repo.detached = True

    def join(base: str, theirs: bytes, merged: bytes) -> tuple[str, str]:
        origin = clone.origin
        branch = origin.commit(base, {**origin.tree(base), NOTE: theirs}, "person", PERSON)
        tree = {**origin.tree(clone.head), NOTE: merged}
        assert clone.head is not None
        clone.head = origin.merge(clone.head, branch, tree, "Merge", PERSON)
        clone.known |= {branch, clone.head}
        clone.disk[NOTE] = merged
        return branch, clone.head

    return RepoSide(
        repo, save, lambda rel: clone.person_commit([rel]), lambda sha: clone.origin.commits[sha].author,
        merging, rebasing, picking, detach, join,
    )  # fmt: skip


def side(kind: str, root: Path) -> RepoSide:
    return real_side(root / "vault") if kind == "real" else memory_side(root / "vault")


@pytest.fixture(params=SIDES)
def repos(request: pytest.FixtureRequest, tmp_path: Path) -> RepoSide:
    """A repository whose one commit holds ``START``, with its working tree."""
    return side(request.param, tmp_path)


def head(s: RepoSide) -> str:
    sha = s.repo.rev("HEAD")
    assert sha is not None
    return sha


# --- commit_paths ------------------------------------------------------------------------------------


def test_a_commit_holds_exactly_the_paths_named_by_the_author_given(repos: RepoSide) -> None:
    before = head(repos)
    repos.save(NOTE, b"# Inbox\n")
    repos.save("Daily/today.md", b"the person's, not vaultops's\n")
    repos.save("README.md", b"# Vault, changed\n")
    done = repos.repo.commit_paths([NOTE, "Daily/today.md"], "vaultops: two notes", AGENT)
    assert done.sha is not None and done.message == "vaultops: two notes"
    now = head(repos)
    assert now != before and now.startswith(done.sha) and repos.repo.rev(done.sha) == now
    assert repos.author(now) == VAULTOPS
    assert repos.repo.blob(now, NOTE) == b"# Inbox\n"
    assert repos.repo.blob(now, "Daily/today.md") == b"the person's, not vaultops's\n"
    assert repos.repo.blob(now, "README.md") == b"# Vault\n"  # changed on disk, not named: not committed
    again = repos.repo.commit_paths(["README.md"], "vaultops: readme", AGENT)  # it is still there to commit
    assert again.sha is not None and repos.repo.blob(head(repos), "README.md") == b"# Vault, changed\n"


def test_a_commit_of_paths_that_did_not_change_is_no_commit(repos: RepoSide) -> None:
    before = head(repos)
    assert repos.repo.commit_paths(["README.md"], "vaultops: nothing", AGENT).sha is None
    assert repos.repo.commit_paths([], "vaultops: nothing", AGENT).sha is None
    assert head(repos) == before
    repos.save(NOTE, b"# Inbox\n")
    repos.person(NOTE)
    repos.save(NOTE, b"# Inbox\nchanged, not named\n")  # a tracked file changed
    assert repos.repo.commit_paths(["README.md"], "vaultops: nothing", AGENT).sha is None
    assert repos.repo.blob(head(repos), NOTE) == b"# Inbox\n"


def test_a_commit_of_paths_that_did_not_change_beside_a_new_untracked_note_is_no_commit(
    repos: RepoSide,
) -> None:
    """Regression: the real adapter read git's "nothing added to commit but untracked files present" as a
    failure, so a pass beside the person's new, untracked note warned "could not commit" every time."""
    before = head(repos)
    repos.save("Other.md", b"the person's new note, not named\n")
    assert repos.repo.commit_paths(["README.md"], "vaultops: nothing", AGENT).sha is None
    assert head(repos) == before


def test_a_commit_of_a_path_that_does_not_exist_fails(repos: RepoSide) -> None:
    before = head(repos)
    repos.save(NOTE, b"# Inbox\n")
    with pytest.raises(
        GitError, match=r"git add failed: fatal: pathspec 'Nowhere.md' did not match any files"
    ):
        repos.repo.commit_paths([NOTE, "Nowhere.md"], "vaultops: a note and none", AGENT)
    assert head(repos) == before


def test_a_commit_of_a_deleted_path_removes_it(repos: RepoSide) -> None:
    repos.save(NOTE, b"# Inbox\n")
    first = repos.repo.commit_paths([NOTE], "vaultops: add", AGENT).sha
    repos.save(NOTE, None)
    gone = repos.repo.commit_paths([NOTE], "vaultops: remove", AGENT).sha
    assert first is not None and gone is not None and first != gone
    assert repos.repo.blob(head(repos), NOTE) is None
    assert repos.repo.blob(repos.repo.rev(first), NOTE) == b"# Inbox\n"


def test_the_persons_commit_is_theirs_and_vaultopss_is_its_agents(repos: RepoSide) -> None:
    repos.save(NOTE, b"# Inbox\n")
    theirs = repos.person(NOTE)
    assert repos.author(theirs) == PERSON == "{GIT_AUTHOR_NAME} <{GIT_AUTHOR_EMAIL}>".format(**GIT_ENV)
    repos.save(NOTE, b"# Inbox\n- decision: approve\n")
    ours = repos.repo.commit_paths([NOTE], "vaultops: answer", "laptop")
    assert ours.sha is not None
    assert repos.author(head(repos)) == "vaultops (laptop) <laptop@vaultops.invalid>"


# --- rev and blob ------------------------------------------------------------------------------------


def test_rev_and_blob_give_a_commit_and_its_files_as_they_were_then(repos: RepoSide) -> None:
    start = head(repos)
    assert repos.repo.is_repo()
    assert repos.repo.rev(start) == start
    assert repos.repo.rev("0" * 40) is None and repos.repo.rev("1" * 40) is None
    repos.save(NOTE, b"one\n")
    one = repos.person(NOTE)
    repos.save(NOTE, b"one\ntwo\n")
    assert head(repos) == one and repos.repo.blob(one, NOTE) == b"one\n"  # saved is not committed
    two = repos.repo.commit_paths([NOTE], "vaultops: two", AGENT).sha
    assert two is not None and head(repos) not in (start, one)
    assert repos.repo.blob(start, NOTE) is None
    assert repos.repo.blob(start, "README.md") == b"# Vault\n"
    assert repos.repo.blob(one, NOTE) == b"one\n"
    assert repos.repo.blob(head(repos), NOTE) == b"one\ntwo\n"
    assert repos.repo.blob(head(repos), "Nowhere.md") is None
    assert repos.repo.blob(None, NOTE) is None
    assert repos.repo.blob("1" * 40, NOTE) is None


# --- another git at work -----------------------------------------------------------------------------


def test_nothing_under_way_is_not_busy(repos: RepoSide) -> None:
    assert repos.repo.in_progress() == "" and repos.repo.busy() == ""
    assert repos.repo.git_dir.name == ".git"


def test_a_merge_under_way_is_busy_and_refuses_a_commit_of_some_paths(repos: RepoSide) -> None:
    repos.merging()
    assert repos.repo.in_progress() == MERGING and repos.repo.busy() == MERGING
    repos.save(NOTE, b"# Inbox\n")
    with pytest.raises(
        GitError, match=r"^git commit failed: fatal: cannot do a partial commit during a merge\.$"
    ):
        repos.repo.commit_paths([NOTE], "vaultops: into their merge", AGENT)


def test_a_cherry_pick_under_way_refuses_a_commit_of_some_paths(repos: RepoSide) -> None:
    repos.picking()
    assert repos.repo.in_progress() == PICKING and repos.repo.busy() == PICKING
    repos.save(NOTE, b"# Inbox\n")
    with pytest.raises(
        GitError, match=r"^git commit failed: fatal: cannot do a partial commit during a cherry-pick\.$"
    ):
        repos.repo.commit_paths([NOTE], "vaultops: into their cherry-pick", AGENT)


def test_a_rebase_under_way_is_busy(repos: RepoSide) -> None:
    repos.rebasing()
    assert repos.repo.in_progress() == REBASING and repos.repo.busy() == REBASING


def test_a_detached_head_is_busy_but_nothing_is_in_progress(repos: RepoSide) -> None:
    repos.detach()
    assert repos.repo.in_progress() == "" and repos.repo.busy() == DETACHED


# --- blame -------------------------------------------------------------------------------------------


def blamed(s: RepoSide, contents: bytes) -> list[tuple[str, str, int, str] | None]:
    """Each line of ``contents`` as blame gives it: (the commit's name in the case, its author, the line in
    that commit, the path), or None for a line no commit has."""
    n = contents.count(b"\n") + (not contents.endswith(b"\n") and bool(contents))  # only \n ends a line
    found = s.repo.blame(NOTE, contents, range(n))
    out: list[tuple[str, str, int, str] | None] = []
    for i in range(n):
        came = found.get(i)
        out.append(None if came is None else (s.labels[came.commit], came.who, came.line, came.path))
    return out


def commit(s: RepoSide, label: str, who: str, text: str) -> None:
    """``who`` ("person" or "vaultops") commits the note as ``text``."""
    s.save(NOTE, text.encode())
    if who == "person":
        sha = s.person(NOTE)
    else:
        s.repo.commit_paths([NOTE], f"vaultops: {label}", AGENT)
        sha = head(s)
    s.labels[sha] = label


V1 = """# Inbox

## REQ-a Is git here?
- ready: yes
Is git installed?

## REQ-b Deploy?
- ready: yes
Deploy it.
"""
V2 = """# Inbox

## REQ-a Is git here?
- ready: yes
Is git installed?
- status: done
- decision: approve

## REQ-b Deploy?
- ready: yes
Deploy it.
- decision: approve
"""
V3 = """# Inbox

## REQ-a Is git here?
Is git installed?
- ready: yes
- status: done
- decision: approve

## REQ-b Deploy?
- ready: yes
Deploy it today.
- decision: approve


## REQ-c Tidy up
- decision: approve
"""
V4 = """# Inbox

## REQ-a Is git here?
Is git installed?
- ready: yes
- decision: approve

## REQ-b Deploy?
- ready: yes
Deploy it today.
- decision: approve
- status: done


## REQ-c Tidy up
- decision: approve
"""
DISK = """# Inbox

## REQ-a Is git here?
Is git installed?
- ready: yes
- decision: approve
- decision: approve

## REQ-b Deploy?
- ready: yes
Deploy it today.
- decision: approve
- status: done


## REQ-c Tidy up
- decision: approve
typed, not committed
"""


PERSON_, OURS = PERSON, VAULTOPS
# ``DISK``'s lines as ``git blame`` gives them: (commit, author, line in that commit); None: in no commit.
BLAMED = [
    ("v1", PERSON_, 0),
    ("v1", PERSON_, 1),
    ("v1", PERSON_, 2),
    ("v1", PERSON_, 4),  # "- ready: yes" moved below it in v3: this line stayed, the other one moved
    ("v3", PERSON_, 4),  # the moved line is v3's
    ("v2", OURS, 6),
    None,  # the person's second "- decision: approve", saved and not committed
    ("v1", PERSON_, 5),
    ("v1", PERSON_, 6),
    ("v1", PERSON_, 7),
    ("v3", PERSON_, 10),  # changed in v3
    # vaultops's decision under REQ-b is given to the person's v3, and the person's under REQ-c (below) to
    # vaultops's v2: git's diff kept the last of the repeated lines where it was (provenance's
    # ``held_by`` checks the request a blamed line stood under)
    ("v3", PERSON_, 11),
    ("v4", OURS, 11),
    ("v3", PERSON_, 12),
    ("v3", PERSON_, 13),
    ("v3", PERSON_, 14),
    ("v2", OURS, 11),
    None,
]


def test_blame_gives_each_line_to_the_commit_and_author_that_brought_it_in(repos: RepoSide) -> None:
    for label, who, text in (("v1", "person", V1), ("v2", "vaultops", V2), ("v3", "person", V3)):
        commit(repos, label, who, text)
    commit(repos, "v4", "vaultops", V4)
    got = blamed(repos, DISK.encode())
    assert [None if b is None else b[:3] for b in got] == BLAMED
    assert all(b is None or b[3] == NOTE for b in got)
    some = repos.repo.blame(NOTE, DISK.encode(), [3, 6, 11, 3])  # only the lines asked for, once
    assert sorted(some) == [3, 11] and some[3] == repos.repo.blame(NOTE, DISK.encode(), [3])[3]
    for outside in ([3, len(BLAMED)], [-1, 3]):  # git refuses a -L past the end: nothing is blamed
        assert repos.repo.blame(NOTE, DISK.encode(), outside) == {}
    assert repos.repo.blame(NOTE, DISK.encode(), []) == {}


BASE = "# Inbox\n\n## REQ-a\n- ready: yes\n\n## REQ-b\n- ready: yes\n"
THEIRS = "# Inbox\n\n## REQ-a\n- ready: yes\n- decision: approve\n\n## REQ-b\n- ready: yes\n"
OURS_ = "# Inbox\n\n## REQ-a\n- ready: yes\n\n## REQ-b\n- ready: yes\n- decision: approve\n"
BOTH = (
    "# Inbox\n\n## REQ-a\n- ready: yes\n- decision: approve\n\n## REQ-b\n- ready: yes\n- decision: approve\n"
)


def test_blame_follows_each_line_through_a_merge_to_the_side_that_brought_it_in(repos: RepoSide) -> None:
    commit(repos, "base", "person", BASE)
    base = head(repos)
    commit(repos, "ours", "vaultops", OURS_)  # vaultops answers REQ-b here, the person REQ-a on a branch
    theirs, merge = repos.join(base, THEIRS.encode(), BOTH.encode())
    repos.labels |= {theirs: "theirs", merge: "merge"}
    kept = [("base", PERSON_, n) for n in range(4)]
    kept += [("theirs", PERSON_, 4), ("base", PERSON_, 4), ("base", PERSON_, 5), ("base", PERSON_, 6)]
    kept += [("ours", OURS, 7)]
    assert [None if b is None else b[:3] for b in blamed(repos, BOTH.encode())] == kept
    # a merge that leaves the note as the branch has it: the branch takes every line (git passes it whole)
    repos.save("README.md", b"# Vault, ours\n")
    repos.repo.commit_paths(["README.md"], "vaultops: readme", AGENT)
    more = (BOTH + "- decision: approve\n").encode()
    theirs, merge = repos.join(head(repos), more, more)
    repos.labels |= {theirs: "theirs2", merge: "merge2"}
    assert [None if b is None else b[:3] for b in blamed(repos, more)] == [*kept, ("theirs2", PERSON_, 9)]


def test_blame_of_a_note_head_lacks_is_empty(repos: RepoSide) -> None:
    repos.save(NOTE, b"# Inbox\n")
    assert repos.repo.blame(NOTE, b"# Inbox\n", [0]) == {}
    repos.person(NOTE)
    assert repos.repo.blame("Nowhere.md", b"# Inbox\n", [0]) == {}


def test_blame_of_a_last_line_without_its_newline_tells_it_from_the_committed_one(repos: RepoSide) -> None:
    commit(repos, "v1", "person", "# Inbox\n- decision: approve\n")
    got = blamed(repos, b"# Inbox\n- decision: approve")  # the newline deleted, not committed
    assert got == [("v1", PERSON_, 0, NOTE), None]
    commit(repos, "v2", "vaultops", "# Inbox\r\n- decision: approve\r- ready: yes\n")
    got = blamed(repos, b"# Inbox\r\n- decision: approve\r- ready: yes\n")  # only \n ends a line
    assert got == [("v2", OURS, 0, NOTE), ("v2", OURS, 1, NOTE)]


# --- blame, the twin against git, on random histories ------------------------------------------------

WORDS = ["", "- decision: approve", "## REQ-a", "## REQ-b", "- ready: yes", "Do it.", "  - nested", "x"]
EDIT = st.tuples(st.sampled_from(["insert", "delete", "change"]), st.integers(0, 40), st.sampled_from(WORDS))
STEP = st.tuples(
    st.sampled_from(["person", "vaultops"]), st.lists(EDIT, min_size=1, max_size=4), st.booleans()
)


def edited(lines: list[str], edits: Sequence[tuple[str, int, str]]) -> list[str]:
    out = list(lines)
    for kind, at, word in edits:
        if kind == "insert":
            out.insert(at % (len(out) + 1), word)
        elif out and kind == "delete":
            del out[at % len(out)]
        elif out:
            out[at % len(out)] = word
    return out


def text_of(lines: list[str], open_end: bool) -> str:
    """The note's text; ``open_end``: its last line has no newline."""
    text = "".join(f"{line}\n" for line in lines)
    return text[:-1] if open_end and text else text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.lists(st.sampled_from(WORDS), min_size=1, max_size=8),
    steps=st.lists(STEP, min_size=1, max_size=6),
    typed=st.lists(EDIT, max_size=3),
)
def test_blame_on_the_twin_is_blame_on_git_for_every_line(
    start: list[str],
    steps: list[tuple[str, list[tuple[str, int, str]], bool]],
    typed: list[tuple[str, int, str]],
) -> None:
    got = {}
    with tempfile.TemporaryDirectory() as folder:
        for kind in SIDES:
            s = side(kind, Path(folder) / kind)
            lines, committed = start, text_of(start, False)
            commit(s, "step0", "person", committed)
            for n, (who, edits, open_end) in enumerate(steps, 1):
                lines = edited(lines, edits)
                text = text_of(lines, open_end)
                if text != committed:
                    commit(s, f"step{n}", who, text)
                    committed = text
            got[kind] = blamed(s, text_of(edited(lines, typed), False).encode())
    assert got["memory"] == got["real"]


def test_a_renamed_note_is_a_rename_and_blame_follows_its_lines_to_their_first_name(repos: RepoSide) -> None:
    """A moved inbox (``engine.moved``): git log -M names the rename, and blame follows each line through
    it, as vaultops's records of its lines do (``engine.provenance``)."""
    moved = "Inbox/Requests.md"
    commit(repos, "v1", "person", V1)
    repos.save(NOTE, None)
    repos.save(moved, V1.encode())
    repos.repo.commit_paths([NOTE, moved], "vault backup", AGENT)  # the rename, as one commit
    repos.labels[head(repos)] = "moved"
    assert repos.repo.renames(50) == [(NOTE, moved)]
    n = V1.count("\n")
    found = repos.repo.blame(moved, V1.encode(), range(n))
    assert {(repos.labels[b.commit], b.path) for b in found.values()} == {("v1", NOTE)}
    assert sorted(found) == list(range(n))
