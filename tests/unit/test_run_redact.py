"""redact(): a table per kind, ordinary text left alone, and properties over random text."""

from __future__ import annotations

import string

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from vaultops.base.redact import MARKER, looks_secret, redact, secret_values

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH\n"
    "lWu2/a1gB9JW5TBQ+AVpum9Okx7KfqkfBKL9mcHgSL0yWMdjMfNOqNtrQqKlN4kE\n-----END RSA PRIVATE KEY-----"
)

# (text, expected): every kind once, with the secret in a realistic setting.
CASES = [
    ("key sk-ant-api03-AbC_dEf-0123456789abcdefghijklmnop done", "key [REDACTED:anthropic] done"),
    ("OPENAI sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34 end", "OPENAI [REDACTED:openai] end"),
    ("legacy sk-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv12Wx34", "legacy [REDACTED:openai]"),
    ("stripe sk_live_51HqLyjAbCdEfGhIj0123", "stripe [REDACTED:stripe]"),
    ("stripe sk_test_51HqLyjAbCdEfGhIj0123", "stripe [REDACTED:stripe]"),
    ("restricted rk_live_51HqLyjAbCdEfGhIj0123", "restricted [REDACTED:stripe]"),
    ("webhook whsec_AbCdEfGhIjKlMnOpQrStUv", "webhook [REDACTED:stripe]"),
    ("square sq0atp-9Kp2vQvD6xE2nYk3s7T8wA", "square [REDACTED:square]"),
    (
        "braintree access_token$production$x9f2k3m4n5p6q7r8$0123456789abcdef0123456789abcdef x",
        "braintree [REDACTED:braintree] x",
    ),
    ("discord MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs", "discord [REDACTED:discord]"),
    ("mailchimp 0123456789abcdef0123456789abcdef-us14 x", "mailchimp [REDACTED:mailchimp] x"),
    ("vault hvs.CAESIJ7Xq3r9Lk2mN5pQ8sT1vW4yZ6aB0cD3eF6gH9jK2lM5nP8qR1", "vault [REDACTED:vault]"),
    ("rsync -a host:/srv/data ./backup", "rsync -a host:/srv/data ./backup"),  # a path, no password
    ("rsync -a host:~/data .", "rsync -a host:~/data ."),
    ("do dop_v1_" + "0123456789abcdef" * 4 + " x", "do [REDACTED:digitalocean] x"),
    ("shop shpat_" + "0123456789abcdef" * 2 + " x", "shop [REDACTED:shopify] x"),
    ("db dapi" + "0123456789abcdef" * 2 + " x", "db [REDACTED:databricks] x"),
    ("figma figd_" + "Ab1_Cd2-Ef3" * 4 + " x", "figma [REDACTED:figma] x"),
    ("grafana glsa_" + "Ab1Cd2Ef3Gh" * 4 + " x", "grafana [REDACTED:grafana] x"),
    ("ps pscale_tkn_" + "Ab1Cd2Ef3Gh" * 4 + " x", "ps [REDACTED:planetscale] x"),
    ("ts tskey-auth-" + "kAb1Cd2Ef3-Gh4Ij5Kl6Mn7" + " x", "ts [REDACTED:tailscale] x"),
    ("jira ATATT3xFfGF0" + "Ab1Cd2Ef3Gh" * 6 + " x", "jira [REDACTED:atlassian] x"),
    ("fly FlyV1 fm2_" + "Ab1Cd2Ef3Gh" * 5 + " x", "fly FlyV1 [REDACTED:fly] x"),
    ("doppler dp.st.prd." + "Ab1Cd2Ef3Gh" * 4 + " x", "doppler [REDACTED:doppler] x"),
    ("pulumi pul-" + "0123456789abcdef" * 2 + "01234567 x", "pulumi [REDACTED:pulumi] x"),
    ("supabase sbp_" + "0123456789abcdef" * 2 + "01234567 x", "supabase [REDACTED:supabase] x"),
    ("vercel vercel_" + "Ab1Cd2Ef3Gh" * 3 + " x", "vercel [REDACTED:vercel] x"),
    (
        "okta Authorization: SSWS 00Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz",
        "okta Authorization: SSWS [REDACTED:authorization]",
    ),
    ("gh ghp_1234567890abcdefghijABCDEFGHIJ123456", "gh [REDACTED:github]"),
    ("gh gho_1234567890abcdefghijABCDEFGHIJ123456", "gh [REDACTED:github]"),
    ("gh ghu_1234567890abcdefghijABCDEFGHIJ123456", "gh [REDACTED:github]"),
    ("gh ghs_1234567890abcdefghijABCDEFGHIJ123456", "gh [REDACTED:github]"),
    ("gh ghr_1234567890abcdefghijABCDEFGHIJ123456", "gh [REDACTED:github]"),
    ("pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "pat [REDACTED:github]"),
    ("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack [REDACTED:slack]"),
    ("slack xoxp-123456789012-abcdef", "slack [REDACTED:slack]"),
    (
        "post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX now",
        "post to https://hooks.slack.com/services/[REDACTED:slack-webhook] now",
    ),
    ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ ok", "bot [REDACTED:telegram] ok"),
    (
        "GET https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ/getMe",
        "GET https://api.telegram.org/bot[REDACTED:telegram]/getMe",
    ),
    ("id AKIAIOSFODNN7EXAMPLE,", "id [REDACTED:aws-access-key],"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nregion = x",
        "aws_secret_access_key = [REDACTED:secret]\nregion = x",
    ),
    ("maps AIzaSyA-1234567890abcdefghijklmnopqrstu", "maps [REDACTED:google-api-key]"),
    (f"token {JWT} end", "token [REDACTED:jwt] end"),
    ("Authorization: Bearer abc.DEF-123_xyz", "Authorization: Bearer [REDACTED:authorization]"),
    ('-H "authorization: Basic dXNlcjpwYXNz"', '-H "authorization: Basic [REDACTED:authorization]"'),
    ("X-Auth: Bearer abcdefghijklmnopqrstuvwxyz", "X-Auth: Bearer [REDACTED:bearer]"),
    ("postgres://bob:hunter22@db.local:5432/app", "postgres://bob:[REDACTED:url-password]@db.local:5432/app"),
    ("redis://:s3cr3t!pw@cache:6379", "redis://:[REDACTED:url-password]@cache:6379"),
    (f"before\n{PEM}\nafter", "before\n[REDACTED:private-key]\nafter"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA", "[REDACTED:private-key]"),
    ("export DB_PASSWORD=hunter2 && go", "export DB_PASSWORD=[REDACTED:secret] && go"),
    ("MYAPP_TOKEN=abc123", "MYAPP_TOKEN=[REDACTED:secret]"),
    ("CLIENT_SECRET: abc123", "CLIENT_SECRET: [REDACTED:secret]"),
    ("STRIPE_KEY=abc123", "STRIPE_KEY=[REDACTED:secret]"),
    ("SMTP_PASS=abc123", "SMTP_PASS=[REDACTED:secret]"),
    ("MYSQL_PASSWD=abc123", "MYSQL_PASSWD=[REDACTED:secret]"),
    ("API_KEY=abc123", "API_KEY=[REDACTED:secret]"),
    ("GOOGLE_CREDENTIALS=/etc/creds.json", "GOOGLE_CREDENTIALS=[REDACTED:secret]"),
    ('{"api_key": "abc123", "n": 1}', '{"api_key": "[REDACTED:secret]", "n": 1}'),
    ("{'password': 'p@ss word'}", "{'password': '[REDACTED:secret]'}"),
    ('"accessToken":"abc123"', '"accessToken":"[REDACTED:secret]"'),
    ('password = "unterminated', "password = [REDACTED:secret]"),
    ("--token=abc123 --verbose", "--token=[REDACTED:secret] --verbose"),
    ("{secret: abc123}", "{secret: [REDACTED:secret]}"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_each_kind(text: str, expected: str) -> None:
    assert redact(text) == expected


GH = "ghp_" + "A1b2C3d4E5" * 3 + "XYZ123"  # fake, built in code
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
# Secrets behind an encoding, or with no assignment: (text, expected).
ENCODED = [
    (GH[:12] + "\x1b[31m" + GH[12:] + "\x1b[0m ok", "[REDACTED:github]\x1b[0m ok"),
    ("DB_\x1b[1mPASSWORD\x1b[0m=hunter2", "DB_\x1b[1mPASSWORD\x1b[0m=[REDACTED:secret]"),
    ('{"password":"s3cr\\u0065t"}', '{"password":"[REDACTED:secret]"}'),
    ('{\\"token\\": \\"abc123def\\"}', '{\\"token\\": \\"[REDACTED:secret]\\"}'),
    ("ghp\\u005f" + GH[4:], "[REDACTED:github]"),
    ('"result":"set DB_PASSWORD=hunter2","cost":1', '"result":"set DB_PASSWORD=[REDACTED:secret]","cost":1'),
    (
        "https://x.invalid/cb?access_token=abcdef123&state=ok#f",
        "https://x.invalid/cb?access_token=[REDACTED:secret]&state=ok#f",
    ),
    ("&api_key=abcdef123&x=1", "&api_key=[REDACTED:secret]&x=1"),
    (
        "next=%2Fcb%3Faccess_token%3Dabcdef123%26s%3D1",
        "next=%2Fcb%3Faccess_token%3D[REDACTED:secret]%26s%3D1",
    ),
    (f"aws_secret_access_key {AWS_SECRET}", "aws_secret_access_key [REDACTED:secret]"),
    (f"the key {AWS_SECRET} is here", "the key [REDACTED:aws-secret-key] is here"),
    ("password is hunter2xyz.", "password is [REDACTED:secret]."),
    ("secret key = Zx9Qw8Er7Ty6", "secret key = [REDACTED:secret]"),
]


@pytest.mark.parametrize(("text", "expected"), ENCODED)
def test_encoded_and_bare_secrets(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert redact(expected) == expected


ORDINARY = [
    "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)",
    "request 123e4567-e89b-12d3-a456-426614174000 done",
    "/usr/local/lib/python3.11/site-packages/transformers/tokenization_utils.py",
    "tokenizer=bpe token_count: 5 max_tokens: 1024",
    '{"usage": {"input_tokens": 12, "output_tokens": 40, "cache_read_input_tokens": 0}}',
    "- type: env-check\n- key: value\n- priority: high",
    "PWD=/home/user KEY=1 monkey: banana",
    "2026-05-04T08:31:02+10:00 status: done",
    "the task-runner-for-the-whole-project-is-ready",
    "if token == expected: return",
    "Password:\n  (prompt shown)",
    "Authorization: Bearer",
    "a bearer of news",
    "git commit 3f786850e387550fdab836ed7e6dc881de23001b: fix the token refresh",
    "token 123e4567-e89b-12d3-a456-426614174000",
    "/home/user/projects/MyApp2/src/Main/Code1/file.py",
    "Users/Alice/Documents/Project2024/Report",
    "the password is required; the token expired; a secret santa",
    "token count 12, tokens: 5, secret_santa_list",
    "\x1b[32mok\x1b[0m: 3 passed in 0.4 s",
    '{"path": "C:\\\\Users\\\\x", "n": 1}',
    "https://example.com/search?q=100%25+cotton&page=2",
    # near misses of the rules for the formats an attacker found
    "docker run -u 1000:1000 img; sort -u file; git push -u origin main",
    "PASS: tests/foo.sh\nPWD=/home/user\npass: true\npwd: ~/src",
    "<max_tokens>5</max_tokens> <tokenizer>bpe</tokenizer>",
    "the fortune cookie: tasty; hf_hub_download(repo)",
    "ssh://git@github.com/o/r.git https://alice.smith@example.com/x",
    "a &amp; b &lt;c&gt; caf\u00e9 \uff08note\uff09 100%25",
    "line one\r\nline two\r\n12:30:45 ok",
    "id SK" + "0123456789abcdef" * 2 + " in a list",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b 123e4567-e89b-12d3-a456-426614174000",
    "/usr/local/lib/python3.11/site-packages/x.py:12:3: E501 line too long",
    "price $1$ off; echo $1$2",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_untouched(text: str) -> None:
    assert redact(text) == text


def test_kind_of_inner_secret_wins_over_the_assignment() -> None:
    assert redact("GITHUB_TOKEN=ghp_1234567890abcdefghijABCDEFGHIJ123456") == "GITHUB_TOKEN=[REDACTED:github]"


def test_extra_secrets_redacted_everywhere_short_ones_ignored() -> None:
    text = "conn=hunter2-xyz; again hunter2-xyz; ab; abc123x"
    out = redact(text, ["hunter2-xyz", "ab", "     "])
    assert out == "conn=[REDACTED:secret]; again [REDACTED:secret]; ab; abc123x"


def test_extra_secret_does_not_eat_markers() -> None:
    once = redact("x sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx secret", ["secret", "REDACTED"])
    assert once == "x [REDACTED:anthropic] [REDACTED:secret]"
    assert redact(once, ["secret", "REDACTED"]) == once


def test_longest_extra_secret_wins() -> None:
    assert redact("abcdef-ghijkl", ["abcdef", "abcdef-ghijkl"]) == "[REDACTED:secret]"


def test_secret_names_and_values() -> None:
    assert looks_secret("ANTHROPIC_API_KEY") and looks_secret("PGPASSWORD") and looks_secret("GH_TOKEN")
    assert not looks_secret("PATH") and not looks_secret("HOME") and not looks_secret("MAX_TOKENS")
    env = {"HOME": "/root", "SLACK_TOKEN": "xoxb-1", "DB_PASSWORD": "", "PATH": "/bin"}
    assert secret_values(env) == ["xoxb-1"]


def test_a_large_text_takes_time_in_proportion_to_its_size() -> None:
    """No pattern backtracks over a long output: ten times the text takes about ten times as long, never
    the hundred times a quadratic pattern would.  A ratio of two runs back to back in this process (CPU
    time), so a slow or busy machine passes as well as a quick one."""
    import time

    chunk = "line 3f786850e387550fdab836ed7e6dc881de23001b /usr/lib/x.py token_count=5 ok\n"

    def cpu(lines: int) -> float:
        text = chunk * lines + "API_KEY=zzz\n"  # 60,000 lines: ~5 MB
        start = time.process_time()
        out = redact(text)
        spent = time.process_time() - start
        assert out.endswith("API_KEY=[REDACTED:secret]\n")
        return spent

    small = min(cpu(6_000), cpu(6_000))
    assert cpu(60_000) < 30 * small


# --- properties ------------------------------------------------------------------------------------

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
TOKEN_CHARS = ALNUM + "_-"


def _s(alphabet: str, lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=lo, max_size=hi)


# Each strategy gives (text to embed, the secret part that must not survive).
Secret = st.SearchStrategy[tuple[str, str]]


def _whole(prefix: st.SearchStrategy[str], body: st.SearchStrategy[str]) -> Secret:
    return st.tuples(prefix, body).map(lambda t: (t[0] + t[1], t[0] + t[1]))


def _inside(template: str, body: st.SearchStrategy[str]) -> Secret:
    return body.map(lambda b: (template.format(b), b))


SECRETS = st.one_of(
    _whole(st.just("sk-ant-api03-"), _s(TOKEN_CHARS, 20, 100)),
    _whole(st.sampled_from(["sk-", "sk-proj-"]), _s(TOKEN_CHARS, 20, 80)),
    _whole(st.sampled_from(["sk_live_", "sk_test_", "rk_live_", "whsec_"]), _s(ALNUM, 10, 60)),
    _whole(st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]), _s(ALNUM, 36, 40)),
    _whole(st.just("github_pat_"), _s(ALNUM + "_", 22, 82)),
    _whole(st.sampled_from(["xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"]), _s(ALNUM + "-", 10, 60)),
    _inside("https://hooks.slack.com/services/{}", _s(ALNUM + "/", 20, 60)),
    _whole(_s(string.digits, 8, 10).map(lambda d: d + ":"), _s(TOKEN_CHARS, 35, 35)),
    _inside("https://api.telegram.org/bot1234567890:{}/sendMessage", _s(TOKEN_CHARS, 35, 35)),
    _whole(st.sampled_from(["AKIA", "ASIA"]), _s(string.ascii_uppercase + string.digits, 16, 16)),
    _inside("aws_secret_access_key = {}", _s(ALNUM + "/+", 40, 40)),
    _whole(st.just("AIza"), _s(TOKEN_CHARS, 35, 35)),
    _whole(
        st.just("eyJ"),
        st.tuples(_s(TOKEN_CHARS, 8, 40), _s(TOKEN_CHARS, 8, 80), _s(TOKEN_CHARS, 0, 43)).map(
            lambda p: f"{p[0]}.eyJ{p[1]}.{p[2]}"
        ),
    ),
    _inside("Authorization: Bearer {}", _s(ALNUM + "._~+/=-", 8, 60)),
    _inside("https://user:{}@example.com/x", _s(ALNUM + "!$%^*", 8, 30)),
    _inside("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----", _s(ALNUM + "+/=\n", 8, 200)),
    st.tuples(
        st.sampled_from(
            [
                "DB_PASSWORD",
                "GH_TOKEN",
                "APP_SECRET",
                "X_KEY",
                "SMTP_PASS",
                "API_KEY",
                "MY_CREDENTIALS",
                "mysql_passwd",
                "clientSecret",
            ]
        ),
        st.sampled_from(["=", ": ", " = ", ":"]),
        _s(ALNUM + "!@#$%^&*./+", 8, 40),
    ).map(lambda t: (f"{t[0]}{t[1]}{t[2]}", t[2])),
    st.tuples(st.sampled_from(["password", "api_key", "access_token"]), _s(ALNUM + " !#$%&", 8, 40)).map(
        lambda t: (f'"{t[0]}": "{t[1]}"', t[1])
    ),
    # vendors' formats the fresh secrets corpus found unredacted (issue 27)
    _whole(st.sampled_from(["sq0atp-", "sq0csp-"]), _s(TOKEN_CHARS, 22, 60)),
    _whole(st.just("EAAA"), _s(TOKEN_CHARS, 60, 70)),
    _inside(
        "access_token$production${}",
        st.tuples(_s("abcdefghij0123456789", 16, 16), _s(HEX, 32, 32)).map(lambda t: f"{t[0]}${t[1]}"),
    ),
    _whole(_s(HEX, 32, 32), st.sampled_from(["-us1", "-us14", "-us21"])),
    _whole(st.just("gsk_"), _s(ALNUM, 52, 52)),
    _whole(st.just("nfp_"), _s(ALNUM, 36, 40)),
    _whole(st.sampled_from(["NRAK-", "NRII-", "NRJS-"]), _s(string.ascii_uppercase + string.digits, 27, 32)),
    _whole(st.just("lin_api_"), _s(ALNUM, 40, 40)),
    _whole(st.just("secret_"), _s(ALNUM, 43, 43)),
    _whole(st.just("ntn_"), _s(ALNUM, 46, 50)),
    _inside("PMAK-{}", st.tuples(_s(HEX, 24, 24), _s(HEX, 34, 34)).map(lambda t: f"{t[0]}-{t[1]}")),
    _whole(st.just("AGE-SECRET-KEY-1"), _s("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58, 58)),
    _whole(st.sampled_from(["hvs.", "hvb."]), _s(TOKEN_CHARS, 24, 100)),
    _whole(
        st.sampled_from("MNO"),
        st.tuples(_s(TOKEN_CHARS, 23, 26), _s(TOKEN_CHARS, 6, 6), _s(TOKEN_CHARS, 27, 38)).map(".".join),
    ),
    _inside("Authorization: SSWS {}", _s(ALNUM + "_-", 40, 42)),
)
# Noise built from the pieces the patterns look for, so that near-misses and seams get explored.
PIECES = [
    "password",
    "_token",
    "KEY",
    "=",
    ": ",
    ":",
    "Bearer ",
    "Authorization: ",
    "https://",
    "u:",
    "@",
    "sk-",
    "ghp_",
    "eyJ",
    "AKIA",
    "123456789:",
    "-----BEGIN PRIVATE KEY-----",
    "[REDACTED:x]",
    "[",
    "]",
    '"',
    "'",
    "_",
    "-",
    ".",
    "/",
    " ",
    "\n",
    "a",
    "Z",
    "0",
    "é",
    "secret",
]
NOISE = st.one_of(st.text(), st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
SEPARATORS = st.sampled_from([" ", "\n", "\t", "  ", " (", ") ", ", ", "\n\n"])


@given(NOISE, SECRETS, SEPARATORS, SEPARATORS, NOISE)
# a header name before the header: its match took the second name as its value and passed the token over
@example("AUTHORIZATION:", ("Authorization: Bearer 00000000", "00000000"), " ", " ", "")
@example("", ("Authorization: Bearer 00000000", "00000000"), " ", " ", ":")  # a colon after the token
def test_generated_secret_never_survives(
    before: str, secret: tuple[str, str], sep1: str, sep2: str, after: str
) -> None:
    embedded, part = secret
    # The secret must be the only copy of itself, not a coincidence with the template or the noise.
    assume(embedded.count(part) == 1 and part not in before and part not in after)
    out = redact(before + sep1 + embedded + sep2 + after)
    assert part not in MARKER.sub("\0", out)


@given(NOISE, st.lists(NOISE, max_size=3))
def test_idempotent_and_total_on_any_text(text: str, extra: list[str]) -> None:
    once = redact(text, extra)
    assert redact(once, extra) == once


@given(st.lists(st.tuples(NOISE, SECRETS), max_size=4), st.lists(_s(ALNUM, 6, 12), max_size=2))
def test_idempotent_with_secrets(parts: list[tuple[str, tuple[str, str]]], extra: list[str]) -> None:
    text = "".join(noise + embedded for noise, (embedded, _) in parts)
    once = redact(text, extra)
    assert redact(once, extra) == once


@given(NOISE, _s(ALNUM + "!-_", 6, 30))
def test_extra_secret_never_survives(text: str, secret: str) -> None:
    assume(secret not in text)
    cut = len(text) // 2
    assert secret not in MARKER.sub("\0", redact(text[:cut] + secret + text[cut:], [secret]))


# --- formats and forms an attacker found unredacted -------------------------------------------------------

HEX32 = "0123456789abcdef" * 2
M = "A1b2C3d4E5"  # fake token material, built in code
ATTACKS = [
    ("glpat-" + "x1" * 10, "[REDACTED:gitlab]"),
    ("npm_" + M * 4, "[REDACTED:npm]"),
    ("//registry.npmjs.org/:_authToken=npm_" + M * 4, "//registry.npmjs.org/:_authToken=[REDACTED:npm]"),
    ("pypi-AgEIcHlwaS5vcmc" + M * 5, "[REDACTED:pypi]"),
    ("hf_" + M * 4, "[REDACTED:huggingface]"),
    ("SG." + M * 2 + "ab." + M * 4 + "abc", "[REDACTED:sendgrid]"),
    ("twilio key SK" + HEX32, "twilio key [REDACTED:twilio]"),
    ("AC" + HEX32 + ":" + HEX32[::-1], "AC" + HEX32 + ":[REDACTED:twilio]"),
    (
        "AccountSid=AC" + HEX32 + " AuthToken=" + HEX32,
        "AccountSid=AC" + HEX32 + " AuthToken=[REDACTED:secret]",
    ),
    (
        "https://discord.com/api/webhooks/123456789012345678/" + M * 6,
        "https://discord.com/api/webhooks/123456789012345678/[REDACTED:discord-webhook]",
    ),
    ("hooks.slack.com/services/T0/B0/" + M * 2, "hooks.slack.com/services/[REDACTED:slack-webhook]"),
    ("jwt eyJhbGciOiJub25lIn0.e30. ok", "jwt [REDACTED:jwt] ok"),
    ('{"auth": "Ym9iOnB3' + M + '"}', '{"auth": "[REDACTED:docker-auth]"}'),
    ('"private_key_id": "' + HEX32 + '"', '"private_key_id": "[REDACTED:gcp-key-id]"'),
    ("pwd=S3cr3t!x", "pwd=[REDACTED:secret]"),
    ("pass: hunter2x", "pass: [REDACTED:secret]"),
    ("passwd: hunter", "passwd: [REDACTED:secret]"),
    ("<password>hunter2</password>", "<password>[REDACTED:secret]</password>"),
    ("<Password a='1'>hunter2</Password>", "<Password a='1'>[REDACTED:secret]</Password>"),
    ("Cookie: session=" + M + "; x=1", "Cookie: [REDACTED:cookie]"),
    ("Set-Cookie: sid=" + M + "; Path=/", "Set-Cookie: [REDACTED:cookie]"),
    ("https://maps.invalid/x?key=" + M + "&v=3", "https://maps.invalid/x?key=[REDACTED:secret]&v=3"),
    ("db.local:5432:app:bob:pw" + M, "db.local:5432:app:bob:[REDACTED:pgpass]"),
    ("bob:$apr1$abcdefgh$" + M * 3, "bob:[REDACTED:password-hash]"),
    ("alice:$2y$10$" + M * 5 + "abc", "alice:[REDACTED:password-hash]"),
    ("curl -u bob:PW" + M + " https://x", "curl -u bob:[REDACTED:secret] https://x"),
    ("curl --user bob:PW" + M, "curl --user bob:[REDACTED:secret]"),
    ("mysql -u root -pPW" + M + " db", "mysql -u root -p[REDACTED:secret] db"),
    ("mysql --password=PW" + M, "mysql --password=[REDACTED:secret]"),
    ("sshpass -p PW" + M + " ssh host", "sshpass -p [REDACTED:secret] ssh host"),
    ("PGPASSWORD=" + M + " psql", "PGPASSWORD=[REDACTED:secret] psql"),
    ("https://" + HEX32 + "01234567@github.com/o/r", "https://[REDACTED:url-token]@github.com/o/r"),
    ("https://" + GH + "@github.com/o/r", "https://[REDACTED:github]@github.com/o/r"),
]


@pytest.mark.parametrize(("text", "expected"), ATTACKS)
def test_attack_formats(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert redact(expected) == expected


# A GitHub token hidden by an invisible character, a compatibility form or an escape: redacted whole.
HIDDEN = [
    *(GH[:10] + c + GH[10:] for c in ("\u200b", "\u200c", "\u200d", "\ufeff", "\u00ad", "\r", "\\\n")),
    "".join(chr(ord(c) + 0xFEE0) for c in GH),  # fullwidth
    "".join(f"\\x{ord(c):02x}" for c in GH[:6]) + GH[6:],
    "&#103;" + GH[1:],
    "&#x67;&#x68;" + GH[2:],
    "%2567" + GH[1:],
    "%252567" + GH[1:],
]


@pytest.mark.parametrize("hidden", HIDDEN)
def test_hidden_token_redacted_whole(hidden: str) -> None:
    assert redact(f"got {hidden} ok") == "got [REDACTED:github] ok"


WRAPPED_TOKENS = [
    "ghp_1234567890abcdefghijABCDEFGHIJ123456",
    "hvs.CAESIJ7Xq3r9Lk2mN5pQ8sT1vW4yZ6aB0cD3eF6gH9jK2lM5nP8qR1xYz0AbCdEfGhIjKl",
    "sk-ant-api03-AbC_dEf-0123456789abcdefghijklmnopQRSTUVWXYZ012345",
    "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",
]


@pytest.mark.parametrize("token", WRAPPED_TOKENS)
@pytest.mark.parametrize("before", ["", "token: ", "export API_TOKEN="])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_secret_wrapped_onto_the_next_lines_is_redacted_whole(
    token: str, before: str, newline: str
) -> None:
    """A terminal or an editor folds a long key: each whole line of key characters after it is the key's
    (issue 27: a line-wrapped key was redacted on its first line only).  The first line is still a key."""
    cuts = [len(token) - 32, len(token) - 16] if len(token) >= 64 else [len(token) - 16]
    pieces = [token[i:j] for i, j in zip([0, *cuts], [*cuts, len(token)], strict=True)]
    out = redact(f"{before}{newline.join(pieces)}{newline}the next line stays")
    assert all(piece not in out for piece in pieces[1:]), out
    assert out.endswith(f"{newline}the next line stays")


def test_a_line_of_words_after_a_secret_is_not_taken_for_its_rest() -> None:
    assert redact("ghp_1234567890abcdefghijABCDEFGHIJ123456\nordinary words here") == (
        "[REDACTED:github]\nordinary words here"
    )
