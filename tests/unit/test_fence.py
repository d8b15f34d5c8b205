"""The fence one job's commands run in, as found on disk (vaultops.hook.fence), and the hosts its web tools
may reach (vaultops.policy.web).  The real CLI and bubblewrap holding it: tests/e2e/test_sandbox.py."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers import code_repo, git
from vaultops.hook.claude import GateSetupError, job_fence
from vaultops.hook.fence import fence_for, sandbox_problem
from vaultops.hook.job import GateJob
from vaultops.hook.sandbox import claude_settings
from vaultops.policy.decide import decide_call
from vaultops.policy.paths import Scope
from vaultops.policy.tools import ToolCall
from vaultops.policy.web import host_listed, unlisted_web


def layout(tmp: Path) -> dict[str, Path]:
    """A home with credentials, a vault, and a repository with a job's worktree on its own branch."""
    home = tmp / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("key\n")
    (home / ".aws").mkdir()
    (home / ".netrc").write_text("machine x\n")
    vault = tmp / "vault"
    (vault / ".vaultops").mkdir(parents=True)
    (vault / "_System").mkdir()
    repo = code_repo(home / "code" / "app", {"a.txt": "a\n"})
    (repo / ".env").write_text("STRIPE=x\n")
    git(repo, "branch", "feature")
    git(repo, "branch", "vaultops/REQ-other")
    tree = home / "code" / ".vaultops-worktrees" / "app" / "REQ-fix"
    git(repo, "worktree", "add", "-q", "-b", "vaultops/REQ-fix", str(tree))
    other = home / "code" / ".vaultops-worktrees" / "app" / "REQ-other"
    git(repo, "worktree", "add", "-q", str(other), "vaultops/REQ-other")
    return {"home": home, "vault": vault, "repo": repo, "tree": tree}


def test_a_worktree_job_writes_its_branch_and_nothing_else_of_the_repository(tmp_path: Path) -> None:
    at = layout(tmp_path)
    fence = fence_for(at["tree"], at["vault"], branch="vaultops/REQ-fix", home=at["home"])
    gitdir = at["repo"] / ".git"
    assert fence.workdir == str(at["tree"].resolve())
    assert fence.writable == (str(gitdir.resolve()),), "a commit writes objects and its own ref"
    closed = set(fence.read_only)
    for name in ("config", "hooks", "HEAD", "index", "info"):
        assert str(gitdir / name) in closed, name
    heads = gitdir / "refs" / "heads"
    assert {str(heads / "main"), str(heads / "feature"), str(heads / "vaultops" / "REQ-other")} <= closed
    assert str(heads / "vaultops" / "REQ-fix") not in closed and str(heads / "vaultops") not in closed
    assert (
        str(gitdir / "worktrees" / "REQ-other") in closed
        and str(gitdir / "worktrees" / "REQ-fix") not in closed
    )
    assert str(at["vault"]) not in closed, "the vault is not inside the job's reach to begin with"


def test_credentials_and_env_files_outside_the_job_are_not_read(tmp_path: Path) -> None:
    at = layout(tmp_path)
    (at["tree"] / ".env").write_text("LOCAL=1\n")  # the job's own: it may read it
    fence = fence_for(at["tree"], at["vault"], branch="vaultops/REQ-fix", home=at["home"])
    hidden = set(fence.unreadable)
    assert {str(at["home"] / ".ssh"), str(at["home"] / ".aws"), str(at["home"] / ".netrc")} <= hidden
    assert str(at["vault"] / ".vaultops") in hidden
    assert str(at["repo"] / ".env") not in hidden, "the main checkout is no parent of the worktree"
    assert str(at["tree"] / ".env") not in hidden
    (at["home"] / "code" / ".env.production").write_text("K=v\n")
    again = fence_for(at["tree"], at["vault"], branch="vaultops/REQ-fix", home=at["home"])
    assert str(at["home"] / "code" / ".env.production") in again.unreadable


def test_a_job_inside_the_vault_writes_its_folder_and_none_of_the_rest(tmp_path: Path) -> None:
    at = layout(tmp_path)
    work = at["vault"] / "projects" / "site"
    work.mkdir(parents=True)
    (at["vault"] / "projects" / "other").mkdir()
    (at["vault"] / "COO-Inbox.md").write_text("# Inbox\n")
    fence = fence_for(work, at["vault"], home=at["home"])
    closed = set(fence.read_only)
    vault = at["vault"].resolve()
    assert {str(vault / ".vaultops"), str(vault / "_System"), str(vault / "COO-Inbox.md")} <= closed
    assert str(vault / "projects" / "other") in closed
    assert str(vault / "projects") not in closed and str(work.resolve()) not in closed


