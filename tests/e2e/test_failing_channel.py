"""A failing channel is an incident, not a log line: after ``[notify] failing_after`` failed tries in a
row, ``status`` and ``doctor`` show it, the daily note gets one line, and the messages it cannot take go
to ``[notify] fallback``; when it works again, that is said once.  Real HTTP servers on loopback (an
apprise ``json://`` sink that fails, then recovers, and a second one as the fallback); passes in process
with a clock the test moves past the outbox's back-off."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from tests.support.fake_servers import FakeBotAPI, JsonSink
from tests.support.helpers import ROTATE, vault_with
from vaultops.commands.doctor import doctor
from vaultops.commands.overview import status
from vaultops.engine.tick import tick
from vaultops.vault import Vault

NOW = datetime.now().astimezone().replace(microsecond=0)
TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"


def daily(vault: Path) -> str:
    path = vault / "Daily" / f"{NOW.strftime('%Y-%m-%d')}.md"
    return path.read_text() if path.exists() else ""


def run_at(vault: Path, seconds: float) -> list[str]:
    return tick(Vault.open(vault), clock=lambda: NOW + timedelta(seconds=seconds), wait_settle=False).warnings


def test_a_channel_that_keeps_failing_falls_back_is_shown_and_its_recovery_said_once(tmp_path: Path) -> None:
    with JsonSink(codes=[500, 500, 500]) as broken, JsonSink() as fallback:
        config = (
            f'[notify]\nurls = ["{broken.url()}"]\nfallback = ["{fallback.url()}"]\nfailing_after = 3\n'
        )
        vault = vault_with(tmp_path / "v", f"# Inbox\n\n{ROTATE}", config, fake_profiles=True)
        warnings = run_at(vault, 0)
        assert not any("is failing" in w for w in warnings), "one failed try is a log line"
        assert fallback.messages() == []
        run_at(vault, 11)  # the outbox waits 10 s after the first failure, then 20 s
        warnings = run_at(vault, 32)
        failing = [w for w in warnings if "is failing (3 tries in a row)" in w]
        assert len(failing) == 1 and "[notify] urls[0] (json://…)" in failing[0], warnings
        [message] = fallback.messages()
        assert "REQ-rotate" in message, "the message went to the fallback"
        assert daily(vault).count("is failing (3 tries in a row)") == 1

        shown = status(Vault.open(vault), as_json=True).doc
        [row] = shown["notifiers"]
        assert row["state"] == "failing" and row["failures"] == 3 and "500" in row["last_error"]
        report = doctor(vault)
        assert any("has failed its last 3 tries" in line and "fallback" in line for line in report.lines)

        run_at(vault, 100)  # nothing pending for it: the notice was taken by the fallback
        assert len(fallback.messages()) == 1
        with (vault / "_System" / "COO-Inbox.md").open("a") as fh:
            fh.write("\n## REQ-drop\n- ready: yes\nDrop the old customers table in production.\n")
        warnings = run_at(vault, 200)  # a new escalation: the sink answers again
        recovered = [w for w in warnings if "works again" in w]
        assert recovered == ["notify: [notify] urls[0] (json://…) works again"]
        assert any("REQ-drop" in m for m in broken.messages())
        assert daily(vault).count("works again") == 1
        assert status(Vault.open(vault), as_json=True).doc["notifiers"] == []
        run_at(vault, 300)
        assert daily(vault).count("works again") == 1, "said once"


def test_a_failing_telegram_bot_is_an_incident_and_its_token_never_shows(tmp_path: Path) -> None:
    with FakeBotAPI(TOKEN) as api:
        api.fail_with = 502
        config = (
            f"[notify]\nfailing_after = 2\n[notify.telegram]\n"
            f'token = "{TOKEN}"\nchat_ids = [4242]\napi_base = "{api.base}"\npoll_timeout = 0\n'
        )
        vault = vault_with(tmp_path / "v", f"# Inbox\n\n{ROTATE}", config, fake_profiles=True)
        run_at(vault, 0)
        warnings = run_at(vault, 11)
        assert any("telegram chat 4242 is failing (2 tries in a row)" in w for w in warnings), warnings
        shown = json.dumps(status(Vault.open(vault), as_json=True).doc)
        assert "telegram chat 4242" in shown and TOKEN not in shown
        assert TOKEN not in daily(vault) and TOKEN.split(":")[1] not in daily(vault)
