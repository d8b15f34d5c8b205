"""Set-up that works as written (issue 29): ``vaultops link-chat`` reads who wrote to the bot from a Bot API
on 127.0.0.1 that behaves as Telegram does, and writes ``chat_ids`` into this machine's ``local.toml`` (every
other byte kept, never into the shared config.toml); ``tick`` and ``doctor`` both name that step while a bot
has a token and no chat; Zulip's ``senders`` the same way; a vault made from the template runs none of its
example requests, and ``init`` says what it committed and what it left."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tests.support.daemon_helpers import Daemon, daemon_vault
from tests.support.fake_servers import FakeBotAPI
from tests.support.fake_zulip import FakeZulip
from tests.support.helpers import INBOX, ROTATE, git, make_vault, vaultops
from tests.support.paths import REPO
from tests.support.strict_telegram import StrictBotAPI
from tests.support.waiting import wait_for
from vaultops.base.errors import ConfigError
from vaultops.commands.link_chat import link_chat

TOKEN = "4242000:AAbbCCddEEffGGhhIIjjKKllMM"
LOCAL = ".vaultops/local.toml"
STEP = "run `vaultops link-chat telegram`"


def local_text(base: str) -> str:
    """A local.toml as a person writes it: comments, a profile, the bot's token with its own comment."""
    return (
        "# this laptop's own settings\n"
        "[inbox]\nsettle = 0   # no waiting in tests\n\n"
        "[notify.telegram]\n"
        f'token = "{TOKEN}"   # from @BotFather\n'
        f'api_base = "{base}"\n'
        "\n# the end\n"
    )


