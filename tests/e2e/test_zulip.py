"""Zulip both ways against a loopback Zulip on 127.0.0.1 (tests/support/fake_zulip.py): notices reach the
stream's topics, the person is @-mentioned only when asked, answers from the listed senders come back once
each, and nothing from the network (a stranger, a hostile message, a broken server) does harm or shows the
API key."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.fake_servers import ListLog
from tests.support.fake_zulip import FakeZulip
from vaultops.config import ZulipConfig
from vaultops.notify.check import zulip_findings
from vaultops.notify.message import Ask, Notice
from vaultops.notify.outbox import Outbox
from vaultops.notify.replies import ChatAnswer
from vaultops.notify.send import deliver, targets
from vaultops.notify.zulip import (
    FIRST_LOOK,
    MAX_CONTENT,
    MAX_TOPIC,
    Zulip,
    ZulipClient,
    ZulipError,
    ZulipTarget,
    zulip_client,
)
from vaultops.store.state import StateDB
from vaultops.workers.persona import persona_notice
from vaultops.workers.reports import ReportReader, worker_scope

BOT = "vaultops-bot@chat.example.com"
KEY = "zK3m9QpR2vX7tL0aB4nC8dE6fG1hJ5sW"  # the shape of a Zulip API key: 32 letters and digits
ANN = "ann@example.com"
STRANGER = "mallory@example.com"


@pytest.fixture
def state(tmp_path: Path) -> Iterator[StateDB]:
    db = StateDB(tmp_path / "state" / "state.db")
    yield db
    db.close()


@pytest.fixture
def server() -> Iterator[FakeZulip]:
    with FakeZulip(BOT, KEY) as fake:
        yield fake


def _config(server: FakeZulip, **over: Any) -> ZulipConfig:
    fields: dict[str, Any] = {
        "site": server.site,
        "email": BOT,
        "api_key": KEY,
        "stream": server.stream,
        "mention": "Ann Person",
        "senders": (ANN,),
    }
    return ZulipConfig.model_validate(fields | over)


def _escalation(request_id: str = "REQ-2026-05-04-0900-merge") -> Notice:
    ask = Ask(request_id, "b1nd", "obsidian://open?vault=v&file=inbox", whole=True)
    return Notice(
        f"inbox.md#{request_id}#escalated", f"v: {request_id} escalated (high)", "Asked: merge", ask
    )


def _answers(server: FakeZulip, state: StateDB, log: ListLog | None = None) -> list[ChatAnswer]:
    """What one pass reads, acknowledged."""
    zulip = Zulip(_config(server), state, log or ListLog())
    batch = zulip.fetch()
    zulip.ack(batch.next_anchor)
    return batch.answers


# --- sending -----------------------------------------------------------------------------------------


def test_a_notice_reaches_the_stream_and_topic_without_a_mention(server: FakeZulip) -> None:
    config = _config(server)
    target = ZulipTarget(zulip_client(config), config)
    target.send(Notice("budget#d#80", "v: 80 % of today's budget", "Spent $8.00 of $10.00."))
    (form,) = server.sent
    assert (form["type"], form["to"], form["topic"]) == ("stream", "ops", "vaultops")
    assert form["content"] == "**v: 80 % of today's budget**\nSpent $8.00 of $10.00."
    assert "@**" not in form["content"]
    assert target.id == f"zulip:127.0.0.1:{server.port}/ops" and KEY not in target.id + target.label


def test_an_escalation_mentions_the_person_and_goes_to_the_notices_own_topic(server: FakeZulip) -> None:
    config = _config(server)
    target = ZulipTarget(zulip_client(config), config)
    target.send(_escalation())
    target.send(Notice("worker:tabs:1", "Tab Fixer: done — pr_ready", "CI green", topic="Tab Fixer"))
    assert server.contents()[0].startswith("@**Ann Person** **v: REQ-2026-05-04-0900-merge escalated")
    assert not server.contents()[1].startswith("@")
    assert server.topics() == ["vaultops", "Tab Fixer"]
    unmentioned = _config(server, mention="")
    ZulipTarget(zulip_client(unmentioned), unmentioned).send(_escalation())
    assert server.contents()[2].startswith("**v: REQ-")


def test_mentions_in_a_notices_own_text_are_silenced(server: FakeZulip) -> None:
    config = _config(server)
    ZulipTarget(zulip_client(config), config).send(
        Notice("k", "@**all** look", "an agent wrote @**everyone** and @*admins* here", ask=_escalation().ask)
    )
    (content,) = server.contents()
    assert content.startswith("@**Ann Person** ")  # the one mention vaultops means
    assert content.count("@**") == 1 and "@_**all**" in content and "@_**everyone**" in content
    assert "@_*admins*" in content


def test_a_long_topic_and_a_long_message_are_cut_to_zulips_limits_with_an_ellipsis(server: FakeZulip) -> None:
    config = _config(server)
    ZulipTarget(zulip_client(config), config).send(Notice("k", "t", "x\0" * 20000, topic="a\nworker " * 20))
    (form,) = server.sent
    assert len(form["topic"]) <= MAX_TOPIC and form["topic"].endswith("…") and "\n" not in form["topic"]
    assert "\0" not in form["content"]
    assert len(form["content"]) == MAX_CONTENT and form["content"].endswith("…")


def test_a_server_that_refuses_a_notice_raises_a_zulip_error(server: FakeZulip) -> None:
    config = _config(server, stream="nowhere")
    with pytest.raises(ZulipError, match="does not exist"):
        ZulipTarget(zulip_client(config), config).send(_escalation())


def test_deliver_sends_each_notice_to_zulip_once_and_retries_a_failure_without_the_key(
    server: FakeZulip, state: StateDB
) -> None:
    log = ListLog()
    config = _config(server)
    Outbox(state).queue(_escalation(), now=0.0)
    server.fail_with = 502  # its message echoes the Authorization header
    assert deliver(state, [], log, zulip=config, now=0.0).failed == [_escalation().key]
    entry = Outbox(state).entry(_escalation().key)
    assert entry is not None and "502" in (entry.last_error or "") and KEY not in (entry.last_error or "")
    server.fail_with = None
    assert deliver(state, [], log, zulip=config, now=1e6).sent == 1
    assert deliver(state, [], log, zulip=config, now=2e6).sent == 0
    assert len(server.sent) == 1 and server.contents()[0].startswith("@**Ann Person** ")
    assert KEY not in "\n".join(f"{event} {fields}" for event, fields in log.lines)


def test_zulip_is_a_target_only_with_a_site_a_key_and_a_stream(server: FakeZulip) -> None:
    assert [t.id for t in targets([], zulip=_config(server))] == [f"zulip:127.0.0.1:{server.port}/ops"]
    for missing in ("site", "api_key", "stream"):
        assert targets([], zulip=_config(server, **{missing: ""})) == []


def test_a_worker_personas_notice_goes_to_its_own_topic(server: FakeZulip, state: StateDB) -> None:
    reader = ReportReader(worker_scope(str(Path.cwd())))
    (done,) = reader.feed("[DONE:pr_ready] CI green")
    named = persona_notice("tabs", "Tab Fixer", done)
    unnamed = persona_notice("tabs", None, done)
    assert named is not None and unnamed is not None
    assert (named.topic, unnamed.topic) == ("Tab Fixer", "tabs")
    outbox = Outbox(state)
    outbox.queue(named, now=0.0)
    assert deliver(state, [], ListLog(), zulip=_config(server), now=0.0).sent == 1
    assert server.topics() == ["Tab Fixer"]
    assert server.contents() == ["**Tab Fixer: done — pr_ready**\n[DONE:pr_ready] CI green"]


# --- reading answers ---------------------------------------------------------------------------------


def test_approvals_and_denials_from_a_listed_sender_become_answers(server: FakeZulip, state: StateDB) -> None:
    server.say(ANN, "approve REQ-2026-05-04-0900-merge", timestamp=1_770_000_001)
    server.say(ANN.upper(), "@**vaultops bot** deny REQ-2 not on a Friday", name="Ann P")
    server.say(ANN, "@_**vaultops bot|12** Approve PLAN-weekly.")
    server.say(ANN, "approve REQ-3 for this request")
    server.say(ANN, "/approve for this request REQ-4, thanks")
    got = _answers(server, state)
    assert [(a.request_id, a.verdict, a.comment, a.scope) for a in got] == [
        ("REQ-2026-05-04-0900-merge", "approve", "", "once"),
        ("REQ-2", "deny", "not on a Friday", "once"),
        ("PLAN-weekly", "approve", "", "once"),
        ("REQ-3", "approve", "", "request"),
        ("REQ-4", "approve", "thanks", "request"),
    ]
    assert got[0] == ChatAnswer(
        "REQ-2026-05-04-0900-merge",
        "approve",
        "",
        who="Ann Person",
        via="Zulip",
        date=1_770_000_001,
        topic="vaultops",  # where it was typed: the reply saying what it did goes there
    )
    assert got[1].who == "Ann P"
    assert server.asked("apply_markdown") == ["false"]  # the Markdown as typed, not HTML


def test_a_strangers_message_is_logged_and_the_bots_own_are_skipped(
    server: FakeZulip, state: StateDB
) -> None:
    config = _config(server)
    ZulipTarget(zulip_client(config), config).send(_escalation("REQ-9"))  # the bot posts into the stream
    server.say(BOT, "approve REQ-9", name="vaultops bot")
    server.say(STRANGER, "approve REQ-9", name="Mallory")
    server.say(ANN, "deny REQ-9")
    log = ListLog()
    assert [(a.request_id, a.verdict) for a in _answers(server, state, log)] == [("REQ-9", "deny")]
    ignored = log.events("zulip-ignored")
    assert [e["sender"] for e in ignored] == [STRANGER]
    assert "not in senders" in ignored[0]["why"]


def test_each_answer_is_returned_once_across_passes_and_restarts(tmp_path: Path, server: FakeZulip) -> None:
    db = StateDB(tmp_path / "state.db")
    server.say(ANN, "approve REQ-1")
    assert [a.request_id for a in _answers(server, db)] == ["REQ-1"]
    assert _answers(server, db) == []
    server.say(ANN, "deny REQ-2")
    db.close()
    db = StateDB(tmp_path / "state.db")  # a restart: a new Zulip on the same state.db
    assert [a.request_id for a in _answers(server, db)] == ["REQ-2"]
    assert _answers(server, db) == []
    anchors = server.asked("anchor")
    assert anchors[0] == "newest" and all(a.isdigit() for a in anchors[1:])
    assert server.asked("include_anchor")[1:] == ["false"] * 3
    db.close()


def test_fetch_without_ack_returns_the_same_again_and_ack_only_moves_forward(
    server: FakeZulip, state: StateDB
) -> None:
    zulip = Zulip(_config(server), state, ListLog())
    server.say(ANN, "approve REQ-1")
    first = zulip.fetch()
    assert zulip.fetch() == first and [a.request_id for a in first.answers] == ["REQ-1"]
    zulip.ack(first.next_anchor)
    assert first.next_anchor is not None
    zulip.ack(first.next_anchor - 1)  # an older batch acknowledged late does not replay
    zulip.ack(None)
    assert zulip.anchor == first.next_anchor
    assert zulip.fetch().answers == []


def test_the_first_read_takes_only_the_newest_messages_not_the_history(
    server: FakeZulip, state: StateDB
) -> None:
    for n in range(FIRST_LOOK + 15):
        server.say(ANN, f"approve REQ-{n}")
    got = _answers(server, state)
    assert [a.request_id for a in got] == [f"REQ-{n}" for n in range(15, FIRST_LOOK + 15)]


def test_an_empty_stream_stores_no_anchor_and_is_read_again_from_the_newest(
    server: FakeZulip, state: StateDB
) -> None:
    zulip = Zulip(_config(server), state, ListLog())
    batch = zulip.fetch()
    assert batch.answers == [] and batch.next_anchor is None
    zulip.ack(batch.next_anchor)
    server.say(ANN, "approve REQ-1")
    assert [a.request_id for a in zulip.fetch().answers] == ["REQ-1"]


# --- a broken or hostile server ----------------------------------------------------------------------


@pytest.mark.parametrize("code", [401, 500])
def test_a_failing_server_raises_a_zulip_error_without_the_key(
    server: FakeZulip, state: StateDB, code: int
) -> None:
    server.fail_with = code  # its message echoes the request's Authorization header
    client = zulip_client(_config(server))
    for call in (lambda: Zulip(_config(server), state, ListLog()).fetch(), client.me):
        with pytest.raises(ZulipError) as caught:
            call()
        text = str(caught.value)
        assert f"HTTP {code}" in text and KEY not in text
        assert "Basic " not in text or "REDACTED" in text


def test_a_wrong_key_garbage_and_no_server_raise_zulip_errors(server: FakeZulip, state: StateDB) -> None:
    wrong = _config(server, api_key="Wr0ngKeyWr0ngKeyWr0ngKeyWr0ngKey")
    with pytest.raises(ZulipError, match="Invalid API key") as caught:
        ZulipTarget(zulip_client(wrong), wrong).send(_escalation())
    assert "Wr0ngKey" not in str(caught.value)
    server.garbage = True
    with pytest.raises(ZulipError) as caught:
        Zulip(_config(server), state, ListLog()).fetch()
    assert KEY not in str(caught.value)
    server.garbage = False
    server.raw_messages = {"not": "a list"}
    with pytest.raises(ZulipError, match="no list of messages"):
        Zulip(_config(server), state, ListLog()).fetch()
    dead = ZulipClient("http://127.0.0.1:9", BOT, KEY, timeout=2.0)
    with pytest.raises(ZulipError) as caught:
        dead.me()
    assert KEY not in str(caught.value) and KEY not in repr(dead)


def test_hostile_messages_do_no_harm(server: FakeZulip, state: StateDB) -> None:
    server.say(ANN, "approve REQ-1 " + "x" * 1_000_000)  # longer than Zulip allows: not a real message
    server.say(ANN, "@**approve REQ-2** deny REQ-3 no")  # a "name" that reads as an approval
    server.say(ANN, "@**bot** @**approve REQ-4**")
    server.say(ANN, "> approve REQ-5\nI agree with that")  # the id is in a quote: not this answer
    server.say(ANN, "@_**Bob|3** [said](https://chat/#narrow/near/1):\n```quote\napprove REQ-6\n```\nhm")
    server.say(ANN, "@_**Bob|3** [said](https://chat/#narrow/near/1):\n```quote\nREQ-7?\n```\ndeny REQ-7 no")
    server.say(ANN, "approve REQ-8", stream="elsewhere")
    got = _answers(server, state)
    assert [(a.request_id, a.verdict) for a in got] == [("REQ-3", "deny"), ("REQ-7", "deny")]


def test_messages_with_wrong_types_are_skipped_and_the_rest_still_count(
    server: FakeZulip, state: StateDB
) -> None:
    good = {
        "id": 500,
        "type": "stream",
        "sender_email": ANN,
        "sender_full_name": "Ann",
        "display_recipient": "ops",
        "subject": "vaultops",
        "content": "approve REQ-1",
        "timestamp": 1_770_000_000,
    }
    server.raw_messages = [
        None,
        "approve REQ-0",
        {**good, "id": "501"},
        {**good, "id": True},
        {**good, "id": 502, "sender_email": [ANN]},
        {**good, "id": 503, "content": {"text": "approve REQ-2"}},
        {**good, "id": 504, "timestamp": "yesterday"},
        {**good, "id": 505, "sender_full_name": None, "content": "deny REQ-3"},
        {**good, "id": 506, "display_recipient": [{"email": ANN}]},  # a direct message's recipients
        good,
    ]
    zulip = Zulip(_config(server), state, ListLog())
    batch = zulip.fetch()
    assert [(a.request_id, a.who) for a in batch.answers] == [("REQ-1", "Ann"), ("REQ-3", ANN)]
    assert batch.next_anchor == 506


_ALLOWED_NAME = "allowed-"
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_CONTENT = st.sampled_from(
    ["approve REQ-1", "deny REQ-2 why", "@**x** approve PLAN-3", "> approve REQ-4", "approve", "hello"]
)
_SENDER = st.sampled_from([ANN, ANN, ANN, ANN.upper(), STRANGER, BOT, "", None, 7, [ANN]])


def _mostly(usual: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``usual`` three times in four, else any JSON: most messages are well formed enough to be read."""
    return st.integers(0, 3).flatmap(lambda n: usual if n else _JSON)


