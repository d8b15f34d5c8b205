"""The approval policy as pure logic: the labelled corpus of tool calls, properties that joining
or wrapping a dangerous command never makes it safer, the tag parser, worker requests, and the [policy]
config section."""

from __future__ import annotations

import json
import shlex
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tests.support.paths import CORPUS as CORPUS_DIR
from tests.support.policy_sandbox import Sandbox, corpus_entries
from vaultops.base.errors import ConfigError
from vaultops.config import load_config
from vaultops.policy.bash import split_command
from vaultops.policy.decide import WorkerContext, decide_call, decide_messages, decide_request
from vaultops.policy.paths import Scope
from vaultops.policy.table import DEFAULTS, RANK, PolicyTable, check_overrides
from vaultops.policy.tags import Problem, Tag, parse_line, parse_lines
from vaultops.policy.tools import ToolCall

CORPUS = CORPUS_DIR / "tool_calls.jsonl"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    yield Sandbox(tmp_path_factory.mktemp("policy"))


def corpus() -> list[dict[str, Any]]:
    return corpus_entries(CORPUS)


def judged(sandbox: Sandbox) -> list[tuple[dict[str, Any], str, str]]:
    return sandbox.judged(corpus())


# --- the corpus -------------------------------------------------------------------------------------------


def test_the_corpus_is_large_and_labels_all_three_verdicts() -> None:
    entries = corpus()
    assert len(entries) >= 120
    assert len({e["id"] for e in entries}) == len(entries)
    labels = Counter(e["expect"] for e in entries)
    assert set(labels) == {"approve", "escalate", "deny"} and min(labels.values()) >= 30
    tools = Counter(e["tool_name"] for e in entries)
    assert tools["Bash"] >= 100 and tools["Write"] + tools["Edit"] >= 10
    assert any(name.startswith("mcp__") for name in tools)


def test_no_call_labelled_deny_or_escalate_is_allowed(sandbox: Sandbox) -> None:
    let_through = [
        f"{e['id']} ({e['expect']}) {json.dumps(e['tool_input'])[:120]} -> {reason}"
        for e, kind, reason in judged(sandbox)
        if e["expect"] != "approve" and kind == "approve"
    ]
    assert not let_through, "\n".join(let_through)


def test_no_call_labelled_deny_is_only_escalated(sandbox: Sandbox) -> None:
    softened = [
        f"{e['id']} {json.dumps(e['tool_input'])[:120]} -> {kind}: {reason}"
        for e, kind, reason in judged(sandbox)
        if e["expect"] == "deny" and kind != "deny"
    ]
    assert not softened, "\n".join(softened)


def test_every_call_gets_its_label_and_the_counts(sandbox: Sandbox) -> None:
    results = judged(sandbox)
    wrong = [
        f"{e['id']} expected {e['expect']}, got {kind}: {json.dumps(e['tool_input'])[:100]} — {reason}"
        for e, kind, reason in results
        if kind != e["expect"]
    ]
    counts = Counter(kind for _, kind, _ in results)
    dangerous_allowed = sum(1 for e, kind, _ in results if e["expect"] != "approve" and kind == "approve")
    print(
        f"\npolicy corpus: {len(results)} calls: denied {counts['deny']} / escalated {counts['escalate']}"
        f" / allowed {counts['approve']}; dangerous calls allowed: {dangerous_allowed}"
    )
    assert dangerous_allowed == 0
    assert not wrong, "\n".join(wrong)
    assert counts == Counter(e["expect"] for e in corpus())


def test_overrides_change_the_verdicts_but_never_below_the_floors(sandbox: Sandbox) -> None:
    call = ToolCall("Bash", {"command": "rm -rf build"}, str(sandbox.wd))
    assert decide_call(call, sandbox.scope).kind == "escalate"
    assert decide_call(call, sandbox.scope, PolicyTable({"delete_tree": "approve"})).kind == "approve"
    merge = ToolCall("Bash", {"command": "gh pr merge 12"}, str(sandbox.wd))
    assert decide_call(merge, sandbox.scope, PolicyTable({"merge_pr": "deny"})).kind == "deny"
    mcp = ToolCall("mcp__github__get_issue", {"n": 1}, str(sandbox.wd))
    assert decide_call(mcp, sandbox.scope).kind == "escalate"
    assert (
        decide_call(mcp, sandbox.scope, PolicyTable({"mcp__github__get_issue": "approve"})).kind == "approve"
    )
    assert decide_call(mcp, sandbox.scope, PolicyTable({"mcp__github__*": "approve"})).kind == "approve"
    _, problems = check_overrides({"merge_pr": "approve", "unparsable": "approve", "merg_pr": "deny"})
    assert problems == [
        "[policy] merge_pr cannot be approve: it is at least escalate, always",
        "[policy] unparsable cannot be approve: it is at least escalate, always",
        "[policy] merg_pr is not a known action (did you mean merge_pr?)",
    ]


