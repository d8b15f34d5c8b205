"""The pure parts of answering from chat: what a press or a typed answer does to a note
(``engine.heard``), the scope words, the daily-note lines that make reminders and digests go out once
(``render.markers``), and the digest's text.  Property-based where the input is open-ended."""

from __future__ import annotations

from datetime import datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultops.engine.heard import decision_line, hear
from vaultops.lines import parse_answer
from vaultops.model import State
from vaultops.notify.digest import DigestFacts, Listed, digest_notice
from vaultops.notify.message import SHORTENED, binding, escalation_notice
from vaultops.notify.replies import ChatAnswer, Press, parse_reply
from vaultops.render.markers import Reminded, digest_lines, read_markers, reminder_lines
from vaultops.scan.note import parse_note

AT = "2026-05-04T08:31:02+10:00"
NOTE = (
    "# Inbox\n\n## REQ-a\n- ready: yes\nRotate the key.\n"
    f"- status: escalated @ {AT} — blocked: key rotation\n\n"
    "## REQ-b\n- ready: yes\nSomething else.\n- status: done @ 2026-05-04T08:00:00+10:00\n"
)
SENT = int(datetime.fromisoformat(AT).timestamp()) + 5
NOW = datetime.fromisoformat(AT) + timedelta(minutes=10)


def note():  # type: ignore[no-untyped-def]
    return parse_note("_System/COO-Inbox.md", NOTE.encode())


def true_binding() -> str:
    [a] = [r for r in note().requests if r.id == "REQ-a"]
    return binding(a.file, a.id, a.text_hash, AT)


def press(verdict: str = "approve", rid: str = "REQ-a", bound: str = "", sent: int = SENT) -> ChatAnswer:
    p = Press(bound or true_binding(), sent, "q1", 4242, 7, "text")
    return ChatAnswer(rid, verdict, "", "Ann", "Telegram button", 0, press=p)  # type: ignore[arg-type]


def test_a_bound_press_becomes_the_persons_signed_decision() -> None:
    heard = hear(note(), [press()], NOW, 86400)
    [insert] = heard.inserts
    assert insert.lines == ("- decision: approve — via Telegram button (Ann)",)
    assert insert.expect == frozenset({State.ESCALATED})
    [told] = heard.presses
    assert told.insert is insert and told.toast.startswith("Approved once")


def test_a_press_does_nothing_when_anything_it_was_bound_to_moved() -> None:
    cases = {
        "older than 1 d": press(sent=SENT - 2 * 86400),
        "has changed since": press(bound="0123456789abcdef"),
        "not in its note": press(rid="REQ-gone"),
        "already decided: it is done now": press(rid="REQ-b"),
    }
    for why, answer in cases.items():
        heard = hear(note(), [answer], NOW + timedelta(days=1) if "1 d" in why else NOW, 86400)
        assert heard.inserts == [], why
        assert why in heard.presses[0].toast, (why, heard.presses[0].toast)


def test_only_the_first_of_several_presses_counts() -> None:
    heard = hear(note(), [press(), press("deny"), press()], NOW, 86400)
    assert len(heard.inserts) == 1
    assert [p.insert is not None for p in heard.presses] == [True, False, False]
    assert all("already decided, by Ann" in p.toast for p in heard.presses[1:])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["approve", "deny"]),
            st.sampled_from(["REQ-a", "REQ-b", "REQ-c"]),
            st.booleans(),  # the true binding, or a made-up one
            st.integers(min_value=-3 * 86400, max_value=3600),  # when it was sent, from SENT
        ),
        max_size=6,
    )
)
def test_presses_decide_at_most_once_and_only_what_they_were_bound_to(
    presses: list[tuple[str, str, bool, int]],
) -> None:
    answers = [press(v, rid, "" if real else "feedfacefeedface", SENT + d) for v, rid, real, d in presses]
    heard = hear(note(), answers, NOW, 86400)
    assert len(heard.inserts) <= 1
    assert len(heard.presses) == len(answers), "every press is answered"
    for told, (verdict, rid, real, delta) in zip(heard.presses, presses, strict=True):
        if told.insert is not None:
            assert rid == "REQ-a" and real and NOW.timestamp() - (SENT + delta) <= 86400
            assert told.insert.lines == (f"- decision: {verdict} — via Telegram button (Ann)",)


def test_typed_answers_keep_working_and_name_their_scope() -> None:
    typed = ChatAnswer("REQ-a", "approve", "go", "Ann", "Zulip", SENT, scope="request")
    heard = hear(note(), [typed], NOW, 86400)
    [insert] = heard.inserts
    assert insert.lines == ("- decision: approve for this request — via Zulip (Ann): go",)
    answer = parse_answer(insert.lines[0][2:], 9)
    assert answer is not None and answer.scope == "request" and answer.value == "approve"
    early = ChatAnswer("REQ-a", "approve", "", "Ann", "Telegram", SENT - 3600)
    assert hear(note(), [early], NOW, 86400).inserts == [], "an answer from before the escalation"


@given(st.sampled_from(["approve", "deny"]), st.sampled_from(["once", "request"]), st.text(max_size=40))
def test_a_decision_line_reads_back_as_the_same_answer(verdict: str, scope: str, comment: str) -> None:
    comment = " ".join(comment.split())
    answer = ChatAnswer("REQ-a", verdict, comment, "Ann", "Telegram", 0, scope=scope)  # type: ignore[arg-type]
    back = parse_answer(decision_line(answer)[2:], 1)
    assert back is not None and back.value == verdict
    assert back.scope == (scope if verdict == "approve" else "once")


