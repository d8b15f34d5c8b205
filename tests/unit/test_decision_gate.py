"""The decision gate, rule by rule, as values: a parsed note and Facts in, a Agenda out.

No vault, no state.db, no clock: each test states the facts it needs.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from vaultops.classifier.blocked import BLOCKED_CLASSES
from vaultops.classifier.triage import SecondOpinion, TriageOpinion
from vaultops.config import Config
from vaultops.decide.budget import Budget
from vaultops.decide.gate import (
    Agenda,
    Clone,
    Facts,
    LiveWorker,
    Sighting,
    agenda_for,
    sightings,
)
from vaultops.model import State, Target
from vaultops.render import results
from vaultops.scan.note import ParsedNote, parse_note
from vaultops.scan.plan import as_plan_note

NOW = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
WALL = NOW.timestamp()
HOST, AGENT = "laptop", "vaultops"

CONFIG = Config.model_validate(
    {
        "profiles": {
            "claude": {"command": ["claude", "-p", "{prompt}"], "tools": ["Read", "Grep"]},
            "codex": {"command": ["codex", "{prompt}"], "gate": "none"},
        },
        "routing": {"research": ["claude", "codex"], "code": ["claude"]},
        "inbox": {"settle": 5},
    }
)


def inbox(*blocks: str) -> ParsedNote:
    return parse_note("_System/COO-Inbox.md", ("# Inbox\n\n" + "\n\n".join(blocks) + "\n").encode())


def plan_file(name: str, text: str) -> ParsedNote:
    rel = f"executor-queue/{name}.md"
    return as_plan_note(parse_note(rel, text.encode(), requests=False), NOW)


def facts_for(note: ParsedNote, **changes: object) -> Facts:
    """Facts in which every first sighting is an hour old and the note was saved an hour ago."""
    base = Facts(
        now=NOW, wall=WALL, mtime=WALL - 3600, clone=Clone(HOST, AGENT, shared=False),
        budget=Budget(0.0, 0.0),
    )  # fmt: skip
    base = replace(base, **changes)  # type: ignore[arg-type]
    seen = {(s.request_id, s.key): WALL - 3600 for s in sightings(note, base)}
    return replace(base, first_seen={**seen, **base.first_seen})


AT = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


def status(state: State, reason: str = "") -> str:
    return "\n" + "\n".join(results.status_only(state, AT, reason))


def lock(agent: str, host: str, claim: str, lease: float = 600) -> str:
    """A claim's lock and running lines, as vaultops writes them."""
    return "\n" + "\n".join(results.lock_and_start(agent, host, claim, AT, lease))


def kinds(plan: Agenda) -> dict[str, str]:
    return {p.request.id: p.handling.kind for p in plan.items}


LIGHT = "## REQ-1 Is git here?\n- type: env-check\n- ready: yes\nIs git installed? `which git`"
RESEARCH = "## REQ-2 Summarise\n- type: research\n- ready: yes\nSummarise this week's notes in five bullets."
RISKY = (
    "## REQ-3 Rotate\n- ready: yes\nRotate the Stripe secret key and put the new one in the production .env."
)


# --- 5. classification --------------------------------------------------------------------------


def test_a_light_check_runs_built_in_research_goes_to_its_profile_and_risk_is_escalated() -> None:
    note = inbox(LIGHT, RESEARCH, RISKY)
    plan = agenda_for(note, facts_for(note), CONFIG)
    assert kinds(plan) == {"REQ-1": "builtin", "REQ-2": "profile", "REQ-3": "escalate"}
    research = next(p for p in plan.items if p.request.id == "REQ-2")
    assert research.handling.profile == "claude"
    assert research.handling.ruling.route == ("claude", "codex")


def test_a_type_without_a_profile_waits_for_one() -> None:
    note = inbox("## REQ-4 Fix\n- type: code\n- ready: yes\nFix the typo in README.md.")
    config = Config.model_validate({"profiles": {}, "routing": {}})
    plan = agenda_for(note, facts_for(note), config)
    assert kinds(plan) == {"REQ-4": "wait"}
    assert "no executor profile for type code" in plan.items[0].handling.reason