@st.composite
def _messages(draw: st.DrawFn) -> list[Any]:
    found: list[Any] = []
    for n in range(draw(st.integers(0, 8))):
        if not draw(st.integers(0, 4)):
            found.append(draw(_JSON))
            continue
        message: dict[str, Any] = {
            "id": draw(_mostly(st.integers(-5, 10**12))),
            "sender_email": draw(_SENDER),
            "sender_full_name": f"{_ALLOWED_NAME}{n}",
            "display_recipient": draw(st.sampled_from(["ops", "ops", "OPS", "other", None])),
            "content": draw(_mostly(_CONTENT | st.text(max_size=40))),
            "timestamp": draw(_mostly(st.integers(0, 2**40))),
        }
        if not draw(st.integers(0, 3)):
            del message[draw(st.sampled_from(sorted(message)))]
        found.append(message)
    return found


def test_fetch_never_raises_but_zulip_error_nor_answers_for_an_unlisted_sender(server: FakeZulip) -> None:
    answered: list[ChatAnswer] = []

    @settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(messages=_messages())
    def check(messages: list[Any]) -> None:
        server.raw_messages = messages
        with tempfile.TemporaryDirectory() as tmp:
            db = StateDB(Path(tmp) / "state.db")
            try:
                batch = Zulip(_config(server), db, ListLog()).fetch()
            except ZulipError:
                return
            finally:
                db.close()
        for answer in batch.answers:
            if not answer.who.startswith(_ALLOWED_NAME):  # no name: signed with the address
                assert answer.who.casefold() == ANN.casefold()
                continue
            source = messages[int(answer.who.removeprefix(_ALLOWED_NAME))]
            assert isinstance(source, dict) and isinstance(source["sender_email"], str)
            assert source["sender_email"].casefold() == ANN.casefold()
            assert answer.via == "Zulip" and isinstance(answer.date, int)
        answered.extend(batch.answers)

    check()
    assert answered, "no example was an answer: the property was not exercised"


