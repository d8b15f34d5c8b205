"""Notifiers against real servers on 127.0.0.1: apprise's ``json://`` into a JSON sink, and a fake Telegram
Bot API.  Nothing sent twice, nothing lost, secrets never in a log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_servers import FakeBotAPI, JsonSink, ListLog
from tests.support.notices import escalation
from vaultops.config import TelegramConfig
from vaultops.notify.outbox import Outbox, retry_delay
from vaultops.notify.send import deliver, url_secrets
from vaultops.notify.telegram import Bot, Telegram, TelegramError
from vaultops.store.state import StateDB

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
ME = 4242  # the person's chat
STRANGER = 666


@pytest.fixture
def state(tmp_path: Path) -> StateDB:
    db = StateDB(tmp_path / "state" / "state.db")
    yield db  # type: ignore[misc]
    db.close()


def _telegram(api: FakeBotAPI, **over: Any) -> TelegramConfig:
    settings: dict[str, Any] = {"token": TOKEN, "chat_ids": [ME], "api_base": api.base, "poll_timeout": 0}
    return TelegramConfig.model_validate({**settings, **over})


# --- apprise json:// -----------------------------------------------------------------------------------


def test_each_notice_reaches_a_json_server_exactly_once(state: StateDB) -> None:
    log = ListLog()
    outbox = Outbox(state)
    first, second = escalation("REQ-a"), escalation("REQ-b")
    with JsonSink() as sink:
        assert outbox.queue(first) and not outbox.queue(first) and outbox.queue(second)
        got = deliver(state, [sink.url()], log)
        assert (got.sent, got.failed) == (2, [])
        assert not outbox.queue(first)
        again = deliver(state, [sink.url()], log)
        assert (again.sent, again.failed) == (0, [])
        bodies = [body for _, body in sink.received]
    assert len(bodies) == 2
    assert [b["title"] for b in bodies] == [first.title, second.title]
    assert [b["message"] for b in bodies] == [first.body, second.body]
    assert outbox.pending() == [] and len(log.events("notified")) == 2


def test_a_server_that_fails_once_gets_the_notice_on_the_next_round_and_never_again(state: StateDB) -> None:
    log = ListLog()
    notice = escalation()
    Outbox(state).queue(notice, now=1000.0)
    with JsonSink(codes=[500]) as sink:
        first = deliver(state, [sink.url()], log, now=1000.0)
        assert (first.sent, first.failed) == (0, [notice.key])
        entry = Outbox(state).entry(notice.key)
        assert entry is not None and entry.attempts == 1 and "500" in (entry.last_error or "")
        assert any("not delivered" in f["message"] for f in log.events("warning"))
        early = deliver(state, [sink.url()], log, now=1001.0)  # backing off: not tried yet
        assert (early.sent, early.failed, len(sink.received)) == (0, [], 1)
        later = 1000.0 + retry_delay(1)
        second = deliver(state, [sink.url()], log, now=later)
        assert (second.sent, second.failed) == (1, [])
        for _ in range(3):
            assert deliver(state, [sink.url()], log, now=later + 10_000).sent == 0
        assert sink.messages() == [notice.body, notice.body]  # the failed try, then the one that took


def test_a_target_that_had_it_is_not_sent_it_again_while_another_catches_up(state: StateDB) -> None:
    log = ListLog()
    notice = escalation()
    Outbox(state).queue(notice, now=0.0)
    with JsonSink() as good, JsonSink(codes=[500, 500]) as flaky:
        urls = [good.url("/a"), flaky.url("/b")]
        assert deliver(state, urls, log, now=0.0).failed == [notice.key]
        assert deliver(state, urls, log, now=1e6).failed == [notice.key]
        assert deliver(state, urls, log, now=2e6).sent == 1
        assert len(good.received) == 1 and len(flaky.received) == 3


def test_a_dead_server_is_tried_once_per_round_not_once_per_notice(state: StateDB) -> None:
    log = ListLog()
    outbox = Outbox(state)
    for i in range(5):
        outbox.queue(escalation(f"REQ-{i}"), now=0.0)
    with JsonSink(codes=[500] * 10) as sink:
        got = deliver(state, [sink.url()], log, now=0.0)
        assert len(got.failed) == 5 and len(sink.received) == 1
    entries = [outbox.entry(f"_System/COO-Inbox.md#REQ-{i}#escalated") for i in range(5)]
    assert all(e is not None and e.attempts == 1 for e in entries)


def test_a_failing_url_with_a_token_never_shows_the_token(
    state: StateDB, capfd: pytest.CaptureFixture[str]
) -> None:
    secret = "Zq8Xv3Kp9Lm2Nb7Hc4Rt6Ys1"
    log = ListLog()
    notice = escalation()
    Outbox(state).queue(notice, now=0.0)
    with JsonSink(codes=[500] * 10) as sink:
        urls = [
            f"json://user:{secret}pw@127.0.0.1:{sink.port}/hook/{secret}?apikey={secret}x",
            f"nosuchscheme://{secret}@127.0.0.1/{secret}",  # apprise's own error quotes this URL
            f"json://127.0.0.1:1/{secret}",  # nothing listens: a connection error
        ]
        got = deliver(state, urls, log, now=0.0)
    assert got.failed == [notice.key]
    entry = Outbox(state).entry(notice.key)
    assert entry is not None and entry.last_error
    logged = log.text()
    for shown in (logged, entry.last_error):
        assert secret not in shown
        assert "urls[0]" in shown and "urls[1]" in shown and "urls[2]" in shown
    assert "not a URL apprise can use" in logged
    assert {secret, f"{secret}x"} <= set(url_secrets(urls[0]))
    out, err = capfd.readouterr()
    assert secret not in out + err  # apprise's own log lines were captured, not printed


def test_an_error_that_quotes_the_url_is_redacted(state: StateDB, monkeypatch: pytest.MonkeyPatch) -> None:
    import apprise

    def broken(self: apprise.Apprise, **_: Any) -> bool:
        raise RuntimeError(f"boom while posting to {url}")  # as a plugin's bug might say

    secret = "Zq8Xv3Kp9Lm2Nb7Hc4Rt6Ys1"
    url = f"json://127.0.0.1:1/hook/{secret}?key=hunter2hunter2"
    monkeypatch.setattr(apprise.Apprise, "notify", broken)
    log = ListLog()
    notice = escalation()
    Outbox(state).queue(notice, now=0.0)
    assert deliver(state, [url], log, now=0.0).failed == [notice.key]
    entry = Outbox(state).entry(notice.key)
    assert entry is not None and "boom while posting" in (entry.last_error or "")
    for shown in (log.text(), entry.last_error or ""):
        assert secret not in shown and "hunter2hunter2" not in shown and "[REDACTED:" in shown


# --- Telegram -----------------------------------------------------------------------------------------


def test_notices_go_to_the_allowed_chats_through_the_configured_api_base(state: StateDB) -> None:
    log = ListLog()
    notice = escalation()
    Outbox(state).queue(notice)
    with FakeBotAPI(TOKEN) as api, JsonSink() as sink:
        settings = _telegram(api, chat_ids=[ME, -100200])
        got = deliver(state, [sink.url()], log, telegram=settings)
        assert (got.sent, got.failed) == (1, [])
        assert deliver(state, [sink.url()], log, telegram=settings).sent == 0
        assert [m["chat_id"] for m in api.sent] == [ME, -100200]
        assert api.sent[0]["text"] == f"{notice.title}\n\n{notice.body}"
        assert len(sink.received) == 1


def test_a_bot_api_that_fails_is_retried_and_its_errors_hide_the_token(state: StateDB) -> None:
    log = ListLog()
    notice = escalation()
    Outbox(state).queue(notice, now=0.0)
    with FakeBotAPI(TOKEN) as api:
        api.fail_with = 502  # its description echoes the path, token and all
        assert deliver(state, [], log, telegram=_telegram(api), now=0.0).failed == [notice.key]
        entry = Outbox(state).entry(notice.key)
        assert entry is not None and "502" in (entry.last_error or "")
        api.fail_with = None
        assert deliver(state, [], log, telegram=_telegram(api), now=1e6).sent == 1
        assert len(api.sent) == 1
    secret = TOKEN.split(":")[1]
    assert secret not in log.text() and secret not in (entry.last_error or "")
    with pytest.raises(TelegramError) as caught:
        Bot(TOKEN, "http://127.0.0.1:1").send(ME, "hi")
    assert secret not in str(caught.value) and TOKEN not in repr(Bot(TOKEN))


def test_replies_from_allowed_chats_are_returned_once_and_others_are_logged(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    log = ListLog()
    with FakeBotAPI(TOKEN) as api:
        api.say(ME, "approve REQ-x")
        api.say(ME, "deny REQ-y because it is Friday", date=1_770_000_100)
        api.say(ME, "what is going on?")
        api.say(STRANGER, "approve REQ-x", first_name="Mallory")
        api.say(-100300, "Approve REQ-z", first_name="Bob", title="Ops")
        db = StateDB(path)
        bot = Telegram(_telegram(api, chat_ids=[ME, -100300]), db, log)
        replies = bot.poll()
        got = [(r.request_id, r.verdict, r.comment, r.who, r.via) for r in replies]
        assert got == [
            ("REQ-x", "approve", "", "Ann", "Telegram"),
            ("REQ-y", "deny", "because it is Friday", "Ann", "Telegram"),
            ("REQ-z", "approve", "", "Bob in Ops", "Telegram"),
        ]
        assert replies[1].date == 1_770_000_100
        ignored = log.events("telegram-ignored")
        assert [(i["chat_id"], i["why"]) for i in ignored] == [
            (ME, "not approve/deny REQ-…"),
            (STRANGER, "chat not in chat_ids"),
        ]
        assert ignored[1]["who"] == "Mallory"
        assert bot.poll() == []  # each once
        db.close()

        db = StateDB(path)  # a restart, on the same state.db: the offset was kept
        bot = Telegram(_telegram(api, chat_ids=[ME, -100300]), db, log)
        assert bot.poll() == []
        last = api.say(ME, "deny REQ-w", reply_to="REQ-q is escalated.")
        assert [r.request_id for r in bot.poll()] == ["REQ-w"]
        assert bot.poll() == []
        db.close()
        asked = api.offsets_asked()
    assert asked[0] is None and asked[1:] == sorted(asked[1:]) and asked[-1] == last + 1


def test_fetch_without_ack_returns_the_same_replies_again(state: StateDB) -> None:
    with FakeBotAPI(TOKEN) as api:
        api.say(ME, "approve REQ-x")
        bot = Telegram(_telegram(api), state, ListLog())
        batch = bot.fetch()
        assert [r.request_id for r in batch.replies] == ["REQ-x"]
        assert [r.request_id for r in bot.fetch().replies] == ["REQ-x"]  # not acknowledged yet
        bot.ack(batch.next_offset)
        assert bot.fetch().replies == [] and bot.fetch().next_offset is None


def test_a_bot_api_that_cannot_be_read_is_logged_not_raised(state: StateDB) -> None:
    log = ListLog()
    with FakeBotAPI(TOKEN) as api:
        api.fail_with = 500
        assert Telegram(_telegram(api), state, log).poll() == []
    warnings = log.events("warning")
    assert len(warnings) == 1 and "cannot read replies" in warnings[0]["message"]
    assert TOKEN.split(":")[1] not in log.text()
