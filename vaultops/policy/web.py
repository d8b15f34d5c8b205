"""Which hosts a job's web tools may reach: its profile's ``domains``, the list its commands' sandbox
reaches too.  Pure.

WebFetch names its host in its URL.  WebSearch asks the model vendor's search, which reaches whatever the
query finds; only its own ``allowed_domains`` narrow it, so a search is inside the list only when it is
narrowed to listed hosts.  ``*`` in the list lets the web tools reach any host (a research profile);
what they carry is still judged (a secret in a URL is denied wherever it goes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

ANY = "*"


def host_listed(host: str, domains: Sequence[str]) -> bool:
    """``host`` is a listed domain, or below one listed as ``*.domain`` (the domain itself too)."""
    host = host.lower().rstrip(".")
    for entry in domains:
        entry = entry.lower().rstrip(".")
        if entry == ANY or host == entry.removeprefix("*."):
            return True
        if entry.startswith("*.") and host.endswith(entry[1:]):
            return True
    return False


def unlisted_web(tool: str, tool_input: Mapping[str, Any], domains: Sequence[str]) -> str | None:
    """Why a web tool's call reaches beyond ``domains``, or None (it does not, or it is no web tool)."""
    if ANY in domains or tool not in ("WebFetch", "WebSearch"):
        return None
    listed = ", ".join(domains) if domains else "none"
    if tool == "WebFetch":
        url = tool_input.get("url")
        host = _host(url) if isinstance(url, str) else None
        if host and host_listed(host, domains):
            return None
        shown = host or "an unreadable URL"
        return f"WebFetch of {shown}, which the profile's domains do not list ({listed})"
    narrowed = tool_input.get("allowed_domains")
    hosts = narrowed if isinstance(narrowed, list) else []
    if hosts and all(isinstance(h, str) and host_listed(h, domains) for h in hosts):
        return None
    return f"WebSearch beyond the profile's domains ({listed}): narrow allowed_domains to them"


def _host(url: str) -> str | None:
    """The host a URL names, or None where readers could disagree on it: a backslash (browsers read it as
    a slash), a space or control character, no http(s) scheme."""
    if any(c == "\\" or c.isspace() or ord(c) < 32 for c in url):
        return None
    try:
        parts = urlsplit(url)
        return parts.hostname if parts.scheme.lower() in ("http", "https") else None
    except ValueError:
        return None