def test_done_requests_are_not_looked_at() -> None:
    done = LIGHT + lock(AGENT, HOST, "aaaaaa") + status(State.DONE)
    note = inbox(done)
    assert agenda_for(note, facts_for(note), CONFIG).items == ()


# --- 3. settling ----------------------------------------------------------------------------------


def test_a_request_saved_just_now_settles_and_says_how_long() -> None:
    note = inbox("## REQ-5 Is git here?\n- type: env-check\nIs git installed? `which git`")
    facts = facts_for(note, mtime=WALL - 1)
    facts = replace(facts, first_seen={k: WALL - 2 for k in facts.first_seen})
    plan = agenda_for(note, facts, CONFIG)
    assert plan.items == ()
    assert [s.request_id for s in plan.settling] == ["REQ-5"]
    assert plan.next_settle == 3.0


def test_ready_yes_and_an_old_save_do_not_settle() -> None:
    ready = inbox(LIGHT)
    assert kinds(agenda_for(ready, facts_for(ready, mtime=WALL), CONFIG)) == {"REQ-1": "builtin"}
    old = inbox("## REQ-5 Is git here?\n- type: env-check\nIs git installed? `which git`")
    assert kinds(agenda_for(old, facts_for(old), CONFIG)) == {"REQ-5": "builtin"}


def test_settling_needs_the_first_sighting_of_this_version_only() -> None:
    note = inbox("## REQ-5 Is git here?\n- type: env-check\nIs git installed? `which git`")
    wanted = sightings(note, facts_for(note))
    assert wanted == [Sighting("REQ-5", note.requests[0].person_hash, wall=True)]


# --- 4. said before classifying -------------------------------------------------------------------


def test_an_input_problem_is_an_error_before_anything_is_classified() -> None:
    note = inbox("## REQ-6 Rotate\n- type: nonsense\n- ready: yes\nRotate the Stripe key.")
    plan = agenda_for(note, facts_for(note), CONFIG)
    assert kinds(plan) == {"REQ-6": "error"}


def test_a_workdir_the_facts_refuse_is_an_error() -> None:
    note = inbox(RESEARCH)
    facts = facts_for(note, workdir_problems={"REQ-2": "workdir /etc is outside [limits] allowed_roots"})
    plan = agenda_for(note, facts, CONFIG)
    assert kinds(plan) == {"REQ-2": "error"}
    assert plan.items[0].handling.reason.startswith("workdir /etc")


def test_a_request_whose_lines_were_lost_after_a_heavy_run_is_not_run_again() -> None:
    note = inbox(RESEARCH)
    plan = agenda_for(note, facts_for(note, heavy_runs={"REQ-2": "c0ffee"}), CONFIG)
    assert kinds(plan) == {"REQ-2": "error"}
    assert "already ran this request (claim c0ffee)" in plan.items[0].handling.reason


def test_retry_yes_runs_it_again_despite_the_lost_lines() -> None:
    text = RESEARCH + status(State.ERROR, "it failed") + "\n- retry: yes"
    note = inbox(text)
    plan = agenda_for(note, facts_for(note, heavy_runs={"REQ-2": "c0ffee"}), CONFIG)
    assert kinds(plan) == {"REQ-2": "profile"}


def test_what_was_said_already_is_not_said_again() -> None:
    note = inbox("## REQ-6 Rotate\n- type: nonsense\n- ready: yes\nRotate the Stripe key.")
    said = agenda_for(note, facts_for(note), CONFIG).items[0].handling.reason
    again = inbox(
        "## REQ-6 Rotate\n- type: nonsense\n- ready: yes\nRotate the Stripe key." + status(State.ERROR, said)
    )
    assert agenda_for(again, facts_for(again), CONFIG).items == ()


# --- 6. interrupted work and the budget -----------------------------------------------------------


