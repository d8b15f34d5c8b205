"""Chat answers that must not count, as values: Zulip senders (a stranger with the person's name, an address
in another case, a lookalike address, a quoted approval), a reply that names another request, and the README
saying each section once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_servers import ListLog
from vaultops.config import ZulipConfig
from vaultops.notify.replies import parse_reply
from vaultops.notify.zulip import Zulip
from vaultops.store.state import StateDB

# --- Zulip -------------------------------------------------------------------------------------------



class _ZulipStub:
    """Zulip's GET /messages as documented: each message with sender_email, sender_full_name, timestamp,
    display_recipient (the stream's name), content as typed (apply_markdown=false)."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages

    def messages_after(self, stream: str, anchor: int | None, limit: int) -> list[dict[str, Any]]:
        return [m for m in self.messages if anchor is None or m["id"] > anchor][:limit]


def _zulip_answers(tmp_path: Path, messages: list[dict[str, Any]]) -> list[Any]:
    config = ZulipConfig(
        site="https://chat.example.com", email="bot@chat.example.com", api_key="k" * 32, stream="ops",
        senders=("ann@example.com", "kim@example.com"),
    )  # fmt: skip
    state = StateDB(tmp_path / "z.db")
    try:
        zulip = Zulip(config, state, ListLog(), client=_ZulipStub(messages))  # type: ignore[arg-type]
        return zulip.fetch().answers
    finally:
        state.close()


def _zmsg(ident: int, email: str, name: str, content: str) -> dict[str, Any]:
    return {
        "id": ident, "sender_email": email, "sender_full_name": name, "sender_id": ident + 10,
        "timestamp": 1_800_000_000, "display_recipient": "ops", "type": "stream", "subject": "vaultops",
        "content": content, "client": "website", "flags": [],
    }  # fmt: skip


def test_zulip_a_stranger_with_the_persons_name_is_not_the_person(tmp_path: Path) -> None:
    answers = _zulip_answers(
        tmp_path,
        [
            _zmsg(1, "mallory@example.com", "Ann Example", "approve REQ-rotate"),
            _zmsg(2, "ann@example.com.evil.test", "Ann Example", "approve REQ-rotate"),
            _zmsg(3, "ann@exаmple.com", "Ann Example", "approve REQ-rotate"),  # Cyrillic а
            _zmsg(4, " ann@example.com\u200b", "Ann Example", "approve REQ-rotate"),
        ],
    )
    assert answers == []


def test_zulip_an_address_in_another_case_is_the_same_person(tmp_path: Path) -> None:
    [answer] = _zulip_answers(tmp_path, [_zmsg(1, "Ann@Example.COM", "Ann Example", "approve REQ-rotate")])
    assert answer.request_id == "REQ-rotate"


@pytest.mark.parametrize("email", ["\u212aim@example.com", "kim@example.com"])
def test_zulip_a_unicode_lookalike_address_is_not_a_listed_sender(tmp_path: Path, email: str) -> None:
    # "kim@example.com" is listed.  "\u212aim@example.com" starts with the KELVIN SIGN, another address
    # (another account) that looks the same; casefold() maps it to "k".  What should happen: it is not a
    # listed sender (compare addresses by ASCII case only).  Was: `Zulip.__init__`/`_answer`
    # (vaultops/notify/zulip.py) compare `casefold()`ed addresses, so the lookalike's answer counts.
    answers = _zulip_answers(tmp_path, [_zmsg(1, email, "Kim", "approve REQ-rotate")])
    if email == "kim@example.com":
        assert len(answers) == 1  # the plain address, for contrast
    else:
        assert answers == []


def test_zulip_a_quoted_approval_is_not_the_senders(tmp_path: Path) -> None:
    answers = _zulip_answers(
        tmp_path,
        [
            _zmsg(1, "ann@example.com", "Ann", "> approve REQ-rotate\nno way"),
            _zmsg(2, "ann@example.com", "Ann", "```quote\napprove REQ-rotate\n```\nhmm"),
        ],
    )
    assert answers == []


def test_parse_reply_never_takes_an_id_from_another_request_named_in_the_text() -> None:
    replied = "v: REQ-wipe escalated (blocked)\n\nREQ-wipe is escalated.\nAsked: Permanently wipe"
    for typed in ['approve "REQ-rotate"', "approve РЕQ-rotate", "approve `REQ-rotate`"]:
        parsed = parse_reply(typed, replied)
        assert parsed is None or parsed.request_id != "REQ-wipe", (typed, parsed)


def test_the_readme_says_each_section_once() -> None:
    # A new user reading the README meets "Your answers", "How answers are trusted", "Notifications", …
    # twice, the second copy without the Telegram and Zulip parts.  Was (docs): README.md repeats the
    # block from "### Your answers" to "### Notifications" after "#### A failing channel is an incident".
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    headings = [line for line in readme.splitlines() if line.startswith("#") and not line.startswith("#!")]
    in_code = set()
    fence = False
    for line in readme.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif fence and line.startswith("#"):
            in_code.add(line)
    repeated = sorted({h for h in headings if headings.count(h) > 1 and h not in in_code})
    assert repeated == [], repeated
