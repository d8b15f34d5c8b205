"""The dashboard, as a value: a golden rendering with hostile ids and titles, its properties, and the
escaping as an attacker would try it (text from a note never becomes markup)."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultops.lines import lock_line, outcome_line, status_line
from vaultops.model import State
from vaultops.render.dashboard import Fleet, Scheduled, render_dashboard
from vaultops.render.machines import MachineFacts, ProfileFact, WorkerFact
from vaultops.scan.note import parse_note

GOLDEN = Path(__file__).parents[2] / "fixtures" / "golden" / "dashboard.md"
INBOX = "_System/COO-Inbox.md"
TZ = timezone(timedelta(hours=2))
NOW = datetime(2026, 5, 6, 10, 20, tzinfo=TZ)


def at(hours_ago: float) -> str:
    return (NOW - timedelta(hours=hours_ago)).isoformat(timespec="seconds")


def block(rid: str, title: str, *lines: str) -> str:
    return "\n".join([f"## {rid} {title}", "- ready: yes", "Some text.", *lines, ""])


def inbox() -> str:
    return "\n".join(
        [
            "# Inbox",
            "",
            block("REQ-esc", "Rotate | the [[key]] #tag ^x %%hide",
                  status_line(State.ESCALATED, at(50), "blocked: rotate")),
            block("REQ-ans", "Answered", status_line(State.ESCALATED, at(3), "high: delete"),
                  "- decision: approve"),
            block("REQ-run", "Проверить диск: /var", lock_line("coo", at(1), "server", "c1"),
                  status_line(State.RUNNING, at(1), "worker-code")),
            block("REQ-open", "`code` $x$ ==hi== *b* <i>"),
            block("REQ-done", "Is git installed?", status_line(State.DONE, at(2)),
                  outcome_line("done", "env-check", "light", "routine", "direct", "0.01 s")),
            block("REQ-err", "Nginx 502", status_line(State.ERROR, at(4), "worker-code: timed out")),
            block("REQ-old", "Long ago", status_line(State.DONE, at(30))),
        ]
    )  # fmt: skip


def fleet(text: str | None = None, now: datetime = NOW) -> Fleet:
    note = parse_note(INBOX, (text or inbox()).encode(), full=True)
    machines = [
        MachineFacts("laptop", "coo", "0.1.0", at(0.1), "2026-05-06", 0.42, 10.0,
                     (ProfileFact("worker-code", "online"),), (WorkerFact("fix|preview", "running", at(1)),)),
        MachineFacts("server", "coo", "0.1.0", at(2), "2026-05-06", 0.10, 10.0),
    ]  # fmt: skip
    scheduled = [Scheduled("executor-queue/weekly.md", "PLAN-weekly", "0 7 * * 1", "next 2026-05-11 07:00")]
    return Fleet(now, INBOX, "_System/vaultops", [(INBOX, tuple(note.requests))], scheduled, machines)


def test_the_golden_dashboard() -> None:
    text = render_dashboard(fleet())
    if os.environ.get("VAULTOPS_UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()


def test_its_properties_count_what_it_shows() -> None:
    text = render_dashboard(fleet())
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["escalations_open"] == 1  # the answered one is being acted on, not waiting
    assert (meta["running"], meta["waiting"], meta["finished_24h"], meta["failed_24h"]) == (1, 1, 2, 1)
    assert meta["state_escalated"] == 2 and all(f"state_{s.value}" in meta for s in State)
    assert (meta["machines"], meta["machines_up"], meta["spend_today_usd"]) == (2, 1, 0.52)
    assert "REQ-old" not in text and "REQ-ans" not in text.split("## Waiting and running")[0]


def test_the_same_instant_in_another_zone_and_minutes_later_draw_the_same_note() -> None:
    text = render_dashboard(fleet())
    assert render_dashboard(fleet(now=NOW.astimezone(UTC))) == text
    assert render_dashboard(fleet(now=NOW + timedelta(minutes=5))) == text


@given(
    st.sampled_from([-12, -9.5, -3.5, 0, 3.5, 5.5, 5.75, 9.5, 10, 12.75, 14]),
    st.integers(0, 48 * 60),
)
def test_every_zone_draws_the_same_note_at_the_same_instant(offset_h: float, minutes: int) -> None:
    """Half-hour and 45-minute zones included: the 24 h window and the ages step at the same instants
    everywhere, so two machines in different zones never take turns rewriting the note."""
    instant = NOW + timedelta(minutes=minutes)
    zone = timezone(timedelta(hours=offset_h))
    assert render_dashboard(fleet(now=instant.astimezone(zone))) == render_dashboard(fleet(now=instant))


def test_a_machine_is_quiet_after_two_of_its_own_heartbeats_whoever_draws_it() -> None:
    slow = MachineFacts("nas", "coo", "0.1.0", at(1), "2026-05-06", heartbeat=3600.0)
    quick = MachineFacts("vps", "coo", "0.1.0", at(1), "2026-05-06", heartbeat=300.0)
    assert (slow.quiet_after, quick.quiet_after) == (7500.0, 900.0)
    note = parse_note(INBOX, inbox().encode(), full=True)
    notes = [(INBOX, tuple(note.requests))]
    text = render_dashboard(Fleet(NOW, INBOX, "_System/vaultops", notes, (), [slow, quick]))
    assert "[[_System/vaultops/nas|nas]] · up · last heartbeat 2026-05-06 09:20" in text
    assert "[[_System/vaultops/vps|vps]] · **quiet** · last heartbeat 2026-05-06 09:20" in text


def test_machines_in_different_zones_show_every_time_with_its_offset() -> None:
    laptop = MachineFacts("laptop", "coo", "0.1.0", at(0.1), "2026-05-06")
    sydney = MachineFacts("sydney", "coo", "0.1.0", (NOW - timedelta(hours=0.1)).astimezone(
        timezone(timedelta(hours=10))).isoformat(timespec="seconds"), "2026-05-06")  # fmt: skip
    note = parse_note(INBOX, inbox().encode(), full=True)
    notes = [(INBOX, tuple(note.requests))]
    one = render_dashboard(Fleet(NOW, INBOX, "_System/vaultops", notes, (), [laptop]))
    assert "+02:00" not in one, "one zone: times as the lines wrote them"
    text = render_dashboard(Fleet(NOW, INBOX, "_System/vaultops", notes, (), [laptop, sydney]))
    assert "last heartbeat 2026-05-06 10:14 +02:00" in text
    assert "last heartbeat 2026-05-06 18:14 +10:00" in text
    assert "since 2026-05-06 09:20 +02:00" in text  # a request's time too


_LINK = re.compile(r"\[\[([^\]|#]*)")


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=60), st.text(max_size=60))
def test_a_title_or_reason_never_becomes_markup(title: str, reason: str) -> None:
    title = title.replace("\r", " ")
    evil = block("REQ-evil", " ".join(title.split()) or "x", status_line(State.ESCALATED, at(1), reason))
    text = inbox() + "\n" + evil
    body = render_dashboard(fleet(text)).split("---\n", 2)[2]
    assert "%%" not in body
    machines = {f"_System/vaultops/{h}" for h in ("laptop", "server")}
    made = {"_System/COO-Inbox", "executor-queue/weekly"} | machines
    assert set(_LINK.findall(body)) <= made
    headings = [line for line in body.splitlines() if line.startswith("#")]
    assert len(headings) == 8  # the title and the seven sections: none made by a note's text
    waiting = body.split("## Waiting for you")[1].split("\n## ")[0]
    assert sum(1 for line in waiting.splitlines() if line.startswith("- ")) == 2


def test_a_code_job_waiting_for_review_waits_for_you_and_is_counted() -> None:
    said = "review: 1 of 2 checks failed: pytest -q"
    text = inbox() + block("REQ-rev", "Fix the preview", status_line(State.REVIEW, at(5), said))
    drawn = render_dashboard(fleet(text))
    waiting = drawn[drawn.index("## Waiting for you") : drawn.index("## Waiting and running")]
    assert "REQ-rev" in waiting and said in waiting
    assert "reviews_open: 1" in drawn and "escalations_open: 1" in drawn
    answered = render_dashboard(fleet(text + "- decision: accept\n"))
    assert "reviews_open: 0" in answered