def test_interrupted_heavy_work_waits_for_retry_but_a_light_check_runs_again() -> None:
    cut = lock(AGENT, HOST, "aaaaaa") + status(State.INTERRUPTED, "cut")
    note = inbox(RESEARCH + cut, LIGHT + cut)
    assert kinds(agenda_for(note, facts_for(note), CONFIG)) == {"REQ-1": "builtin"}


def test_a_spent_budget_makes_heavy_work_wait_and_leaves_light_checks_alone() -> None:
    note = inbox(LIGHT, RESEARCH)
    plan = agenda_for(note, facts_for(note, budget=Budget(5.0, 5.0)), CONFIG)
    assert kinds(plan) == {"REQ-1": "builtin", "REQ-2": "wait"}
    assert "daily budget reached" in plan.items[1].handling.reason


# --- 1. takeovers ---------------------------------------------------------------------------------

HELD = RESEARCH + lock(AGENT, "desktop", "bbbbbb")


def test_another_machines_claim_is_taken_over_once_its_lease_ran_out_as_this_machine_measures_it() -> None:
    note = inbox(HELD)
    young = facts_for(note, first_seen={("REQ-2", "claim:bbbbbb"): WALL - 60})
    assert agenda_for(note, young, CONFIG).items == ()
    old = facts_for(note, first_seen={("REQ-2", "claim:bbbbbb"): WALL - 601})
    assert kinds(agenda_for(note, old, CONFIG)) == {"REQ-2": "takeover"}


def test_no_takeover_is_judged_from_a_stale_view_of_the_remote() -> None:
    note = inbox(HELD)
    facts = facts_for(note, fresh=False, first_seen={("REQ-2", "claim:bbbbbb"): WALL - 601})
    assert agenda_for(note, facts, CONFIG).items == ()


def test_this_clones_own_claim_is_never_taken_over() -> None:
    mine = RESEARCH + lock(AGENT, HOST, "bbbbbb")
    note = inbox(mine)
    assert agenda_for(note, facts_for(note), CONFIG).items == ()


def test_with_a_remote_a_claim_by_this_host_counts_as_this_clones_only_if_state_db_knows_it() -> None:
    mine = RESEARCH + lock(AGENT, HOST, "bbbbbb")
    note = inbox(mine)
    stranger = Clone(HOST, AGENT, shared=True)
    facts = facts_for(note, clone=stranger, first_seen={("REQ-2", "claim:bbbbbb"): WALL - 601})
    assert kinds(agenda_for(note, facts, CONFIG)) == {"REQ-2": "takeover"}
    known = replace(facts, clone=replace(stranger, claims=frozenset({"bbbbbb"})))
    assert agenda_for(note, known, CONFIG).items == ()


# --- 2. schedules ---------------------------------------------------------------------------------

DAILY = '---\nschedule: "0 7 * * *"\ntype: research\n---\nSummarise the inbox in five bullets.\n'
EVERY = "---\nschedule: every 2h\ntype: research\n---\nSummarise the inbox in five bullets.\n"


def test_a_scheduled_plan_runs_when_its_time_has_come_from_when_it_was_first_seen() -> None:
    note = plan_file("digest", DAILY)
    key = (note.requests[0].id, "schedule:0 7 * * *")
    seen_after_seven = facts_for(note, first_seen={key: WALL - 60})
    assert agenda_for(note, seen_after_seven, CONFIG).items == ()
    seen_before_seven = facts_for(note, first_seen={key: WALL - 3 * 3600})
    assert [p.handling.kind for p in agenda_for(note, seen_before_seven, CONFIG).items] == ["profile"]


def test_a_scheduled_plan_counts_from_its_last_run_block() -> None:
    ran = plan_file("digest", EVERY + "\n### Run — 2026-12-02 08:00 — vaultops\n- status: done\n")
    assert agenda_for(ran, facts_for(ran), CONFIG).items == ()
    long_ago = plan_file("digest", EVERY + "\n### Run — 2026-12-02 06:30 — vaultops\n- status: done\n")
    assert len(agenda_for(long_ago, facts_for(long_ago), CONFIG).items) == 1


