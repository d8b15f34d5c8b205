"""The monitor's fail form, for the two kinds of dead-man's switch people use."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from hypothesis import given
from hypothesis import strategies as st

from vaultops.notify.heartbeat import fail_url


def test_healthchecks_and_uptime_kuma() -> None:
    assert fail_url("https://hc-ping.com/0f0e-uuid") == "https://hc-ping.com/0f0e-uuid/fail"
    assert fail_url("https://hc-ping.com/ping/key/my-slug?create=1") == (
        "https://hc-ping.com/ping/key/my-slug/fail?create=1"
    )
    assert fail_url("https://hc-ping.com/uuid/fail") == "https://hc-ping.com/uuid/fail"
    kuma = fail_url("https://kuma.example.org/api/push/Tok3n?status=up&msg=OK&ping=")
    assert kuma == "https://kuma.example.org/api/push/Tok3n?status=down&msg=OK&ping="


_segment = st.text("abcXYZ019-_", min_size=1, max_size=8)


@given(
    st.lists(_segment, min_size=1, max_size=4),
    st.lists(st.tuples(_segment, st.text("abc01", max_size=4)), max_size=3),
    st.booleans(),
)
def test_the_fail_form_keeps_the_monitor_and_its_query(
    path: list[str], query: list[tuple[str, str]], kuma: bool
) -> None:
    params = [*query, ("status", "up")] if kuma else [q for q in query if q[0] != "status"]
    query_text = "?" + "&".join(f"{k}={v}" for k, v in params) if params else ""
    url = "https://m.example.org/" + "/".join(path) + query_text
    failed = urlsplit(fail_url(url))
    assert failed.scheme == "https" and failed.netloc == "m.example.org"
    got = parse_qsl(failed.query, keep_blank_values=True)
    if kuma:
        assert dict(got)["status"] == "down" and failed.path == urlsplit(url).path
    else:
        assert failed.path.endswith("/fail") and got == parse_qsl(urlsplit(url).query, keep_blank_values=True)
    assert fail_url(fail_url(url)) == fail_url(url)