def test_scope_words_in_chat() -> None:
    assert parse_reply("approve REQ-a for this request").scope == "request"  # type: ignore[union-attr]
    assert parse_reply("Approve for this request REQ-a").scope == "request"  # type: ignore[union-attr]
    assert parse_reply("approve REQ-a once").scope == "once"  # type: ignore[union-attr]
    assert parse_reply("approve REQ-a for everything").scope == "once"  # type: ignore[union-attr]
    assert parse_reply("deny REQ-a for this request").scope == "once"  # type: ignore[union-attr]


ids = st.from_regex(r"(REQ|PLAN)-[A-Za-z0-9._-]{1,20}", fullmatch=True)
hosts = st.from_regex(r"[A-Za-z0-9._-]{1,12}", fullmatch=True)


@given(ids, hosts, st.text(max_size=60), st.text(max_size=30))
def test_a_reminder_line_reads_back_as_the_escalation_it_reminded(
    rid: str, host: str, heading: str, agent: str
) -> None:
    when = datetime.fromisoformat(AT)
    lines = reminder_lines(when, agent or "a", host, "_System/COO-Inbox.md", heading, rid, AT)
    assert read_markers(lines).reminded == {Reminded(rid, AT): host}


@given(hosts, st.text(max_size=80))
def test_a_digest_line_reads_back_as_its_day_and_machine(host: str, summary: str) -> None:
    when = datetime.fromisoformat(AT)
    markers = read_markers(digest_lines(when, "agent", host, " ".join(summary.split())))
    assert markers.digests == {"2026-05-04": host}


def test_lines_that_only_look_like_markers_are_not_markers() -> None:
    typed = ["- reminded on host1 · escalated at x", "- digest sent on host1", "digest sent on h · 2026-01-0"]
    markers = read_markers(typed)
    assert markers.reminded == {} and markers.digests == {}


def test_the_digest_lists_oldest_first_with_links_and_says_the_rest() -> None:
    inbox = "_System/COO-Inbox.md"
    waiting = [Listed(f"REQ-{i}", inbox, f"2026-05-0{1 + i % 9} 08:00", "why") for i in range(25)]
    failed = [Listed("REQ-x", "executor-queue/fix.md", "2026-05-04 07:00", "exit 1", "error")]
    facts = DigestFacts("2026-05-04", "vps1", waiting, failed, 1.5, 10.0, ["worker-code: offline"], ["tidy"])
    body = digest_notice("Vault", facts).body
    assert body.startswith("Waiting for you (25), oldest first:\n- REQ-0 since 2026-05-01 08:00: why")
    assert "obsidian://open?vault=Vault&file=_System%2FCOO-Inbox" in body and "… and 5 more" in body
    assert "- REQ-x error since 2026-05-04 07:00: exit 1" in body
    assert "Spent today on vps1: $1.50 of $10.00." in body
    assert "Unhealthy profiles: worker-code: offline" in body and "Workers gone stale: tidy" in body
    assert digest_notice("Vault", facts).key == "digest#2026-05-04"


def test_an_escalation_that_shows_everything_can_be_approved_from_the_message_and_one_cut_cannot() -> None:
    base = {
        "vault_name": "V", "rel": "_System/COO-Inbox.md", "request_id": "REQ-a", "state": "escalated",
        "safety_class": "high", "reasons": ["high: asks to change"], "proposed": "Approve to run it once",
        "bound": "0123456789abcdef",
    }  # fmt: skip
    whole = escalation_notice(asked="Restart the web service.", **base)  # type: ignore[arg-type]
    assert whole.ask is not None and whole.ask.whole and SHORTENED not in whole.body
    cut = escalation_notice(asked="word " * 100, **base)  # type: ignore[arg-type]
    assert cut.ask is not None and not cut.ask.whole and SHORTENED in cut.body
    quoted = escalation_notice(asked="Run `gh pr merge 12 --body …`", **base)  # type: ignore[arg-type]
    assert quoted.ask is not None and not quoted.ask.whole, "an ellipsis may be a cut made upstream"
    secret = escalation_notice(asked="Use sk_live_51HxYzAbCdEfGhIjKlMnOpQr to pay", **base)  # type: ignore[arg-type]
    assert secret.ask is not None and not secret.ask.whole, "a redacted message did not show everything"


def test_a_notice_redacted_on_its_way_out_says_it_did_not_show_everything() -> None:
    notice = escalation_notice(
        vault_name="V", rel="_System/COO-Inbox.md", request_id="REQ-a", state="escalated",
        asked="Post to https://hooks.example/T000/B000/XyZzY1234567890abcdefgh", safety_class="high",
        reasons=[], proposed="Approve to run it once", bound="0123456789abcdef",
    )  # fmt: skip
    secret = "XyZzY1234567890abcdefgh"
    assert notice.ask is not None and notice.ask.whole, "nothing looked secret to the notice itself"
    sent = notice.redacted([secret])
    assert secret not in sent.body and sent.ask is not None and not sent.ask.whole
    assert SHORTENED in sent.body, "so a press on it cannot approve, whatever the client sends"