def test_scope_files_limit_edits_to_the_jobs_files(sandbox: Sandbox) -> None:
    narrow = Scope(**{**sandbox.scope.__dict__, "files": ("src/*.py",)})
    inside = ToolCall("Edit", {"file_path": str(sandbox.wd / "src" / "a.py")}, str(sandbox.wd))
    other = ToolCall("Edit", {"file_path": str(sandbox.wd / "README.md")}, str(sandbox.wd))
    assert decide_call(inside, narrow).kind == "approve"
    verdict = decide_call(other, narrow)
    assert (verdict.kind, verdict.action, verdict.notify) == ("deny", "scope_expansion", True)


# --- properties -------------------------------------------------------------------------------------------

SAFE = ["ls -la", "git status", "pytest -q", "echo ok", "cat README.md", "make", "true", "npm test"]


def _dangerous() -> list[str]:
    return [
        e["tool_input"]["command"]
        for e in corpus()
        if e["tool_name"] == "Bash" and e["expect"] != "approve" and "\n" not in e["tool_input"]["command"]
    ]


DANGEROUS = _dangerous()
JOINS = [" && ", " || ", "; ", " | ", "\n", " & "]


@given(
    danger=st.sampled_from(DANGEROUS),
    before=st.lists(st.sampled_from(SAFE), max_size=3),
    after=st.lists(st.sampled_from(SAFE), max_size=3),
    join=st.sampled_from(JOINS),
)
def test_joining_safe_commands_to_a_dangerous_one_never_lowers_its_verdict(
    sandbox: Sandbox, danger: str, before: list[str], after: list[str], join: str
) -> None:
    alone = sandbox.kind(danger)
    together = sandbox.kind(join.join([*before, f"{{ {danger}; }}" if "&" in join else danger, *after]))
    assert RANK[together] >= RANK[alone], (danger, together)  # type: ignore[index]


@given(
    danger=st.sampled_from(DANGEROUS),
    wrap=st.sampled_from(
        [
            "bash -c {q}",
            "sh -c {q}",
            "zsh -lc {q}",
            "sudo bash -c {q}",
            "env FOO=1 sh -c {q}",
            'echo "$(sh -c {q})"',
            "echo `sh -c {q}`",
            "timeout 10 bash -c {q}",
            "xargs sh -c {q} < /dev/null",
            "eval {q}",
            "(sh -c {q})",
            "bash -c {qq}",
        ]
    ),
)
def test_wrapping_a_dangerous_command_in_a_shell_never_lowers_its_verdict(
    sandbox: Sandbox, danger: str, wrap: str
) -> None:
    assume(not ("`" in danger and "`" in wrap))  # backticks do not nest in the shell: that is a syntax error
    alone = sandbox.kind(danger)
    inner = shlex.quote(danger)
    wrapped = wrap.format(q=inner, qq=shlex.quote(f"sh -c {inner}"))  # {qq}: sh -c inside bash -c
    assert RANK[sandbox.kind(wrapped)] >= RANK[alone], wrapped  # type: ignore[index]


@given(st.text(max_size=300))
def test_the_splitter_never_raises_and_reports_no_internal_error(text: str) -> None:
    split = split_command(text)
    assert not any(p.startswith("internal error") for p in split.problems), split.problems


@given(st.text(alphabet=st.sampled_from(list("ab $()`'\"\\;&|<>{}*~/-\n=#!")), max_size=80))
def test_shell_noise_never_raises_anywhere_in_the_policy(sandbox: Sandbox, text: str) -> None:
    split = split_command(text)
    assert not any(p.startswith("internal error") for p in split.problems), split.problems
    kind = decide_call(ToolCall("Bash", {"command": text}, str(sandbox.wd)), sandbox.scope).kind
    if split.problems:
        assert kind != "approve"


@given(
    action=st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True),
    params=st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
        st.text(st.characters(exclude_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), max_size=20),
    ),  # a value on one line: a tag is a line
)
def test_request_lines_round_trip_through_the_parser(action: str, params: dict[str, str]) -> None:
    line = f"[REQUEST:{action}] " + " ".join(f"{k}={shlex.quote(v)}" for k, v in params.items())
    parsed = parse_line(line)
    assert isinstance(parsed, Tag) and parsed.label == action and dict(parsed.params) == params