def test_link_chat_finds_the_chat_that_wrote_and_tick_then_listens_to_it(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", fake_profiles=False)
    shared = (vault / ".vaultops" / "config.toml").read_bytes()
    with StrictBotAPI(TOKEN) as api:
        (vault / LOCAL).write_text(local_text(api.base))
        # before: both say the one step left, instead of "nothing to do" and other advice
        tick = vaultops("--vault", str(vault), "tick", "--no-wait")
        assert tick.returncode == 0 and STEP in tick.stderr, tick.stdout + tick.stderr
        doctor = vaultops("doctor", "--vault", str(vault))
        assert STEP in doctor.stdout, doctor.stdout

        api.private(4242, "Ann", last_name="Example")
        api.say(4242, 4242, "hello bot")
        linked = vaultops("--vault", str(vault), "link-chat", "telegram")
        assert linked.returncode == 0, linked.stdout + linked.stderr
        assert "4242  private  Ann (@ann)" in linked.stdout
        assert "wrote chat_ids = [4242] under [notify.telegram] in .vaultops/local.toml" in linked.stdout
        assert "without a restart" in linked.stdout
        assert (vault / LOCAL).read_text() == local_text(api.base).replace(
            "[notify.telegram]\n", "[notify.telegram]\nchat_ids = [4242]\n"
        )
        assert (vault / ".vaultops" / "config.toml").read_bytes() == shared  # the shared file: untouched
        assert git(vault, "status", "--porcelain", "--", ".vaultops") == ""  # local.toml: git-ignored

        doctor = vaultops("doctor", "--vault", str(vault))
        assert STEP not in doctor.stdout and "1 chat(s) told" in doctor.stdout, doctor.stdout
        # link-chat confirmed nothing: the pass reads the same message, now from a chat it trusts
        tick = vaultops("--vault", str(vault), "tick", "--no-wait")
        assert STEP not in tick.stderr
        assert "ignored a message from chat 4242 (Ann Example): not approve/deny" in tick.stderr, tick.stderr


def test_several_chats_are_listed_and_the_one_picked_is_added_to_those_there(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", fake_profiles=False, repo=False)
    with FakeBotAPI(TOKEN) as api:
        before = local_text(api.base).replace("[notify.telegram]\n", "[notify.telegram]\nchat_ids = [7]\n")
        (vault / LOCAL).write_text(before)
        api.say(4242, "hi", first_name="Ann")
        api.say(-1001, "/start", title="Ops room", user_id=99)

        listed = link_chat(vault, "telegram")  # no one to ask: listed, nothing written
        assert listed.exit_code == 1 and listed.lines[-1] == "nothing was written: pick one with --chat ID"
        assert listed.lines[1:3] == ["  4242  private  Ann", "  -1001  group  Ops room"]
        assert (vault / LOCAL).read_text() == before

        asked: list[str] = []

        def ask(menu: str) -> str:
            asked.append(menu)
            return "2"

        picked = link_chat(vault, "telegram", ask=ask)
        assert "1) 4242  private  Ann\n2) -1001  group  Ops room" in asked[0]
        assert picked.exit_code == 0
        assert (vault / LOCAL).read_text() == before.replace("chat_ids = [7]", "chat_ids = [7, -1001]")
        assert any(
            "add 99" in line and "users" in line for line in picked.lines
        )  # a group: presses need users

        again = link_chat(vault, "telegram", chat="-1001")
        assert again.lines[-1] == "chat -1001 is already in chat_ids; nothing was written"
        assert link_chat(vault, "telegram", ask=lambda menu: "").exit_code == 1  # Enter: none

        def ctrl_d(menu: str) -> str:
            raise EOFError

        assert link_chat(vault, "telegram", ask=ctrl_d).exit_code == 1
        assert all(params.get("offset") is None for method, params in api.calls if method == "getUpdates")


def test_no_chat_yet_says_what_to_do_and_no_token_names_the_file(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", fake_profiles=False, repo=False)
    with FakeBotAPI(TOKEN) as api:
        (vault / LOCAL).write_text(local_text(api.base))
        empty = link_chat(vault, "telegram")
        assert empty.exit_code == 1 and "send your bot a message" in empty.lines[-1]
    (vault / LOCAL).write_text("[inbox]\nsettle = 0\n")
    with pytest.raises(ConfigError, match=r"local\.toml: \[notify\.telegram\] has no token"):
        link_chat(vault, "telegram")


def test_zulip_links_the_person_who_wrote_in_the_stream(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", fake_profiles=False, repo=False)
    with FakeZulip("bot@example.org", "k3y", stream="ops") as zulip:
        before = (
            f'[notify.zulip]\nsite = "{zulip.site}"\nemail = "bot@example.org"\napi_key = "k3y"\n'
            'stream = "ops"   # where notices go\n'
        )
        (vault / LOCAL).write_text(before)
        zulip.say("bot@example.org", "a notice", name="vaultops bot")
        zulip.say("ann@example.org", "hi", name="Ann Person")
        out = link_chat(vault, "zulip")
        assert out.exit_code == 0, out
        assert out.lines[:2] == ["people who wrote in ops: 1", "  ann@example.org  Ann Person"]
        assert (vault / LOCAL).read_text() == before.replace(
            "[notify.zulip]\n", '[notify.zulip]\nsenders = ["ann@example.org"]\n'
        )


# --- a vault made from the template ---------------------------------------------------------------------


def test_a_vault_from_the_template_runs_none_of_its_examples_and_init_says_what_it_left(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "vault-template", vault)
    init = vaultops("init", str(vault))
    assert init.returncode == 0, init.stderr
    lines = init.stdout.splitlines()
    assert lines[0] == "initialised a git repository"
    assert lines[1].startswith("committed .vaultops/config.toml, _System/COO-Inbox.md, .gitignore (commit ")
    assert lines[2] == (
        "not committed, left as they were (yours: commit them for your other machines to get them): "
        ".obsidian/, Daily/, Templates/, executor-queue/"
    )
    assert lines[3].startswith("not in git, on purpose: .vaultops/local.toml is where to put this machine's")
    assert "vaultops link-chat telegram" in lines[3]

    (vault / LOCAL).write_text("[inbox]\nsettle = 0\n")
    inbox = (vault / INBOX).read_bytes()
    assert b"## REQ-2026-05-04-0830-which-git" in inbox  # the examples are there, to copy
    tick = vaultops("--vault", str(vault), "tick", "--no-wait")
    assert tick.returncode == 0 and "nothing to do" in tick.stdout, tick.stdout + tick.stderr
    assert (vault / INBOX).read_bytes() == inbox  # not one of them was claimed or run
    status = vaultops("--vault", str(vault), "status", "--json")
    assert '"requests": []' in status.stdout


# --- a running daemon ---------------------------------------------------------------------------------


def test_a_running_daemon_tells_the_chat_linked_under_it_and_takes_its_answer(tmp_path: Path) -> None:
    """The set-up page, step by step, under a running daemon: a token, a message to the bot, link-chat; the
    waiting escalation then reaches the chat without a restart, and the chat's answer runs it."""
    with FakeBotAPI(TOKEN) as api:
        vault = daemon_vault(
            tmp_path / "v",
            f"# Inbox\n\n{ROTATE}",
            extra=f'[notify.telegram]\ntoken = "{TOKEN}"\napi_base = "{api.base}"\n',
        )
        local = vault / LOCAL  # replies are read every `fetch` seconds
        local.write_text(local.read_text().replace("[daemon]\n", "[daemon]\nfetch = 0.3\n"))
        daemon = Daemon(vault)
        try:
            daemon.wait_ready()
            assert wait_for(lambda: "- status: escalated" in (vault / INBOX).read_text()), daemon.explain()
            assert api.sent == []  # no chat to tell yet
            api.say(4242, "hello bot")
            linked = vaultops("--vault", str(vault), "link-chat", "telegram")
            assert linked.returncode == 0 and "without a restart" in linked.stdout, (
                linked.stdout + linked.stderr
            )
            assert wait_for(lambda: len(api.sent) == 1), daemon.explain()
            assert api.sent[0]["chat_id"] == 4242 and "REQ-rotate" in api.sent[0]["text"]
            api.say(4242, "approve REQ-rotate", date=int(time.time()) + 1)
            assert wait_for(lambda: "- decision: approve — via Telegram" in (vault / INBOX).read_text()), (
                daemon.explain()
            )
        finally:
            assert daemon.stop() == 0, daemon.errors()