# --- doctor ------------------------------------------------------------------------------------------


def test_doctor_asks_who_the_bot_is_and_sends_nothing(server: FakeZulip) -> None:
    found = list(zulip_findings(_config(server), key_committed=False, timeout=5.0))
    assert found == [
        (
            True,
            f"notify: Zulip bot vaultops bot answers on 127.0.0.1:{server.port}; stream ops "
            "(nothing was sent)",
        )
    ]
    assert [(method, path) for method, path, _ in server.calls] == [("GET", "users/me")] and not server.sent
    assert list(zulip_findings(ZulipConfig(), key_committed=False, timeout=5.0)) == []


def test_doctor_says_how_to_fix_each_problem_and_never_shows_the_key(server: FakeZulip) -> None:
    committed = list(zulip_findings(_config(server), key_committed=True, timeout=5.0))
    assert committed[0][0] is False and "config.toml" in committed[0][1] and "new key" in committed[0][1]
    assert committed[-1][0] is True  # still a working bot: only where its key is kept is wrong
    server.calls.clear()
    empty = list(zulip_findings(ZulipConfig(site=server.site), key_committed=False, timeout=5.0))
    assert [fine for fine, _ in empty] == [False] * 4
    assert all(" — " in line for _, line in empty)
    for what, line in zip(
        ("email", "api_key", "stream", "senders"), (line for _, line in empty), strict=True
    ):
        assert f"has no {what}" in line
    assert server.calls == []  # nothing to ask a server with
    wrong = _config(server, api_key="Wr0ngKeyWr0ngKeyWr0ngKeyWr0ngKey")
    ((fine, line),) = zulip_findings(wrong, key_committed=False, timeout=5.0)
    assert not fine and "Invalid API key" in line and "Wr0ngKey" not in line
    no_senders = list(zulip_findings(_config(server, senders=()), key_committed=False, timeout=5.0))
    assert [fine for fine, _ in no_senders] == [False, True] and "senders" in no_senders[0][1]


