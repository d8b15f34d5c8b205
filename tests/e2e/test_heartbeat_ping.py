"""``[daemon] heartbeat_url``: a loopback monitor hears the pings of ``tick`` and of the daemon, the fail
form when a pass fails, and a success again after; the URL (a secret) is never in the daemon's log."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.support.daemon_helpers import Daemon, daemon_vault
from tests.support.helpers import vault_with, vaultops
from tests.support.waiting import wait_for


class Monitor:
    """A dead-man's switch on 127.0.0.1 that keeps the path of every ping."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.paths.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"OK")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/ping/s3cret-token"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> Monitor:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_tick_pings_the_monitor(tmp_path: Path) -> None:
    with Monitor() as monitor:
        vault = vault_with(tmp_path / "v", "# Inbox\n", f'[daemon]\nheartbeat_url = "{monitor.url}"\n')
        proc = vaultops("--vault", str(vault), "tick", "--no-wait")
        assert proc.returncode == 0, proc.stderr
        assert monitor.paths == ["/ping/s3cret-token"]


def test_the_daemon_pings_fails_and_recovers(tmp_path: Path) -> None:
    with Monitor() as monitor:
        vault = daemon_vault(tmp_path / "v", extra=f'heartbeat_url = "{monitor.url}"\n')  # under [daemon]
        daemon = Daemon(vault, env={"VAULTOPS_FAULT": "pass.start:raise@2"})  # the second pass fails
        try:
            daemon.wait_ready()
            wait_for(lambda: "/ping/s3cret-token/fail" in monitor.paths, timeout=60)
            after = monitor.paths.index("/ping/s3cret-token/fail")
            wait_for(lambda: "/ping/s3cret-token" in monitor.paths[after:], timeout=60)
            assert monitor.paths[0] == "/ping/s3cret-token"
            assert daemon.proc.poll() is None, "a failed pass did not end the daemon"
        finally:
            assert daemon.stop() == 0
        log = daemon.log.read_text()
        assert "a pass failed" in log and "s3cret-token" not in log