def test_a_job_in_the_vault_itself_writes_none_of_its_notes(tmp_path: Path) -> None:
    at = layout(tmp_path)
    fence = fence_for(at["vault"], at["vault"], home=at["home"])
    assert {str(at["vault"].resolve() / ".vaultops"), str(at["vault"].resolve() / "_System")} <= set(
        fence.read_only
    )


def test_a_job_above_the_vault_and_the_home_folder_does_not_write_them(tmp_path: Path) -> None:
    at = layout(tmp_path)
    fence = fence_for(tmp_path, at["vault"], home=at["home"])
    assert str(at["vault"].resolve()) in fence.read_only
    assert str(at["home"].resolve() / ".ssh") in fence.read_only + fence.unreadable


names = st.text(st.sampled_from("abc.-_"), min_size=1, max_size=6).filter(lambda n: n not in (".", ".."))


@settings(max_examples=80)  # each example makes real folders: 80 cover the shapes in a few seconds
@given(st.lists(st.lists(names, min_size=1, max_size=3), max_size=8), st.lists(names, min_size=0, max_size=3))
def test_nothing_closed_holds_the_jobs_folder_and_everything_closed_exists(
    entries: list[list[str]], down: list[str]
) -> None:
    """Whatever the vault holds and wherever in it the job runs: no closed path is the job's folder or
    above it (closing it would close the job), and every one exists (the CLI makes a missing one
    unreadable)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        for parts in entries:
            (root.joinpath(*parts)).mkdir(parents=True, exist_ok=True)
        work = root.joinpath(*down)
        work.mkdir(parents=True, exist_ok=True)
        fence = fence_for(work, root, home=Path(tmp) / "home")
        for path in (*fence.read_only, *fence.unreadable):
            assert Path(path).exists(), path
            resolved = work.resolve()
            assert Path(path) != resolved and Path(path) not in resolved.parents, path


def test_the_settings_turn_the_sandbox_on_and_leave_no_way_out() -> None:
    settings = claude_settings(fence_for(Path("/"), Path("/nonexistent-vault"), home=Path("/nonexistent")))
    assert settings["enabled"] and settings["failIfUnavailable"]
    assert settings["allowUnsandboxedCommands"] is False and settings["excludedCommands"] == []
    assert settings["network"]["allowedDomains"] == []


def test_a_job_under_dev_is_refused_saying_why(tmp_path: Path) -> None:
    with pytest.raises(GateSetupError, match="cannot hold a folder under /dev"):
        job_fence(GateJob(None, "/dev/shm/work"))


def test_a_machine_without_the_sandbox_starts_no_job(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VAULTOPS_FAULT", "sandbox.missing")
    with pytest.raises(GateSetupError, match=r"bubblewrap \(bwrap\) and socat not installed; install them"):
        job_fence(GateJob(None, str(tmp_path)))


def test_the_probe_says_when_bubblewrap_cannot_run() -> None:
    """Not a stand-in: this machine's own bubblewrap, as doctor asks it."""
    from vaultops.hook.fence import sandbox_problem

    if shutil.which("bwrap") is None or shutil.which("socat") is None:
        assert "not installed; install them" in sandbox_problem()
        return
    tried = subprocess.run(["bwrap", "--ro-bind", "/", "/", "true"], capture_output=True)
    assert (sandbox_problem() == "") == (tried.returncode == 0)


@pytest.mark.skipif(not os.environ.get("CI"), reason="CI only: there the sandbox must really be on")
def test_ci_has_a_working_sandbox() -> None:
    """scripts/bootstrap installed bubblewrap and socat, and they work: no sandbox test there skips."""
    from vaultops.hook.fence import sandbox_problem

    assert sandbox_problem() == ""


# --- the web tools' hosts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "listed"),
    [
        ("pypi.org", True),
        ("PyPI.org.", True),
        ("files.pythonhosted.org", True),
        ("pythonhosted.org", True),
        ("evilpypi.org", False),
        ("pypi.org.evil.com", False),
        ("evil-pythonhosted.org", False),
        ("127.0.0.1", False),
    ],
)
def test_a_host_is_listed_exactly(host: str, listed: bool) -> None:
    assert host_listed(host, ("pypi.org", "*.pythonhosted.org")) is listed


