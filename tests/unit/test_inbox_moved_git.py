"""Where a renamed inbox went, as real git tells it (``Git.renames``, ``engine.moved``), and the reading of
``git log --name-status -z`` (Hypothesis)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.support.helpers import INBOX
from vaultops.commands.status import request_rows
from vaultops.engine.moved import followed, gone_here
from vaultops.sync.git import Git, renames_in
from vaultops.vault import Vault

REPO_ROOT = Path(__file__).resolve().parents[2]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=P", "-c", "user.email=p@example.invalid", *args], cwd=root,
                   check=True, capture_output=True)  # fmt: skip


def vault_with_inbox(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".vaultops").mkdir(parents=True)
    (root / ".vaultops" / "config.toml").write_text(f'[inbox]\npath = "{INBOX}"\n')
    (root / INBOX).parent.mkdir(parents=True)
    (root / INBOX).write_text("# Inbox\n\n## REQ-a Do it\n- status: done @ 2026-03-02T09:00:00+00:00\n" * 3)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    return root


def test_git_renames_follow_an_edited_move_then_another(tmp_path: Path) -> None:
    root = vault_with_inbox(tmp_path)
    (root / "Inbox").mkdir()
    git(root, "mv", INBOX, "Inbox/Requests.md")
    with open(root / "Inbox/Requests.md", "a") as note:
        note.write("\n## REQ-b Another\n")  # moved and edited in one commit, as obsidian-git pushes it
    git(root, "commit", "-qam", "vault backup")
    git(root, "mv", "Inbox/Requests.md", "Inbox/Asks.md")
    git(root, "commit", "-qm", "vault backup")
    renames = Git(root).renames(50)
    assert renames == [(INBOX, "Inbox/Requests.md"), ("Inbox/Requests.md", "Inbox/Asks.md")]
    gone = gone_here(Vault(root))
    assert gone is not None and gone.found == "Inbox/Asks.md"
    assert '`[inbox] path = "Inbox/Asks.md"` in .vaultops/config.toml' in gone.sentence()
    _, warnings = request_rows(Vault(root))
    assert gone.sentence() in warnings and not any("vaultops init" in w for w in warnings)


def test_a_vault_without_commits_has_no_renames(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    assert Git(root).renames(50) == []


PATHS = st.text(st.characters(blacklist_characters="\0\n", blacklist_categories=["Cs"]), min_size=1)
ENTRY = st.one_of(
    st.tuples(st.sampled_from(["A", "M", "D", "T"]), PATHS),
    st.tuples(st.sampled_from(["R100", "R087", "C075"]), PATHS, PATHS),
)


@given(st.lists(st.lists(ENTRY, max_size=4), max_size=5))
def test_renames_in_reads_every_rename_oldest_first(commits: list[list[tuple[str, ...]]]) -> None:
    log = "".join("\n" + "".join(f"{e[0]}\0" + "".join(f"{p}\0" for p in e[1:]) for e in c) for c in commits)
    expected = [(e[1], e[2]) for c in commits for e in c if e[0].startswith("R")][::-1]
    assert renames_in(log) == expected


def test_followed_takes_each_rename_after_another() -> None:
    assert followed("a", [("a", "b"), ("x", "y"), ("b", "c")]) == "c"
    assert followed("a", [("b", "c"), ("a", "b")]) == "b"  # a rename before the inbox's own: not its
