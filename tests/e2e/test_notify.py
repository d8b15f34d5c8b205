"""Notifiers against real servers on 127.0.0.1: apprise's ``json://`` into a JSON sink, and a fake Telegram
Bot API.  Nothing sent twice, nothing lost, secrets never in a log; the pure message rendering and reply
grammar by property."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.fake_servers import FakeBotAPI, JsonSink, ListLog
from vaultops.base.errors import ConfigError
from vaultops.base.redact import redact
from vaultops.config import TelegramConfig, load_config
from vaultops.notify.message import (
    ASKED_LIMIT,
    Notice,
    auth_failure_notice,
    budget_notice,
    escalation_notice,
    obsidian_link,
    one_line,
    shorten,
)
from vaultops.notify.outbox import Outbox, retry_delay
from vaultops.notify.replies import Parsed, parse_reply, writable
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


def _escalation(request_id: str = "REQ-2026-05-04-0900-merge", state: str = "escalated") -> Notice:
    return escalation_notice(
        vault_name="Work Vault",
        rel="_System/COO-Inbox.md",
        request_id=request_id,
        state=state,
        asked="Merge PR 12 on the shop repo and deploy it.",
        safety_class="external-write",
        reasons=["merges a pull request", "deploys"],
        proposed="gh pr merge 12",
    )


def _telegram(api: FakeBotAPI, **over: Any) -> TelegramConfig:
    settings: dict[str, Any] = {"token": TOKEN, "chat_ids": [ME], "api_base": api.base, "poll_timeout": 0}
    return TelegramConfig.model_validate({**settings, **over})


# --- the message (pure) -----------------------------------------------------------------------------


def test_an_escalation_says_what_was_asked_why_and_where() -> None:
    notice = _escalation()
    assert notice.key == "_System/COO-Inbox.md#REQ-2026-05-04-0900-merge#escalated"
    assert notice.title == "Work Vault: REQ-2026-05-04-0900-merge escalated (external-write)"
    lines = notice.body.splitlines()
    assert lines[0] == "REQ-2026-05-04-0900-merge is escalated."
    assert lines[1] == "Asked: Merge PR 12 on the shop repo and deploy it."
    assert lines[2] == "Class: external-write — merges a pull request; deploys"
    assert lines[3] == "Proposed: gh pr merge 12"
    assert '"approve REQ-2026-05-04-0900-merge"' in lines[4]
    assert lines[-1] == "obsidian://open?vault=Work%20Vault&file=_System%2FCOO-Inbox"
    assert _escalation(state="interrupted").key != notice.key


def test_a_long_request_is_shortened_on_a_word_and_secrets_never_leave() -> None:
    asked = "Check the deploy with key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 " + "word " * 100
    notice = escalation_notice(
        vault_name="v",
        rel="a.md",
        request_id="REQ-1",
        state="escalated",
        asked=asked,
        safety_class="secrets",
        reasons=["password=hunter2hunter2 in the text"],
        proposed="none",
    )
    line = notice.body.splitlines()[1].removeprefix("Asked: ")
    assert line.endswith("word…") and len(line) <= ASKED_LIMIT
    assert "sk-ant-" not in notice.body and "hunter2hunter2" not in notice.body
    assert "[REDACTED:anthropic]" in line


def test_budget_and_auth_notices_have_one_key_per_occasion() -> None:
    warn = budget_notice(vault_name="v", day="2026-05-04", spent_usd=8.0, budget_usd=10.0)
    assert warn.key == "budget#2026-05-04#80" and "$8.00 of the $10.00" in warn.body
    full = budget_notice(vault_name="v", day="2026-05-04", spent_usd=10.0, budget_usd=10.0, percent=100)
    assert full.key != warn.key and "Heavy work waits" in full.body
    auth = auth_failure_notice(
        vault_name="v", profile="worker-code", detail="401 token=abcdefghijk", since="2026-05-04"
    )
    assert auth.key == "auth#worker-code#2026-05-04" and "abcdefghijk" not in auth.body


def test_a_filename_with_undecodable_bytes_links_to_those_bytes() -> None:
    rel = b"notes/caf\xe9.md".decode("utf-8", "surrogateescape")
    assert obsidian_link("v", rel).endswith("file=notes%2Fcaf%E9")


def _link_parts(link: str) -> dict[str, str]:
    assert link.startswith("obsidian://open?")
    query = link.removeprefix("obsidian://open?")
    pairs = [part.split("=", 1) for part in query.split("&")]
    assert [k for k, _ in pairs] == ["vault", "file"]
    return {k: unquote(v, errors="surrogateescape") for k, v in pairs}


_names = st.text(min_size=1) | st.binary(min_size=1).map(lambda b: b.decode("utf-8", "surrogateescape"))


@given(vault=_names, rel=_names, md=st.booleans())
def test_the_link_always_decodes_back_to_the_note(vault: str, rel: str, md: bool) -> None:
    path = rel + ".md" if md else rel
    parts = _link_parts(obsidian_link(vault, path))
    assert parts == {"vault": vault, "file": path.removesuffix(".md")}
    assert not re.search(r"\s", obsidian_link(vault, path))


@given(text=st.text(), limit=st.integers(min_value=2, max_value=300))
def test_shortened_text_is_the_text_or_a_prefix_of_it_and_an_ellipsis(text: str, limit: int) -> None:
    short = shorten(text, limit)
    assert short == text or (short.endswith("…") and text.startswith(short[:-1]) and len(short) <= limit)
    if len(text) <= limit:
        assert short == text


@given(asked=st.text(), request_id=st.from_regex(r"\AREQ-[A-Za-z0-9._-]{1,30}\Z"))
def test_the_asked_line_is_a_prefix_of_the_request(asked: str, request_id: str) -> None:
    notice = escalation_notice(
        vault_name="v",
        rel="x.md",
        request_id=request_id,
        state="escalated",
        asked=asked,
        safety_class="c",
        reasons=[],
        proposed="p",
    )
    line = notice.body.split("\n")[1].removeprefix("Asked: ")
    whole = one_line(redact(asked))
    assert line == whole or (line.endswith("…") and whole.startswith(line[:-1]))
    assert notice.body.split("\n")[0] == f"{request_id} is escalated."


# --- the reply grammar (pure) -------------------------------------------------------------------------


def test_replies_are_read_as_a_phone_or_a_group_writes_them() -> None:
    assert parse_reply("approve REQ-x") == Parsed("REQ-x", "approve", "")
    got = parse_reply("Deny req-2026-05-04-0830-a because it is Friday.")
    assert got is not None and (got.request_id, got.verdict, got.comment) == (
        "REQ-2026-05-04-0830-a",
        "deny",
        "because it is Friday.",
    )
    got = parse_reply("/approve@vaultops_bot REQ-9. — fine by me")
    assert got is not None and (got.request_id, got.comment) == ("REQ-9", "fine by me")
    for chatter in (
        "approved REQ-x",
        "please approve REQ-x",
        "approve",
        "deny it",
        "",
        "REQ-x approve",
        "hi",
    ):
        assert parse_reply(chatter) is None, chatter
    got = parse_reply("deny too risky", replied_to="REQ-7 is escalated.\nAsked: …")
    assert got is not None and (got.request_id, got.verdict, got.comment) == ("REQ-7", "deny", "too risky")
    assert parse_reply("approve", replied_to="REQ-7 and REQ-8") is None  # which one? none


@given(
    request_id=st.from_regex(r"\AREQ-[A-Za-z0-9._-]{0,30}[A-Za-z0-9_-]\Z"),
    verb=st.sampled_from(["approve", "deny"]),
    upper=st.lists(st.booleans(), min_size=7, max_size=7),
    comment=st.text(st.characters(blacklist_categories=["Cs"]), max_size=40),
)
def test_a_verdict_names_its_request_and_keeps_the_comment(
    request_id: str, verb: str, upper: list[bool], comment: str
) -> None:
    typed = "".join(c.upper() if u else c for c, u in zip(verb, upper, strict=False))
    got = parse_reply(f"{typed} {request_id} {comment}")
    assert got is not None
    assert (got.request_id, got.verdict) == (request_id, verb)
    assert got.comment == writable(comment).lstrip(" \t\n:,—–-"), "a line a note can hold"


# --- the outbox ----------------------------------------------------------------------------------------


def test_a_key_is_queued_once_ever_and_kept_across_restarts(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    db = StateDB(path)
    outbox = Outbox(db)
    notice = _escalation()
    assert outbox.queue(notice, now=100.0) is True
    assert outbox.queue(notice, now=101.0) is False
    assert [e.notice for e in outbox.pending()] == [notice]
    outbox.failed(notice.key, "HTTP 500 from https://x.invalid/hook?token=abcdefgh12345678", now=102.0)
    entry = outbox.entry(notice.key)
    assert entry is not None and entry.attempts == 1 and entry.retry_at == 102.0 + retry_delay(1)
    assert entry.last_error is not None and "abcdefgh12345678" not in entry.last_error
    assert outbox.pending(now=103.0) == [] and len(outbox.pending(now=102.0 + retry_delay(1))) == 1
    db.close()

    db = StateDB(path)  # a restart: still pending, still known
    outbox = Outbox(db)
    assert outbox.queue(notice) is False and len(outbox.pending()) == 1
    outbox.sent(notice.key, now=200.0)
    assert outbox.pending() == [] and outbox.queue(notice) is False
    assert retry_delay(1) < retry_delay(2) <= retry_delay(50) == 600.0
    db.close()


# --- apprise json:// -----------------------------------------------------------------------------------


def test_each_notice_reaches_a_json_server_exactly_once(state: StateDB) -> None:
    log = ListLog()
    outbox = Outbox(state)
    first, second = _escalation("REQ-a"), _escalation("REQ-b")
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
    notice = _escalation()
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
    notice = _escalation()
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
        outbox.queue(_escalation(f"REQ-{i}"), now=0.0)
    with JsonSink(codes=[500] * 10) as sink:
        got = deliver(state, [sink.url()], log, now=0.0)
        assert len(got.failed) == 5 and len(sink.received) == 1
    entries = [outbox.entry(f"_System/COO-Inbox.md#REQ-{i}#escalated") for i in range(5)]
    assert all(e is not None and e.attempts == 1 for e in entries)


def test_with_no_notifier_notices_wait_rather_than_vanish(state: StateDB) -> None:
    Outbox(state).queue(_escalation())
    assert deliver(state, [], ListLog()).sent == 0
    assert len(Outbox(state).pending()) == 1


def test_a_failing_url_with_a_token_never_shows_the_token(
    state: StateDB, capfd: pytest.CaptureFixture[str]
) -> None:
    secret = "Zq8Xv3Kp9Lm2Nb7Hc4Rt6Ys1"
    log = ListLog()
    notice = _escalation()
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
    notice = _escalation()
    Outbox(state).queue(notice, now=0.0)
    assert deliver(state, [url], log, now=0.0).failed == [notice.key]
    entry = Outbox(state).entry(notice.key)
    assert entry is not None and "boom while posting" in (entry.last_error or "")
    for shown in (log.text(), entry.last_error or ""):
        assert secret not in shown and "hunter2hunter2" not in shown and "[REDACTED:" in shown


# --- Telegram -----------------------------------------------------------------------------------------


def test_notices_go_to_the_allowed_chats_through_the_configured_api_base(state: StateDB) -> None:
    log = ListLog()
    notice = _escalation()
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
    notice = _escalation()
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


# --- configuration ------------------------------------------------------------------------------------


def _config(tmp_path: Path, shared: str = "", local: str = "", **env: str) -> Any:
    (tmp_path / ".vaultops").mkdir(exist_ok=True)
    (tmp_path / ".vaultops" / "config.toml").write_text(shared)
    (tmp_path / ".vaultops" / "local.toml").write_text(local)
    return load_config(tmp_path, environ=env)


def test_telegram_settings_come_from_local_toml_or_the_environment(tmp_path: Path) -> None:
    shared = "[notify.telegram]\nchat_ids = [4242, -100200]\n"
    config = _config(tmp_path, shared, f'[notify.telegram]\ntoken = "{TOKEN}"\n')
    telegram = config.notify.telegram
    assert telegram.token.get_secret_value() == TOKEN and telegram.chat_ids == (4242, -100200)
    assert telegram.api_base == "https://api.telegram.org" and telegram.enabled
    assert TOKEN not in repr(config)
    config = _config(tmp_path, shared, VAULTOPS_TELEGRAM_TOKEN="1:from-env")
    assert config.notify.telegram.token.get_secret_value() == "1:from-env"
    assert not _config(tmp_path).notify.telegram.enabled


@pytest.mark.parametrize(
    ("shared", "local", "message"),
    [
        (
            "[notify.telegram]\ntokn = 'x'\n",
            "",
            "config.toml: [notify.telegram] tokn is not a known setting (known here: token, chat_ids, "
            "users, api_base, poll_timeout, open_url)",
        ),
        ("", "[notify.telegram]\nchat_ids = 42\n", "local.toml: [notify.telegram] chat_ids "),
        ("[notify.telegram]\npoll_timeout = 90\n", "", "config.toml: [notify.telegram] poll_timeout "),
        ("[notify.telegram]\napi_base = 'telegram'\n", "", "config.toml: [notify.telegram] api_base "),
    ],
)
def test_a_bad_telegram_setting_is_one_sentence_naming_file_and_key(
    tmp_path: Path, shared: str, local: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _config(tmp_path, shared, local)
    text = str(caught.value)
    assert message in text and "\n" not in text