# --- 8. apart and within --------------------------------------------------------------------------


def plan_with_files(name: str, files: str, worker: str = "") -> ParsedNote:
    extra = f"worker: {worker}\n" if worker else ""
    body = "Summarise the docs folder in five bullets."
    return plan_file(name, f"---\ntype: research\nfiles: [{files}]\n{extra}---\n{body}\n")


def test_plans_whose_files_overlap_running_work_wait() -> None:
    note = plan_with_files("docs", "docs/**")
    busy = facts_for(note, busy_files=(("docs/intro.md",),))
    assert agenda_for(note, busy, CONFIG).items == ()
    free = facts_for(note, busy_files=(("src/app.py",),))
    assert len(agenda_for(note, free, CONFIG).items) == 1


def test_a_plan_for_a_busy_worker_name_or_with_no_free_place_waits() -> None:
    note = plan_with_files("docs", "docs/**", worker="scribe")
    named = facts_for(note, workers=(LiveWorker("scribe", ("other/**",)),))
    assert agenda_for(note, named, CONFIG).items == ()
    starting = facts_for(note, starting=("scribe",))
    assert agenda_for(note, starting, CONFIG).items == ()
    full = Config.model_validate({**CONFIG.model_dump(), "workers": {"max": 1}})
    crowded = facts_for(note, workers=(LiveWorker("other", ("src/**",)),))
    assert agenda_for(note, crowded, full).items == ()
    assert len(agenda_for(note, facts_for(note), full).items) == 1


def test_with_a_remote_no_more_is_claimed_than_can_start_now() -> None:
    note = inbox(LIGHT, RESEARCH, RISKY)
    shared = Clone(HOST, AGENT, shared=True)
    plan = agenda_for(note, facts_for(note, clone=shared, slots=1), CONFIG)
    assert kinds(plan) == {"REQ-1": "builtin", "REQ-3": "escalate"}  # an escalation takes no slot
    alone = agenda_for(note, facts_for(note, slots=1), CONFIG)
    assert len(alone.items) == 3  # without a remote a claim waits in the local queue


# --- the model's second opinion -------------------------------------------------------------------


def test_with_triage_configured_the_gate_asks_first_and_decides_with_the_answer() -> None:
    config = Config.model_validate({**CONFIG.model_dump(), "classify": {"triage": "claude"}})
    note = inbox(RESEARCH)
    first = agenda_for(note, facts_for(note), config)
    assert first.items == () and first.asks == (Target("REQ-2"),)
    stricter = TriageOpinion.model_validate(
        {"type": "research", "complexity": "heavy", "safety_class": "blocked",
         "blocked_classes": ["permanent-deletion"], "reasons": ["it deletes"]}
    )  # fmt: skip
    opinion = SecondOpinion("claude", stricter)
    second = agenda_for(note, facts_for(note, opinions={Target("REQ-2"): opinion}), config)
    assert kinds(second) == {"REQ-2": "escalate"}


# --- properties -------------------------------------------------------------------------------

WORDS = st.sampled_from(
    ["delete", "the", "prod", "database", "summarise", "notes", "rotate", "key", "is", "git", "installed",
     "pay", "invoice", "email", "client", "merge", "main", "read", "README", "and", "then", "it", "rm", "-rf"]
)  # fmt: skip


@given(st.lists(WORDS, min_size=1, max_size=12), st.sampled_from(["", "research", "code", "env-check"]))
def test_the_gate_never_runs_what_the_classifier_blocks(words: list[str], type_: str) -> None:
    text = " ".join(words)
    typed = f"- type: {type_}\n" if type_ else ""
    note = inbox(f"## REQ-9 Something\n{typed}- ready: yes\n{text}")
    plan = agenda_for(note, facts_for(note), CONFIG)
    assert plan == agenda_for(note, facts_for(note), CONFIG)  # a function of its values
    for p in plan.items:
        if (
            set(p.handling.ruling.blocked) & set(BLOCKED_CLASSES)
            or p.handling.ruling.safety_class != "routine"
        ):
            assert p.handling.kind not in ("builtin",), (text, p.handling)
        if p.handling.ruling.safety_class in ("blocked", "unknown"):
            assert p.handling.kind in ("escalate", "error"), (text, p.handling)


