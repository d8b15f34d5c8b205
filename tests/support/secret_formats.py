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
HEX32 = "0123456789abcdef" * 2


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
    "gitlab": _key("glpat-", MIXED * 2),
    "npm": _key("npm_", MIXED * 4),
    "npmrc": ("//registry.npmjs.org/:_authToken=npm_" + MIXED * 4, "npm_" + MIXED * 4),
    "pypi": _key("pypi-AgEI", "cHlwaS5vcmc" + MIXED * 5),
    "huggingface": _key("hf_", MIXED * 4),
    "sendgrid": _key("SG.", MIXED * 2 + "ab." + MIXED * 4 + "abc"),
    "twilio": ("twilio api key SK" + HEX32, "SK" + HEX32),
    "discord-webhook": ("https://discord.com/api/webhooks/123456789012345678/" + MIXED * 6, MIXED * 6),
    "slack-webhook": ("https://hooks.slack.com/services/T0/B0/" + MIXED * 2, MIXED * 2),
    "jwt-unsigned": ("token eyJ" + "hbGciOiJub25lIn0" + ".e30.", "eyJ" + "hbGciOiJub25lIn0"),
    "docker-auth": ('{"auths": {"r.invalid": {"auth": "Ym9i' + MIXED + '"}}}', "Ym9i" + MIXED),
    "gcp-key-id": ('{"private_key_id": "' + HEX32 + '"}', HEX32),
    "pwd": ("pwd=pw" + MIXED, "pw" + MIXED),
    "xml": ("<password>xm" + MIXED + "</password>", "xm" + MIXED),
    "cookie": ("Cookie: session=ck" + MIXED, "ck" + MIXED),
    "query-key": ("https://maps.example.invalid/x?key=mk" + MIXED + "&v=3", "mk" + MIXED),
    "pgpass": ("db.example.invalid:5432:app:bob:pg" + MIXED, "pg" + MIXED),
    "htpasswd": ("bob:$apr1$abcdefgh$" + MIXED * 3, MIXED * 3),
    "curl-user": ("curl -u bob:cu" + MIXED + " https://x.invalid", "cu" + MIXED),
    "mysql": ("mysql -u root -pmy" + MIXED + " app", "my" + MIXED),
    "sshpass": ("sshpass -p sp" + MIXED + " ssh host", "sp" + MIXED),
    "url-user-token": ("https://" + HEX32 + "0123abcd@github.com/o/r", HEX32 + "0123abcd"),
    "zero-width": ("ghp_" + MIXED + "\u200b" + MIXED * 2 + "XYZ123", MIXED * 2 + "XYZ123"),
    "fullwidth": (
        "".join(chr(ord(c) + 0xFEE0) for c in "ghp_" + MIXED * 3),
        "".join(chr(ord(c) + 0xFEE0) for c in MIXED * 3),
    ),
    "html-entity": ("&#103;hp_" + MIXED * 3 + "XYZ123", MIXED * 3 + "XYZ123"),
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
