"""What a push and git say, read as values: a push that lost a race told from a refusal, the line of git's
stderr that names the cause, and a remote hook's own words without colours."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from vaultops.sync.git import Git
from vaultops.sync.remote import Remote, git_says, remote_says


def test_git_says_the_line_that_names_the_cause() -> None:
    ssh = (
        "ssh: connect to host git.example.invalid port 22: Connection refused\r\n"
        "fatal: Could not read from remote repository.\n\n"
        "Please make sure you have the correct access rights\nand the repository exists.\n"
    )
    assert git_says(ssh) == "ssh: connect to host git.example.invalid port 22: Connection refused"
    https = (
        "fatal: unable to access 'https://example.invalid/v.git/': Could not resolve host: example.invalid\n"
    )
    assert (
        git_says(https)
        == "unable to access 'https://example.invalid/v.git/': Could not resolve host: example.invalid"
    )
    # git's boilerplate alone (an ssh that failed without a word): plain words, never a fragment of it
    boilerplate = (
        "fatal: Could not read from remote repository.\n\n"
        "Please make sure you have the correct access rights\nand the repository exists.\n"
    )
    assert git_says(boilerplate) == "git says only that it could not read from it"


def test_remote_says_the_hooks_own_words_without_colours() -> None:
    stderr = (
        "remote: \x1b[31mDENIED\x1b[0m by policy\n"
        "remote: \n"
        "remote: see https://example.invalid/rules\n"
        "To /srv/remote.git\n ! [remote rejected] main -> main (pre-receive hook declined)\n"
        "error: failed to push some refs to '/srv/remote.git'\n"
    )
    assert remote_says(stderr) == "DENIED by policy see https://example.invalid/rules"
    assert remote_says("error: failed to push some refs\n") == ""


@pytest.mark.parametrize(
    ("status", "stderr", "kind"),
    [
        ("[rejected] (fetch first)", "", "behind"),
        ("[rejected] (non-fast-forward)", "", "behind"),
        (  # two pushes received at once: the remote's ref moved under this one
            "[remote rejected] (failed to update ref)",
            "remote: error: cannot lock ref 'refs/heads/main': is at 1a2b3c but expected 4d5e6f\n",
            "behind",
        ),
        (  # another machine's push held the ref's lock at that moment, as git says it: a race too
            "[remote rejected] (failed to update ref)",
            "remote: error: cannot lock ref 'refs/heads/main': Unable to create "
            "'/srv/remote.git/./refs/heads/main.lock': File exists.        \n",
            "behind",
        ),
        (  # the same words for a remote that cannot write its refs: a refusal, said as such
            "[remote rejected] (failed to update ref)",
            "remote: error: cannot lock ref 'refs/heads/main': Unable to create 'main.lock': denied\n",
            "failed",
        ),
        ("[remote rejected] (pre-receive hook declined)", "remote: frozen\n", "failed"),
    ],
)
def test_a_push_that_lost_a_race_is_told_from_a_refusal(
    tmp_path: Path, status: str, stderr: str, kind: str
) -> None:
    remote = Remote(Git(tmp_path), "origin", "main")
    out = f"To /srv/remote.git\n!\trefs/heads/x:refs/heads/main\t{status}\nDone\n"
    proc = subprocess.CompletedProcess(["git", "push"], 1, out, stderr + "error: failed to push some refs\n")
    pushed = remote._not_pushed(proc, "1a2b3c")
    assert pushed.kind == kind
    if kind == "failed":
        assert pushed.problem == "refused" and pushed.detail.startswith("origin refused the push (")