def test_the_gate_reads_no_file(tmp_path: object) -> None:
    # the note's path does not exist anywhere: a gate that stat()ed or read it would fail or differ
    note = parse_note("nowhere/at/all.md", ("# x\n\n" + LIGHT + "\n").encode())
    assert kinds(agenda_for(note, facts_for(note, mtime=WALL - 3600), CONFIG)) == {"REQ-1": "builtin"}


def test_a_note_saved_long_ago_is_past_settling_whatever_the_first_sighting_says() -> None:
    note = inbox("## REQ-5 Is git here?\n- type: env-check\nIs git installed? `which git`")
    facts = facts_for(note)
    facts = replace(facts, first_seen={k: WALL for k in facts.first_seen})
    assert kinds(agenda_for(note, facts, CONFIG)) == {"REQ-5": "builtin"}
    assert agenda_for(note, replace(facts, mtime=WALL - 2), CONFIG).settling[0].seconds == 5.0
    assert timedelta(seconds=agenda_for(note, replace(facts, mtime=WALL - 2), CONFIG).next_settle or 0)


def test_the_budget_a_request_is_judged_by_is_the_one_after_its_own_second_opinion_was_paid_for() -> None:
    config = Config.model_validate({**CONFIG.model_dump(), "classify": {"triage": "claude"}})
    note = inbox(RESEARCH)
    routine = TriageOpinion.model_validate(
        {"type": "research", "complexity": "heavy", "safety_class": "routine", "blocked_classes": [],
         "reasons": ["a summary"]}
    )  # fmt: skip
    opinions = {Target("REQ-2"): SecondOpinion("claude", routine)}
    before = facts_for(note, opinions=opinions, budget=Budget(1.0, 0.5))
    assert kinds(agenda_for(note, before, config)) == {"REQ-2": "profile"}
    spent = replace(before, budget_after={Target("REQ-2"): Budget(1.0, 1.0)})
    assert kinds(agenda_for(note, spent, config)) == {"REQ-2": "wait"}


def test_a_cleanup_is_left_to_the_machine_that_ran_the_job() -> None:
    block = (
        "## REQ-code Fix it\n- type: code\n- repo: ~/code/app\n- ready: yes\nFix it.\n"
        "- locked-by: vaultops @ 2026-12-02T08:00:00+00:00 (server, claim abc123, lease 700 s)\n"
        "- status: running @ 2026-12-02T08:00:00+00:00\n"
        "- status: done @ 2026-12-02T08:10:00+00:00\n- cleanup: yes"
    )
    note = inbox(block)
    elsewhere = agenda_for(note, facts_for(note), CONFIG)
    assert elsewhere.items == (), "the worktree is on the server"
    mine = facts_for(note, clone=Clone("server", AGENT, shared=False))
    [item] = agenda_for(note, mine, CONFIG).items
    assert (item.handling.kind, item.handling.reason) == ("cleanup", "yes")


def test_a_wall_clock_set_back_never_holds_a_settling_request_longer_than_settle() -> None:
    """First seen at 09:00; the clock was then set back an hour: it waited for that hour to pass again."""
    note = inbox("## REQ-5 Is git here?\n- type: env-check\nIs git installed? `which git`")
    back = WALL - 3600
    facts = replace(facts_for(note, mtime=back - 1), wall=back)
    facts = replace(facts, first_seen={k: WALL for k in facts.first_seen})
    assert agenda_for(note, facts, CONFIG).next_settle == 5.0  # [inbox] settle, not an hour and 5 s