@given(st.text(max_size=200))
def test_the_tag_parser_never_raises(text: str) -> None:
    for item in parse_lines(text):
        assert isinstance(item, Tag | Problem)


# --- the splitter, on the constructs that hide commands -----------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("a && b || c; d | e & f\ng", ["a", "b", "c", "d", "e", "f", "g"]),
        ("echo \"$(b x)\" '$(not)'", ["b x", "echo $(…) $(not)"]),
        ("echo `b`", ["b", "echo `…`"]),
        ("(a; (b))", ["a", "b"]),
        ("bash -c 'a && sh -c \"b\"'", ['bash -c a && sh -c "b"', "a", "sh -c b", "b"]),
        ("sudo -u x env A=1 nice -n 3 b", ["sudo -u x", "env A=1", "nice -n 3", "b"]),
        ("find . -exec b {} \\;", ["find . -exec b {} ;", "b ."]),
        ("ls | xargs -n1 b", ["ls", "xargs -n1", "b"]),
        ("bash <<EOF\nb\nEOF", ["bash", "b"]),
        ("cat <<'EOF'\n$(b)\nEOF", ["cat"]),
        ("cat <<EOF\n$(b)\nEOF", ["b", "cat"]),
        ("diff <(a) <(b)", ["a", "b", "diff /dev/fd/63 /dev/fd/63"]),
        ("if a; then b; fi", ["a", "b"]),
    ],
)
def test_the_splitter_finds_every_command(command: str, expected: list[str]) -> None:
    split = split_command(command)
    assert [str(c) for c in split.commands] == expected
    assert split.problems == ()


def test_the_splitter_reports_what_it_cannot_read() -> None:
    assert split_command("echo 'x").problems == ("a single quote is not closed",)
    assert "a case statement is not read by the policy" in split_command("case x in a) b;; esac").problems
    assert split_command("echo $(a").problems
    assert split_command("a )").problems


# --- worker tags and requests -----------------------------------------------------------------------------


def test_the_seed_lines_parse() -> None:
    items = parse_lines(
        "chatter\n[REQUEST:create_worktree] branch=fix/tab-preview-stuck run_id=42\n"
        '[REQUEST:run_tests] scheme="macOS UI Tests CI"\n[STATUS:investigation] Analysing bug...\n'
        "[DONE:pr_ready] CI green, no comments\n"
        "[ESCALATE:scope_expansion] Found unrelated issue in TabBar.swift\n"
        "[link](https://example.com) and [ ] a todo\n"
    )
    assert items == [
        Tag("REQUEST", "create_worktree", {"branch": "fix/tab-preview-stuck", "run_id": "42"},
            "branch=fix/tab-preview-stuck run_id=42"),
        Tag("REQUEST", "run_tests", {"scheme": "macOS UI Tests CI"}, 'scheme="macOS UI Tests CI"'),
        Tag("STATUS", "investigation", {}, "Analysing bug..."),
        Tag("DONE", "pr_ready", {}, "CI green, no comments"),
        Tag("ESCALATE", "scope_expansion", {}, "Found unrelated issue in TabBar.swift"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("[REQUEST] x=1", "[REQUEST…] must look like [REQUEST:name] followed by text"),
        ("[REQUEST:] x=1", "[REQUEST:] has no name after the colon"),
        (
            "[REQUEST:push] branch='open",
            "[REQUEST:push]: its parameters cannot be read (No closing quotation)",
        ),
        ("[REQUEST:push] branch", "[REQUEST:push]: parameter 'branch' is not of the form key=value"),
        ("[REQUEST:push] a=1 a=2", "[REQUEST:push]: parameter 'a' is given twice with different values"),
        ("[STATUS:a/b] x", "[STATUS:a/b] has a name that is not a plain word"),
    ],
)
def test_malformed_tags_give_a_problem_not_an_exception(line: str, problem: str) -> None:
    assert parse_line(line) == Problem(line, problem)


def _worker(sandbox: Sandbox, *messages: str, own: str | None = None) -> WorkerContext:
    return WorkerContext(Scope(**{**sandbox.scope.__dict__, "own_branch": own}), tuple(messages))