@pytest.mark.parametrize(
    "url",
    [
        "https://pypi.org@evil.com/x",
        "https://evil.com\\@pypi.org/",
        "https://evil.com/?u=https://pypi.org",
        "https://pypi.org.evil.com/",
        "ftp://pypi.org/x",
        "https://pypi .org/",
        "//pypi.org/x",
        "https://evil.com#pypi.org",
    ],
)
def test_a_url_that_only_looks_listed_is_not(url: str) -> None:
    assert unlisted_web("WebFetch", {"url": url}, ("pypi.org",)) is not None


def test_web_tools_follow_the_list_and_star_opens_them() -> None:
    assert unlisted_web("WebFetch", {"url": "https://pypi.org/simple/x"}, ("pypi.org",)) is None
    assert "do not list (none)" in (unlisted_web("WebFetch", {"url": "https://pypi.org/"}, ()) or "")
    assert unlisted_web("WebSearch", {"query": "x"}, ("pypi.org",)) is not None, "a search reaches anything"
    narrowed = {"query": "x", "allowed_domains": ["pypi.org"]}
    assert unlisted_web("WebSearch", narrowed, ("pypi.org",)) is None
    assert unlisted_web("WebSearch", {"query": "x", "allowed_domains": ["pypi.org", 3]}, ("pypi.org",))
    assert unlisted_web("WebFetch", {"url": "https://anything.example/"}, ("*",)) is None


def test_the_gate_asks_for_an_unlisted_host_and_still_denies_a_secret_to_a_listed_one() -> None:
    scope = Scope(workdir="/w")
    fetch = ToolCall("WebFetch", {"url": "https://example.com/docs", "prompt": "read"}, "/w")
    assert decide_call(fetch, scope, domains=("pypi.org",)).kind == "escalate"
    assert decide_call(fetch, scope, domains=("example.com",)).kind == "approve"
    assert decide_call(fetch, scope).kind == "approve", "no list known: judged as before"
    key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    leak = ToolCall("WebFetch", {"url": f"https://example.com/c?k={key}", "prompt": "read"}, "/w")
    assert decide_call(leak, scope, domains=("*",)).kind == "deny"


def test_a_vault_that_is_not_there_is_not_closed(tmp_path: Path) -> None:
    """Found by the benchmark: a missing path given to bubblewrap stops the command (exit 1), and Claude
    Code makes a missing denied path unreadable."""
    fence = fence_for(tmp_path, tmp_path / "no-vault", home=tmp_path / "no-home")
    assert all(Path(p).exists() for p in (*fence.read_only, *fence.unreadable)), fence


def test_a_check_runs_in_the_fence_with_its_temp_folder_inside_the_job(tmp_path: Path) -> None:
    """bubblewrap mounts in order: the job's folder first, or a temp folder inside it is hidden."""
    from vaultops.hook.fence import fenced_argv

    if sandbox_problem():
        pytest.skip(sandbox_problem())
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    fence = fence_for(tmp_path, tmp_path / "no-vault", home=tmp_path / "no-home")
    argv = fenced_argv(fence, ["sh", "-c", 'echo in-tmp > "$TMPDIR/t" && echo here > here'], tmp)
    assert subprocess.run(argv, capture_output=True).returncode == 0
    assert (tmp / "t").read_text() == "in-tmp\n" and (tmp_path / "here").exists()


def test_a_linked_credentials_folder_is_hidden_where_it_leads(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    dotfiles = tmp_path / "dotfiles" / "ssh"
    dotfiles.mkdir(parents=True)
    (home / ".ssh").symlink_to(dotfiles)
    (tmp_path / "work").mkdir()
    fence = fence_for(tmp_path / "work", tmp_path / "vault", home=home)
    assert str(dotfiles.resolve()) in fence.unreadable


def test_a_dangling_link_is_not_closed(tmp_path: Path) -> None:
    """bubblewrap refuses to mount over a path that does not exist, and the command would not start."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".aws").symlink_to(tmp_path / "gone")
    (tmp_path / "work").mkdir()
    fence = fence_for(tmp_path / "work", tmp_path / "vault", home=home)
    assert all(Path(p).exists() for p in (*fence.read_only, *fence.unreadable))
