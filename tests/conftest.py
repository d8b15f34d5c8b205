import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support.fake_anthropic import FakeAnthropic
from tests.support.worker_helpers import make  # noqa: F401  (the fixture: a vault whose workers die with the test)

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