# --- through whole passes: the vault's Zulip --------------------------------------------------------------


def test_an_escalation_is_told_in_the_topic_and_an_answer_there_runs_it_once(
    tmp_path: Path, runs: Path
) -> None:
    import time as clock

    from tests.support.helpers import INBOX, ROTATE, vault_with
    from vaultops.engine.tick import tick
    from vaultops.model import State
    from vaultops.scan.note import parse_note
    from vaultops.vault import Vault

    with FakeZulip(BOT, KEY) as server:
        local = (
            f'[notify.zulip]\nsite = "{server.site}"\nemail = "{BOT}"\napi_key = "{KEY}"\nstream = "ops"\n'
            f'mention = "Ann Person"\nsenders = ["{ANN}"]\n'
        )
        vault = vault_with(tmp_path / "v", f"# Inbox\n\n{ROTATE}", local, fake_profiles=True)
        tick(Vault.open(vault), wait_settle=False)
        [content] = server.contents()
        assert server.topics() == ["vaultops"]
        assert content.startswith("@**Ann Person** **v: REQ-rotate escalated (blocked)**"), content
        later = int(clock.time()) + 1
        server.say("mallory@example.com", "approve REQ-rotate", name="Mallory", timestamp=later)
        server.say(ANN, "approve REQ-rotate — go ahead", timestamp=later)
        report = tick(Vault.open(vault), wait_settle=False)
        assert any("Zulip: ignored a message from mallory@example.com" in w for w in report.warnings)
        text = (vault / INBOX).read_text()
        assert "- decision: approve — via Zulip (Ann Person): go ahead" in text and "Mallory" not in text
        [request] = parse_note(INBOX, text.encode()).requests
        assert request.state is State.DONE and runs.read_text().split() == ["REQ-rotate"]
        tick(Vault.open(vault), wait_settle=False)
        assert runs.read_text().split() == ["REQ-rotate"], "each answer is read once"
