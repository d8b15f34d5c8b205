"""Fleet tests with a chat and a phone: a request that is always escalated, the fake bot's messages about a
request, a request's state as the remote has it, a config typo pushed from the phone and a daemon's warnings
(tests/e2e/test_relay_fleet.py, test_fleet_phone.py, test_config_heals.py)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.clones import Fleet
from tests.support.daemon_helpers import Daemon
from tests.support.fake_servers import FakeBotAPI
from tests.support.helpers import git

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
ME = 4242
FAST = "[daemon]\nreconcile = 1\nfetch = 0.5\ngrace = 10\n"  # a fleet that answers within a second


def rotate(rid: str) -> str:
    """A request the rules always escalate (a key rotation)."""
    return f"\n## {rid}\n- ready: yes\nRotate the Stripe secret key and update the production env file.\n"


def telegram_config(api: FakeBotAPI) -> str:
    return f'\n[notify.telegram]\ntoken = "{TOKEN}"\nchat_ids = [{ME}]\napi_base = "{api.base}"\n'


def state_on_remote(fleet: Fleet, rid: str) -> str:
    found = fleet.remote_requests().get(rid)
    return found.state.value if found is not None else ""


def is_state(fleet: Fleet, rid: str, state: str) -> bool:
    return state_on_remote(fleet, rid) == state


def sent_about(api: FakeBotAPI, rid: str) -> list[dict[str, object]]:
    """The bot's messages that name ``rid`` (as a word: REQ-a is not REQ-ab)."""
    return [m for m in api.sent if re.search(rf"(?<![\w-]){re.escape(rid)}(?![\w-])", str(m.get("text", "")))]


def told_once(api: FakeBotAPI, rid: str) -> bool:
    return len(sent_about(api, rid)) == 1


def push_config_typo(clone: Path, typo: bool) -> None:
    """On the person's clone, ``[inbox] settle`` misspelt as ``setle`` (``typo``) or put right, pushed."""
    git(clone, "pull", "-q", "--rebase")
    path = clone / ".vaultops" / "config.toml"
    text = path.read_text()
    path.write_text(
        re.sub(r"^settle = ", "setle = ", text, flags=re.M) if typo else text.replace("setle", "settle")
    )
    git(clone, "commit", "-qam", f"person: config {'typo' if typo else 'fixed'}")
    git(clone, "push", "-q")


def warnings_of(daemon: Daemon) -> list[str]:
    """The daemon's warning lines in its log, as JSON text."""
    if not daemon.log.exists():
        return []
    return [line for line in daemon.log.read_text().splitlines() if '"level": "warning"' in line]


def warned(daemon: Daemon, word: str) -> bool:
    return any(word in line for line in warnings_of(daemon))
