"""Notices and replies as values: the message (what was asked, why, where, a link that decodes back to the
note), shortening, the reply grammar by property, the outbox on a state.db file, and the Telegram settings."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.fake_servers import ListLog
from tests.support.notices import escalation
from vaultops.base.errors import ConfigError
from vaultops.base.redact import redact
from vaultops.config import load_config
from vaultops.notify.message import (
    ASKED_LIMIT,
    auth_failure_notice,
    budget_notice,
    escalation_notice,
    obsidian_link,
    one_line,
    shorten,
)
from vaultops.notify.outbox import Outbox, retry_delay
from vaultops.notify.replies import Parsed, parse_reply, writable
from vaultops.notify.send import deliver
from vaultops.store.state import StateDB

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"


@pytest.fixture
def state(tmp_path: Path) -> StateDB:
    db = StateDB(tmp_path / "state" / "state.db")
    yield db  # type: ignore[misc]
    db.close()


# --- the message (pure) -----------------------------------------------------------------------------



def test_an_escalation_says_what_was_asked_why_and_where() -> None:
    notice = escalation()
    assert notice.key == "_System/COO-Inbox.md#REQ-2026-05-04-0900-merge#escalated"
    assert notice.title == "Work Vault: REQ-2026-05-04-0900-merge escalated (external-write)"
    lines = notice.body.splitlines()
    assert lines[0] == "REQ-2026-05-04-0900-merge is escalated."
    assert lines[1] == "Asked: Merge PR 12 on the shop repo and deploy it."
    assert lines[2] == "Class: external-write — merges a pull request; deploys"
    assert lines[3] == "Proposed: gh pr merge 12"
    assert '"approve REQ-2026-05-04-0900-merge"' in lines[4]
    assert lines[-1] == "obsidian://open?vault=Work%20Vault&file=_System%2FCOO-Inbox"
    assert escalation(state="interrupted").key != notice.key


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
    notice = escalation()
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


def test_with_no_notifier_notices_wait_rather_than_vanish(state: StateDB) -> None:
    Outbox(state).queue(escalation())
    assert deliver(state, [], ListLog()).sent == 0
    assert len(Outbox(state).pending()) == 1


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
