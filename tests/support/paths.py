"""Where things are, for every test wherever it sits: the repository, and the tests' own data."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
TESTS = REPO / "tests"
CORPUS = TESTS / "corpus"  # the labelled requests and tool calls
TEST_FIXTURES = TESTS / "fixtures"  # hook payloads; the repository's own fixtures/ is REPO / "fixtures"
