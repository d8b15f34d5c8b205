"""Secrets out of text, before it reaches the vault, a log or a notification.

Every hit becomes ``[REDACTED:<kind>]``.  Each rule finds the secrets it knows in the original text and
the union of what they found is replaced, so no rule can hide a secret from another by redacting its
context first (``PASSWD= Authorization: Bearer x`` loses both values).  Where two finds overlap, the
one that starts first names the marker, and at the same start the earlier, more specific rule.
Every pattern starts at a literal, a bounded prefix or a boundary, so megabytes of output stay linear.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

MARKER = re.compile(r"\[REDACTED:[a-z0-9-]{1,40}\]")
MIN_EXTRA_LEN = 6
# A redaction can expose a seam (a boundary check that failed beside a secret passes once the secret is
# a marker), so passes repeat until nothing changes; in practice the second pass is the last.
_MAX_PASSES = 4

# What must come before a key, so that e.g. "task-…" is not read as "sk-…".
_B = r"(?<![A-Za-z0-9])"
_UNREDACTED = r"(?!\[REDACTED:)"

# Names whose values are secrets: *_TOKEN, *_SECRET, *_KEY, *PASSWORD*, *_PASS, *PASSWD*, API_KEY,
# *CREDENTIAL*, and their camelCase forms.  Plurals (max_tokens) and longer words (tokenizer) are not.
_NAME = r"""(?:
    [A-Za-z0-9_.-]{0,60}?(?:password|passwd|passphrase|credential)[A-Za-z0-9_.-]{0,40}
  | (?:[A-Za-z0-9_.-]{0,60}[_.-])?(?:token|secret|api-?key)
  | [A-Za-z0-9_.-]{0,60}[_.-](?:key|pass|pwd)
  | (?-i:[A-Za-z0-9]{0,60}[a-z0-9](?:Token|Secret|Key|Pass|Pwd))
)"""
# The secret is group s (a quoted value's inside), s2 or s3; a value that is already a marker is none.
_ASSIGN = rf"""(?<![A-Za-z0-9_.-])(?P<q>["']?){_NAME}(?P=q)[ \t]*[:=](?![=>])[ \t]*
    (?:
        \[REDACTED:[a-z0-9-]{{1,40}}\](?=[,;)}}\]]*(?:\s|\Z))
      | "(?P<s>(?:[^"\\\n]|\\.)*)"
      | '(?P<s2>(?:[^'\\\n]|\\.)*)'
      | (?P<s3>\S+?)(?=[,;)}}\]]*(?:\s|\Z))    # bare: closing punctuation after it stays
    )"""

_AUTH_SCHEME = r"(?:bearer|basic|token|bot|digest|negotiate)"
_CRED = _UNREDACTED + r"[A-Za-z0-9._~+/=-]"

# Each rule is searched as a lookahead, so its finds may overlap: in "PASSWD= API_KEY=x" the first
# value must not hide the second name.  Group m is the find; s, s2 or s3, where present, its secret.
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(f"(?=(?P<m>{pattern}))", flags))
    for kind, pattern, flags in (
        # A block whose END was cut off (truncated output) is redacted to the end of the text.
        (
            "private-key",
            r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY( BLOCK)?-----[\s\S]*?"
            r"(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY( BLOCK)?-----|\Z)",
            0,
        ),
        (
            "url-password",
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:/?#@\[\]]*:"
            + _UNREDACTED + r"(?P<s>[^\s/@]+)@",
            0,
        ),
        ("slack-webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/+-]+)", 0),
        ("anthropic", _B + r"sk-ant-[A-Za-z0-9_-]{20,}", 0),
        ("openai", _B + r"sk-[A-Za-z0-9_-]{20,}", 0),
        ("stripe", _B + r"(?:(?:sk|rk)_(?:live|test)_|whsec_)[A-Za-z0-9]{10,}", 0),
        ("github", _B + r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})", 0),
        ("slack", _B + r"(?:xox[abprse]-|xapp-)[A-Za-z0-9-]{10,}", 0),
        # Digits, a colon and 35 characters; the digits may follow "bot" in an api.telegram.org URL.
        ("telegram", r"(?<![0-9])[0-9]{6,12}:[A-Za-z0-9_-]{30,}", 0),
        ("aws-access-key", _B + r"(?:AKIA|ASIA)[0-9A-Z]{16,}", 0),
        ("google-api-key", _B + r"AIza[0-9A-Za-z_-]{30,}", 0),
        ("jwt", r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", 0),
        ("secret", _ASSIGN, re.IGNORECASE | re.VERBOSE),
        (
            "authorization",
            rf"\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:{_AUTH_SCHEME}[ \t]+)?"
            rf"(?!{_AUTH_SCHEME}\b)(?P<s>{_CRED}+)",
            re.IGNORECASE,
        ),
        ("bearer", rf"\bbearer[ \t]+(?P<s>{_CRED}{{16,}})", re.IGNORECASE),
    )
)
_SECRET_GROUPS = ("s", "s2", "s3")


def _secret_span(m: re.Match[str]) -> tuple[int, int] | None:
    names = [g for g in _SECRET_GROUPS if g in m.re.groupindex]
    if not names:
        return m.span("m")
    for g in names:
        if m.start(g) != -1:
            return m.span(g)
    return None


@functools.lru_cache(maxsize=32)
def _extra_pattern(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    # Longest first, so a secret that contains another is redacted whole.  Markers already in the text
    # are matched (and kept) first, so that a secret such as "secret" never eats into one.
    usable = sorted({s for s in secrets if len(s.strip()) >= MIN_EXTRA_LEN}, key=lambda s: (-len(s), s))
    if not usable:
        return None
    return re.compile(MARKER.pattern + "|(?P<s>" + "|".join(map(re.escape, usable)) + ")")



def _one_pass(text: str, extra: re.Pattern[str] | None) -> str:
    rules = [*_RULES, ("secret", extra)] if extra is not None else _RULES
    found: list[tuple[int, int, int, str]] = []  # start, rule index, end, kind
    for index, (kind, pattern) in enumerate(rules):
        for m in pattern.finditer(text):
            span = _secret_span(m)
            if span and span[0] < span[1] and not MARKER.fullmatch(text, *span):
                found.append((span[0], index, span[1], kind))
    if not found:
        return text
    found.sort()
    out: list[str] = []
    pos = 0
    for start, _, end, kind in found:
        if end <= pos:
            continue  # inside a span already replaced
        if start >= pos:
            out.append(text[pos:start])
            out.append(f"[REDACTED:{kind}]")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def redact(text: str, extra_secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret it holds replaced by ``[REDACTED:<kind>]``.

    ``extra_secrets`` are literal values (values of secret-looking environment variables, secrets from
    the configuration) redacted wherever they occur; values shorter than six characters are ignored,
    since redacting them would shred ordinary text.
    """
    extra = _extra_pattern(tuple(sorted(set(extra_secrets))))
    for _ in range(_MAX_PASSES):
        redacted = _one_pass(text, extra)
        if redacted == text:
            break
        text = redacted
    return text


_SECRET_NAME = re.compile(rf"{_NAME}\Z", re.IGNORECASE | re.VERBOSE)


def looks_secret(name: str) -> bool:
    """Whether a variable or setting called ``name`` holds a secret (API_KEY, DB_PASSWORD, …)."""
    return _SECRET_NAME.match(name) is not None


def secret_values(environ: Mapping[str, str]) -> list[str]:
    """The values of the secret-looking variables in ``environ``: the ``extra_secrets`` of a run."""
    return [value for name, value in environ.items() if looks_secret(name) and value]
