"""Fake secrets of every format vaultops redacts, built in code (no scanner should take them for live
ones), each as (the text that carries it, its core: the part that must never be written)."""

from __future__ import annotations

import json

from hypothesis import strategies as st

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
MIXED = "A1b2C3d4E5"  # upper, lower and digits: what generated keys look like
FORTY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"  # AWS's documented example secret key, 40 chars
JWT = "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0" + "." + "SflKxwRJSMeKKF2QT4fwpM"
PEM_BODY = "MIIEowIBAAKCAQEA1c7" + MIXED * 4
SSH_BODY = "b3BlbnNzaC1rZXktdjEAAAA" + MIXED * 3


def _key(prefix: str, body: str) -> tuple[str, str]:
    return prefix + body, prefix + body


# name -> (text, core)
FORMATS: dict[str, tuple[str, str]] = {
    "github-ghp": _key("ghp_", MIXED * 3 + "XYZ123"),
    "github-gho": _key("gho_", MIXED * 3 + "XYZ123"),
    "github-ghs": _key("ghs_", MIXED * 3 + "XYZ123"),
    "github-ghu": _key("ghu_", MIXED * 3 + "XYZ123"),
    "github-pat": _key("github_pat_", "11ABCDEFG0_" + MIXED * 5),
    "slack": _key("xoxb-", "1234567890-" + MIXED * 2),
    "telegram": _key("123456789:", "AAH" + "dq7Z" * 8),
    "aws-akia": _key("AKIA", "IOSF0DNN7EXAMPL3"),
    "aws-asia": _key("ASIA", "IOSF0DNN7EXAMPL3"),
    "aws-secret-named": (f"aws_secret_access_key {FORTY}", FORTY),
    "aws-secret-bare": (f"the key {FORTY} was printed", FORTY),
    "stripe-live": _key("sk_live_", "51Hq" + MIXED * 2),
    "stripe-restricted": _key("rk_live_", "51Hq" + MIXED * 2),
    "stripe-test": _key("sk_test_", "51Hq" + MIXED * 2),
    "openai": _key("sk-proj-", MIXED * 3),
    "anthropic": _key("sk-ant-api03-", MIXED * 3),
    "google": _key("AIza", "Sy" + MIXED * 3 + "abc"),
    "jwt": (f"token {JWT}", JWT),
    "pem": (f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----", PEM_BODY),
    "openssh": (
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SSH_BODY}\n-----END OPENSSH PRIVATE KEY-----",
        SSH_BODY,
    ),
    "url-password": ("postgres://bob:pwZq7Zq7Zq7@db.example.invalid/app", "pwZq7Zq7Zq7"),
    "env-assignment": ("DB_PASSWORD=hunter2-" + MIXED, "hunter2-" + MIXED),
    "export": ("export MYAPP_SECRET=s3cr3t-" + MIXED, "s3cr3t-" + MIXED),
    "yaml": ("client_secret: yml-" + MIXED, "yml-" + MIXED),
    "json": ('{"api_key": "jsn-' + MIXED + '"}', "jsn-" + MIXED),
    "bearer": ("Authorization: Bearer brr." + MIXED * 2, "brr." + MIXED * 2),
    "password-is": ("the password is hunter2xyz" + MIXED, "hunter2xyz" + MIXED),
    "query": ("https://api.example.invalid/v1?access_token=qry" + MIXED + "&page=2", "qry" + MIXED),
    "query-encoded": ("next=%2Fcb%3Fapi_key%3Denc" + MIXED + "%26x%3D1", "enc" + MIXED),
}


def ansi_split(text: str, core: str) -> str:
    """The core cut in two by a colour code, the whole wrapped in another."""
    half = len(core) // 2
    return "\x1b[1m" + text.replace(core, core[:half] + "\x1b[31m" + core[half:]) + "\x1b[0m"


def json_escaped(text: str, core: str) -> str:
    """The text as a JSON string's inside, one letter of the core as a \\u escape."""
    inside = json.dumps(text)[1:-1]
    at = next(i for i, c in enumerate(core) if c.isalpha())
    escaped = core[:at] + f"\\u{ord(core[at]):04x}" + json.dumps(core[at + 1 :])[1:-1]
    return inside.replace(json.dumps(core)[1:-1], escaped)


def doubly_encoded(text: str, core: str) -> str:
    """The text in a JSON string in a JSON string (an agent's tool result inside its transcript)."""
    return json.dumps(json.dumps({"out": text}))[1:-1]


WRAPPINGS = {"plain": lambda t, c: t, "ansi": ansi_split, "json": json_escaped, "json2": doubly_encoded}


def _generated(prefix: str, size: int, alphabet: str = ALNUM) -> st.SearchStrategy[tuple[str, str]]:
    body = st.text(alphabet=alphabet, min_size=size, max_size=size + 8).map(lambda b: "7a" + b)
    return body.map(lambda b: (prefix + b, prefix + b))


def _inside(template: str, alphabet: str = ALNUM) -> st.SearchStrategy[tuple[str, str]]:
    body = st.text(alphabet=alphabet, min_size=10, max_size=30).map(lambda b: "Q9" + b)
    return body.map(lambda b: (template.format(b), b))


GENERATED = st.one_of(
    *[_generated(p, 34) for p in ("ghp_", "gho_", "ghs_", "ghu_")],
    _generated("github_pat_", 30, ALNUM + "_"),
    _generated("xoxb-", 20, ALNUM + "-"),
    _generated("sk_live_", 20),
    _generated("rk_live_", 20),
    _generated("sk_test_", 20),
    _generated("sk-proj-", 24),
    _generated("sk-ant-api03-", 24),
    _inside("AKIA{}", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789").filter(lambda t: len(t[1]) >= 16),
    _inside("DB_PASSWORD={}"),
    _inside("export API_TOKEN={}"),
    _inside("client_secret: {}"),
    _inside('{{"password": "{}"}}'),
    _inside("Authorization: Bearer {}"),
    _inside("https://u:{}@host.example.invalid/x"),
    _inside("https://host.example.invalid/?x=1&access_token={}&y=2"),
    _inside("the password is {}"),
    _inside("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----"),
)
