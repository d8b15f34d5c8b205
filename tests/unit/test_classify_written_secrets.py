"""A secret written out in a request is read as "a secret token" by the classifier: ``Rotate hvs.…`` over
a harmless body asks to rotate a token as surely as ``Rotate the Vault token`` does (issue 27: a
dangerous title over a harmless body ran), and a request that only mentions one is not stopped for it."""

from __future__ import annotations

import pytest

from vaultops import classify

TOKENS = [
    "hvs.CAESIJ7Xq3r9Lk2mN5pQ8sT1vW4yZ6aB0cD3eF6gH9jK2lM5nP8qR1",
    "sk_live_51HqLyjAbCdEfGhIj0123",
    "ghp_1234567890abcdefghijABCDEFGHIJ123456",
    "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",
    "xoxb-1234567890-AbCdEfGhIjKlMn",
]


@pytest.mark.parametrize("token", TOKENS)
def test_rotating_a_token_written_out_is_blocked_whatever_the_body_says(token: str) -> None:
    ruling = classify(f"Rotate {token}\nplease look into the title")
    assert ruling.safety_class == "blocked", ruling.reasons
    assert any("rotation" in r for r in ruling.reasons), ruling.reasons


@pytest.mark.parametrize("token", TOKENS)
def test_a_request_that_only_mentions_a_token_is_not_stopped_for_it(token: str) -> None:
    ruling = classify(f"Summarise the incident note that quotes {token}")
    assert ruling.safety_class == "routine", ruling.reasons
