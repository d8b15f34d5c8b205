"""Plan notes read as jobs: settings from the frontmatter (python-frontmatter), the body as the prompt,
paused and draft notes skipped, a workdir only inside the allowed roots, overlapping file sets told apart,
and each unusable setting one sentence naming the note."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.helpers import REPO
from vaultops.decide.files import files_overlap
from vaultops.scan.plan import last_run, parse_plan, workdir_problem

NOW = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)

TZ = datetime(2026, 5, 4, tzinfo=UTC)
REL = "executor-queue/fix-tab-preview.md"


def plan_text(front: str, body: str = "Fix the stuck tab preview.") -> str:
    return f"---\n{front}---\n{body}\n"


def test_the_templates_plan_note_is_read() -> None:
    text = (REPO / "vault-template" / REL).read_text()
    plan = parse_plan(REL, text, TZ)
    assert (plan.type, plan.profile, plan.workdir) == ("code", "worker-code", "~/code/app")
    assert plan.files == ("src/tabs/**",)
    assert plan.schedule is not None and plan.schedule.cron == "0 7 * * 1-5"
    assert plan.timeout == 900
    assert plan.skipped == "paused"  # the template ships paused: nothing runs until the person says so
    assert plan.text.startswith("Fix the stuck tab preview") and plan.problems == ()


@pytest.mark.parametrize(("front", "skipped"), [("status: paused\n", "paused"), ("draft: true\n", "a draft")])
def test_paused_and_draft_notes_are_skipped(front: str, skipped: str) -> None:
    assert parse_plan(REL, plan_text(front), TZ).skipped == skipped


def test_the_prompt_stops_where_the_daemon_began_writing() -> None:
    body = (
        "Do the thing.\nCarefully.\n"
        "- locked-by: hermes @ 2026-05-04T08:31:02+10:00 (vps1, claim 7f3a9c)\n"
        "- status: running @ 2026-05-04T08:31:02+10:00\n### Run — 2026-05-04 08:31 — hermes\nout\n"
    )
    assert parse_plan(REL, plan_text("type: code\n", body), TZ).text == "Do the thing.\nCarefully."


@pytest.mark.parametrize(
    ("front", "said"),
    [
        ("type: [code\n", "the frontmatter is not valid YAML (line"),
        ("schedule: 30m\n", "write `every 30m` to repeat it"),
        ("timeout: soon\n", "timeout 'soon' is not a duration"),
        ("files: {a: 1}\n", "`files:` must be a list of text"),
        ("workdir: [a, b]\n", "`workdir:` must be one value"),
    ],
)
def test_a_setting_that_cannot_be_used_is_one_sentence_naming_the_note(front: str, said: str) -> None:
    plan = parse_plan(REL, plan_text(front), TZ)
    assert len(plan.problems) == 1
    assert plan.problems[0].startswith(f"{REL}: ") and said in plan.problems[0]


def test_a_note_with_no_prompt_says_so() -> None:
    [problem] = parse_plan(REL, plan_text("type: code\n", ""), TZ).problems
    assert "has no text below its frontmatter" in problem


def test_a_workdir_must_resolve_inside_an_allowed_root(tmp_path: Path) -> None:
    root = tmp_path / "code"
    (root / "app").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "escape").symlink_to(outside)
    vault = tmp_path / "vault"
    vault.mkdir()

    def problem(workdir: str) -> str:
        plan = parse_plan(REL, plan_text(f"workdir: {workdir}\n"), TZ)
        return workdir_problem(plan.workdir, vault, [vault, root])

    assert problem(str(root / "app")) == ""
    assert "outside [limits] allowed_roots" in problem(str(root / "app" / ".." / ".." / "elsewhere"))
    assert "outside [limits] allowed_roots" in problem(str(root / "escape"))
    assert "is not a folder" in problem(str(root / "missing"))


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        (["src/tabs/**"], ["src/tabs/preview.ts"], True),
        (["src/tabs/**"], ["src/auth/**"], False),
        (["src/a.py"], ["src/b.py"], False),
        (["src"], ["src/a.py"], True),  # a folder covers what is in it
        (["**/*.md"], ["docs/x.md"], True),
        (["docs/*.md"], ["src/*.py"], False),
        ([], ["anything"], True),  # a job that did not say may touch anything
    ],
)
def test_file_sets_overlap_when_they_could_name_one_file(a: list[str], b: list[str], overlap: bool) -> None:
    assert files_overlap(a, b) is overlap
    assert files_overlap(b, a) is overlap


@given(st.lists(st.from_regex(r"[a-z]{1,4}(/[a-z*]{1,4}){0,3}", fullmatch=True), min_size=1, max_size=3))
def test_a_file_set_always_overlaps_itself(globs: list[str]) -> None:
    assert files_overlap(globs, globs)


def test_the_last_run_is_read_from_the_notes_run_blocks() -> None:
    lines = ["Do it.", "### Run — 2026-05-04 07:00 — hermes", "x", "### Run — 2026-05-05 07:00 — hermes", "y"]
    assert last_run(lines, TZ) == datetime(2026, 5, 5, 7, 0, tzinfo=UTC)
    assert last_run(["Do it."], TZ) is None


def test_a_yaml_alias_bomb_in_the_frontmatter_is_never_turned_into_text() -> None:
    """Found by an attack: `status:`, `draft:` and `worker:` made text of their value first, and nine
    levels of aliases nest a billion items (a regression does not fail here: it never ends)."""
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    front = "\n".join(levels) + "\nstatus: *a8\ndraft: *a8\nworker: *a8\ntype: research\n"
    plan = parse_plan("executor-queue/bomb.md", f"---\n{front}---\nSummarise the notes.\n", NOW)
    assert plan.skipped == "" and plan.worker is None
    assert any("`worker:` must be yes or a name" in p for p in plan.problems)
