"""The quick start works as written: every ``sh`` block of docs/getting-started/one-machine.md is run by bash,
in order, from the vaultops folder, with a fresh home folder, as a newcomer would type it.

One line is not run: ``pipx install .``, which installs this checkout; the test puts the checkout's installed
vaultops (the one pytest runs on) first on ``PATH`` instead, and checks that the page's install line is that.
``console`` blocks (the daemon, the service, doctor) are shown, not run. The README's quick start must be the
page's commands, so that the two cannot drift apart.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.helpers import GIT_ENV
from tests.support.paths import REPO

PAGE = REPO / "docs" / "getting-started" / "one-machine.md"
INSTALL = "pipx install ."


def sh_lines(markdown: str) -> list[str]:
    blocks = re.findall(r"^```sh\n(.*?)^```", markdown, re.M | re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_the_quick_start_runs_as_written(tmp_path: Path) -> None:
    lines = sh_lines(PAGE.read_text(encoding="utf-8"))
    assert lines.count(INSTALL) == 1 and lines[0] == INSTALL, lines  # installing comes first
    script = "\n".join(line for line in lines if line != INSTALL)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        **GIT_ENV,
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    env.pop("VAULTOPS_VAULT", None)
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    vault = home / "vault"
    inbox = (vault / "_System" / "COO-Inbox.md").read_text(encoding="utf-8")
    assert "## REQ-" in inbox and "Is git installed?" in inbox
    # the page says: status lists the request as done, and the result is under it in the inbox
    row = next(
        line for line in proc.stdout.splitlines() if "is-git-installed" in line and "env-check" in line
    )
    assert " done " in f" {row} ", proc.stdout
    block = inbox[inbox.index("Is git installed?") :]
    assert "### Result" in block and "- status: done" in block, block
    log = subprocess.run(["git", "-C", str(vault), "log", "--format=%s"], capture_output=True, text=True)
    assert log.returncode == 0 and log.stdout.strip(), log


def test_the_readmes_quick_start_is_the_pages() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quick = readme[readme.index("## Quick start") :]
    quick = quick[: quick.index("\n## ", 1)]
    assert sh_lines(quick) == sh_lines(PAGE.read_text(encoding="utf-8"))