@pytest.mark.parametrize(
    ("line", "kind", "action"),
    [
        ("[REQUEST:create_worktree] branch=fix/x", "approve", "create_worktree"),
        ("[REQUEST:run_build]", "approve", "run_build"),
        ('[REQUEST:run_tests] scheme="macOS UI Tests CI"', "approve", "run_tests"),
        ("[REQUEST:open_draft_pr] title=x", "approve", "open_draft_pr"),
        ("[REQUEST:push] branch=fix/x", "approve", "push_own_branch"),
        ("[REQUEST:push] branch=main", "escalate", "merge_pr"),
        ("[REQUEST:push] branch=fix/x force=yes", "escalate", "merge_pr"),
        ("[REQUEST:push] branch=someone-else", "escalate", "push_other_branch"),
        ('[REQUEST:post_asana_comment] task=1 text="done"', "escalate", "comment_external"),
        ("[REQUEST:merge_pr] pr=12", "escalate", "merge_pr"),
        ("[REQUEST:modify_outside_worktree] path=/etc/hosts", "deny", "modify_outside_worktree"),
        ("[REQUEST:edit] path=src/a.py", "approve", "edit_worktree"),
        ("[REQUEST:edit] path=../other/x.py", "deny", "modify_outside_worktree"),
        ("[REQUEST:scope_expansion] what=TabBar", "deny", "scope_expansion"),
        ("[REQUEST:launch_rockets]", "escalate", "unknown"),
        ("[ESCALATE:question] Which API version?", "escalate", "question"),
        ("[ESCALATE:scope_expansion] Found unrelated issue", "deny", "scope_expansion"),
        ("[STATUS:investigation] Analysing", "approve", "report"),
        ("[REQUEST:] x", "escalate", "unparsable"),
    ],
)
def test_worker_requests_follow_the_table(sandbox: Sandbox, line: str, kind: str, action: str) -> None:
    context = _worker(sandbox, "[REQUEST:create_worktree] branch=fix/x run_id=42")
    item = parse_line(line)
    assert item is not None
    verdict = decide_request(item, context)
    assert (verdict.kind, verdict.action) == (kind, action), verdict.reason


def test_the_own_branch_comes_from_the_job_or_from_the_window(sandbox: Sandbox) -> None:
    push = parse_line("[REQUEST:push] branch=fix/x")
    assert push is not None
    assert decide_request(push, _worker(sandbox)).kind == "escalate"  # no branch is the worker's yet
    assert decide_request(push, _worker(sandbox, own="fix/x")).kind == "approve"
    old = ["[REQUEST:create_worktree] branch=fix/x", *["[STATUS:work] ..."] * 20]
    assert decide_request(push, _worker(sandbox, *old)).kind == "escalate"  # out of the last 20
    assert decide_request(
        push, _worker(sandbox, *old[-20:], "[REQUEST:create_worktree] branch=fix/x")
    ).allowed


def test_scope_expansion_is_denied_and_the_person_told(sandbox: Sandbox) -> None:
    [(_, verdict)] = decide_messages("[ESCALATE:scope_expansion] Found unrelated issue", _worker(sandbox))
    assert verdict.kind == "deny" and verdict.notify


# --- the [policy] section of the config ---------------------------------------------------------------------


def _config(tmp_path: Path, shared: str, local: str = "") -> Path:
    (tmp_path / ".vaultops").mkdir()
    (tmp_path / ".vaultops" / "config.toml").write_text(shared)
    if local:
        (tmp_path / ".vaultops" / "local.toml").write_text(local)
    return tmp_path


def test_policy_overrides_load_from_the_config(tmp_path: Path) -> None:
    vault = _config(
        tmp_path, '[policy]\ndelete_tree = "approve"\n', '[policy]\n"mcp__github__*" = "approve"\n'
    )
    assert load_config(vault, environ={}).policy == {"delete_tree": "approve", "mcp__github__*": "approve"}


@pytest.mark.parametrize(
    ("shared", "local", "message"),
    [
        (
            '[policy]\nmerg_pr = "deny"\n',
            "",
            "config.toml: [policy] merg_pr is not a known action (did you mean",
        ),
        ('[policy]\nmerge_pr = "approve"\n', "", "config.toml: [policy] merge_pr cannot be approve"),
        (
            "",
            '[policy]\ndelete_tree = "maybe"\n',
            "local.toml: [policy] delete_tree input should be 'approve'",
        ),
        ("[policy]\nrun_tests = 1\n", "", "config.toml: [policy] run_tests input should be 'approve'"),
    ],
)
def test_a_bad_policy_entry_is_one_sentence_naming_the_file_and_key(
    tmp_path: Path, shared: str, local: str, message: str
) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(_config(tmp_path, shared, local), environ={})
    assert message in err.value.message and "\n" not in err.value.message


def test_the_environment_cannot_loosen_the_policy(tmp_path: Path) -> None:
    vault = _config(tmp_path, "")
    assert load_config(vault, environ={"VAULTOPS_POLICY_MERGE_PR": "approve"}).policy == {}


def test_every_default_is_described() -> None:
    assert all(kind in RANK and text for kind, text in DEFAULTS.values())
