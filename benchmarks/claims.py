"""Claims through a remote: how many requests per second 1, 2 and 3 machines claim (and finish) when
they compete over one bare repository on disk, beside the rate at which git itself commits and pushes to
that remote, measured in the same run."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from vaultops.base import faults  # noqa: E402
from vaultops.engine.tick import tick  # noqa: E402
from vaultops.scan.note import parse_note  # noqa: E402
from vaultops.vault import Vault  # noqa: E402

INBOX = "_System/COO-Inbox.md"
PROFILE = '[profiles.{name}]\ncommand = ["true"]\noutput = "text"\ntimeout = 60\nhealth = []\n\n'


def _git(cwd: Path, env: dict[str, str], *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _remote(
    make: Callable[[Path, str], Path], root: Path, text: str, env: dict[str, str]
) -> tuple[Path, str]:
    seed = make(root / "seed", text)
    branch = _git(seed, env, "symbolic-ref", "--short", "HEAD").strip()
    bare = root / "remote.git"
    _git(root, env, "init", "-q", "--bare", str(bare))
    _git(bare, env, "symbolic-ref", "HEAD", f"refs/heads/{branch}")
    _git(seed, env, "push", "-q", str(bare), f"HEAD:refs/heads/{branch}")
    return bare, branch


def raw_push_rate(make: Callable[[Path, str], Path], env: dict[str, str], n: int) -> float:
    """Commits per second that plain git makes and pushes to the same kind of remote: the floor."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bare, _ = _remote(make, root, "# Inbox\n", env)
        clone = root / "clone"
        _git(root, env, "clone", "-q", str(bare), str(clone))
        note = clone / INBOX
        start = time.perf_counter()
        for i in range(n):
            with note.open("a") as fh:
                fh.write(f"- line {i}\n")
            _git(clone, env, "commit", "-qam", f"line {i}")
            _git(clone, env, "push", "-q")
        return n / (time.perf_counter() - start)


def claim_rate(
    make: Callable[[Path, str], Path], env: dict[str, str], machines: int, requests: int
) -> tuple[float, int]:
    """Requests per second claimed and finished by ``machines`` competing clones, each running passes in a
    loop; and how many claim pushes lost the race (the remote had moved) and were dropped."""
    text = "# Inbox\n" + "".join(
        f"\n## REQ-{i:04d}\n- type: research\n- ready: yes\nSummarise note {i}.\n" for i in range(requests)
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bare, branch = _remote(make, root, text, env)
        vaults = []
        for i in range(machines):
            clone = root / f"machine{i}"
            _git(root, env, "clone", "-q", str(bare), str(clone))
            profiles = "".join(PROFILE.format(name=n) for n in ("worker-code", "worker-research"))
            (clone / ".vaultops" / "local.toml").write_text(
                f'[agent]\nname = "bench{i}"\nhost = "host{i}"\n\n{profiles}[inbox]\nsettle = 0\n\n'
                "[limits]\nmax_concurrent = 3\n\n[record]\ndaily_note = false\n"
            )
            vaults.append(Vault.open(clone))

        def remaining() -> int:
            raw = _git(bare, env, "show", f"{branch}:{INBOX}").encode()
            return sum(r.state.value != "done" for r in parse_note(INBOX, raw).requests)

        attempts = [0]
        lock = threading.Lock()

        def attempted() -> None:
            with lock:
                attempts[0] += 1

        def work(vault: Vault) -> None:
            while remaining():
                tick(vault, wait_settle=False)

        faults.on("claim.before_push", attempted)
        try:
            start = time.perf_counter()
            threads = [threading.Thread(target=work, args=(v,)) for v in vaults]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            took = time.perf_counter() - start
        finally:
            faults.on("claim.before_push", None)
        landed = _git(bare, env, "log", "--format=%s", branch).count("claimed")
        return requests / took, attempts[0] - landed
