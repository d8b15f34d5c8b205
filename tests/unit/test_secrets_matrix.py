"""Properties of redact() over every generated secret format: no secret survives any wrapping, and redacting
twice is redacting once."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from tests.support.secret_formats import GENERATED, WRAPPINGS
from vaultops.base.redact import MARKER, redact

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


AROUND = st.sampled_from(["", "see ", "x=1 ", "line\n", '"', "(", "\x1b[32m", "log: "])


def _visible(text: str) -> str:
    return _ANSI.sub("", MARKER.sub("\0", text))


@given(GENERATED, st.sampled_from(sorted(WRAPPINGS)), AROUND, AROUND)
def test_a_generated_secret_never_survives_any_wrapping(
    secret: tuple[str, str], wrapping: str, before: str, after: str
) -> None:
    text, core = secret
    wrapped = WRAPPINGS[wrapping](text, core)
    out = redact(before + wrapped + " " + after)
    assert core not in _visible(out)
    assert redact(out) == out


@given(st.lists(st.tuples(AROUND, GENERATED), min_size=1, max_size=4))
def test_redacting_twice_is_redacting_once(parts: list[tuple[str, tuple[str, str]]]) -> None:
    text = " ".join(before + secret for before, (secret, _) in parts)
    once = redact(text)
    assert redact(once) == once
    assert "[REDACTED:" in once and json.dumps(once)  # a marker is there, and is never re-matched


# --- basic auth in a header: the whole credential goes ---------------------------------------------------

_USER = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", min_size=1, max_size=12)
_PASSWORD = st.text(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#$%^&*+=._~/:?-", min_size=4, max_size=30
)


@given(
    st.sampled_from(["Authorization: ", "authorization:", "Proxy-Authorization: ", "Authorization: Basic "]),
    _USER,
    _PASSWORD,
    st.sampled_from(["", '"', " next", "\n", ", x", "'"]),
)
def test_a_user_and_password_in_an_authorization_header_are_redacted_whole(
    header: str, user: str, password: str, after: str
) -> None:
    """``Authorization: user:pass`` left ``:pass`` raw (issue 27): the credential ended at the colon."""
    quote = after if after in ('"', "'") else ""
    out = redact(f"curl -H {quote}{header}{user}:{password}{after}")
    assert f":{password}" not in _visible(out) and redact(out) == out
