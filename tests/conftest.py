import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

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


from worker_helpers import make  # noqa: E402, F401  (the fixture: a vault whose workers die with the test)
