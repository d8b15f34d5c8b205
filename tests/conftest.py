import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support.claude_cli import CLI_MISSING
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.worker_helpers import make  # noqa: F401  (the fixture: a vault whose workers die with the test)

RAM_DISK = "/dev/shm"  # as short as /tmp, nearly: Unix socket paths under tmp_path stay below 100 bytes
RAM_DISK_ROOM = 1 << 30  # bytes free it must have: the whole suite's temp folders take ~200 MB


def temp_on_a_ram_disk() -> None:
    """The tests' temp folders (tmp_path, every tempfile user, and the vaultops and git processes the tests
    start) on a RAM disk when the machine has one with room, unless TMPDIR is set or VAULTOPS_TEST_RAM_DISK
    is 0.  The note writer fsyncs every write (the temp file, its folder, the backup), SQLite its commits,
    and git writes many small files: on a real disk a test waits for the disk (the writer's hypothesis test:
    24 s on disk, 9 s in RAM).  Nothing a test asserts depends on the disk being real; the disk-fault tests
    mount their own."""
    if "TMPDIR" in os.environ or os.environ.get("VAULTOPS_TEST_RAM_DISK", "1") == "0":
        return
    try:
        room = os.statvfs(RAM_DISK)
        shared = os.stat(RAM_DISK)
    except OSError:
        return
    # a folder for everyone like /tmp (sticky: nobody removes another's files), with room, that we can use
    sticky = stat.S_ISDIR(shared.st_mode) and shared.st_mode & stat.S_ISVTX
    usable = os.access(RAM_DISK, os.W_OK | os.X_OK)
    if not sticky or not usable or room.f_bavail * room.f_frsize < RAM_DISK_ROOM:
        return
    os.environ["VAULTOPS_TEST_DISK_TMP"] = tempfile.gettempdir()  # for the real CLI's tests (see tmp_path)
    os.environ["TMPDIR"] = RAM_DISK  # the xdist workers, started after this, inherit it
    tempfile.tempdir = None  # asked again on the next use


temp_on_a_ram_disk()
DISK_TMP = os.environ.get("VAULTOPS_TEST_DISK_TMP") or tempfile.gettempdir()  # the real CLI's tests' folders


def _needs_a_real_disk(node: pytest.Item) -> bool:
    """It runs the real CLI, or sets up a job's gate (and so its fence)."""
    cli = any(m.kwargs.get("reason") == CLI_MISSING for m in node.iter_markers("skipif"))
    return cli or node.get_closest_marker("real_disk") is not None


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """pytest's own, but on a real disk for a test that runs the real Claude Code CLI or is marked
    ``real_disk``: a job's sandbox mounts a fresh /dev, so a job's folder under /dev/shm is not there for
    its commands (vaultops refuses such a folder, saying so: tests/unit/test_fence.py)."""
    name = re.sub(r"\W", "_", request.node.name)[:30]
    if not _needs_a_real_disk(request.node) or DISK_TMP.startswith("/dev/"):
        yield tmp_path_factory.mktemp(name, numbered=True)
        return
    folder = Path(tempfile.mkdtemp(prefix=f"{name[:20]}-", dir=DISK_TMP))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


settings.register_profile(
    "default", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "deep", max_examples=30000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake agent's run log (one request id per run), outside the vault: what ran, and how often."""
    log = tmp_path / "agent-runs.log"
    log.touch()
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    return log


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    """The scripted fake Anthropic API, serving for the test; ``api.start()`` gives its base URL."""
    with FakeAnthropic() as fake:
        yield fake
