"""Secrets out of text, before it reaches the vault, a log or a notification.

Every hit becomes ``[REDACTED:<kind>]``.  Each rule finds the secrets it knows in the original text and
the union of what they found is replaced, so no rule can hide a secret from another by redacting its
context first (``PASSWD= Authorization: Bearer x`` loses both values).  Where two finds overlap, the
one that starts first names the marker, and at the same start the earlier, more specific rule.
Every search starts at a literal, a bounded prefix or a boundary and never rescans what it has passed,
so megabytes of agent output stay linear.

The rules also run over the text's decoded views (vaultops.base.unescape): ANSI codes removed, JSON string
escapes and URL percent-escapes undone.  A secret split by a colour code or written ``s3cr\u0065t`` is
found there and replaced in the text itself, escapes and all.  Redacting twice changes nothing more.
"""

from __future__ import annotations

import functools
import math
import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from vaultops.base.unescape import View, views

MARKER = re.compile(r"\[REDACTED:[a-z0-9-]{1,40}\]")
MIN_EXTRA_LEN = 6
# A redaction can expose a seam (a boundary check that failed beside a secret passes once the secret is
# a marker), so passes repeat until nothing changes; in practice the second pass is the last.
_MAX_PASSES = 4

Found = tuple[int, int, str]  # start, end, kind
_Finder = Callable[[str], Iterator[Found]]

_UNREDACTED = r"(?!\[REDACTED:)"
_AUTH_SCHEME = r"(?:bearer|basic|token|bot|digest|negotiate|ssws)"  # SSWS: Okta's API tokens
_CRED = _UNREDACTED + r"[A-Za-z0-9._~+/=-]"

# Keys recognisable by their shape, one alternative per kind (group names are kinds, "_" for "-").  One
# regex rather than one per kind: a single scan of the text.  Earlier alternatives win at one position.
_KEYS = re.compile(
    r"""
    (?<![A-Za-z0-9])        # so that e.g. "task-…" is not read as "sk-…"
    (?: (?P<anthropic>sk-ant-[A-Za-z0-9_-]{20,})
      | (?P<openai>sk-[A-Za-z0-9_-]{20,})
      | (?P<stripe>(?:(?:sk|rk)_(?:live|test)_|whsec_)[A-Za-z0-9]{10,})
      | (?P<github>gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})
      | (?P<slack>(?:xox[abprse]-|xapp-)[A-Za-z0-9-]{10,})
      | (?P<aws_access_key>(?:AKIA|ASIA)[0-9A-Z]{16,})
      | (?P<google_api_key>AIza[0-9A-Za-z_-]{30,})
      | (?P<gitlab>gl(?:pat|dt|rt|ptt|cbt|ffct|soat|imt|agent)-[A-Za-z0-9_-]{20,})
      | (?P<npm>npm_[A-Za-z0-9]{30,})
      | (?P<pypi>pypi-AgE[A-Za-z0-9_-]{40,})
      | (?P<huggingface>hf_[A-Za-z0-9]{30,})
      | (?P<sendgrid>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})
      | (?P<square>sq0(?:atp|csp|idp)-[A-Za-z0-9_-]{22,}|EAAA[A-Za-z0-9_-]{60,})
      | (?P<braintree>access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32})
      | (?P<mailchimp>[0-9a-f]{32}-us[0-9]{1,2}(?![0-9]))
      | (?P<groq>gsk_[A-Za-z0-9]{20,})
      | (?P<netlify>nf[a-z]_[A-Za-z0-9]{30,})
      | (?P<new_relic>NR(?:AK|AA|II|JS|RA|SP|AL)-[A-Z0-9]{20,})
      | (?P<linear>lin_(?:api|oauth)_[A-Za-z0-9]{30,})
      | (?P<notion>secret_[A-Za-z0-9]{40,50}(?![A-Za-z0-9_])|ntn_[A-Za-z0-9]{40,})
      | (?P<postman>PMAK-[a-f0-9]{24}-[a-f0-9]{34})
      | (?P<age>AGE-SECRET-KEY-1[0-9A-Z]{58,})
      | (?P<vault>hv[sbr]\.[A-Za-z0-9_-]{20,})
      | (?P<digitalocean>do[opr]_v1_[a-f0-9]{32,})
      | (?P<shopify>shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})
      | (?P<databricks>dapi[a-f0-9]{32})
      | (?P<figma>figd_[A-Za-z0-9_-]{30,})
      | (?P<grafana>gl(?:sa|c)_[A-Za-z0-9_+/=-]{30,})
      | (?P<planetscale>pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{30,})
      | (?P<tailscale>tskey-(?:auth|api|client)-[A-Za-z0-9_-]{20,})
      | (?P<atlassian>ATATT3[A-Za-z0-9_=-]{50,})
      | (?P<fly>fm\d_[A-Za-z0-9_+/=-]{40,})
      | (?P<doppler>dp\.(?:st|sa|ct|pt|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9_-]{30,})
      | (?P<pulumi>pul-[a-f0-9]{40})
      | (?P<supabase>sbp_[a-f0-9]{40})
      | (?P<vercel>vercel_[A-Za-z0-9]{24,})
      # A Discord bot token: the bot's id in base64, a 6-character timestamp, an HMAC.
      | (?P<discord>[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40})
      # Any payload: an unsigned token's may be "e30" ({}); the header is JSON, so "eyJ".
      | (?<![_-])(?P<jwt>eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*)
    )
    # Digits, a colon and 35 characters; the digits may follow "bot" in an api.telegram.org URL.
    | (?<![0-9])(?P<telegram>[0-9]{6,12}:[A-Za-z0-9_-]{30,})
    """,
    re.VERBOSE,
)


# A secret wrapped onto the next lines (a terminal or an editor folding a long line): a whole line of only
# a key's characters, this long, right after a secret ended its line, is the secret's too.
_WRAPPED = re.compile(r"\r?\n([A-Za-z0-9_+/=.-]{16,})(?=\r?\n|\Z)")


# A line break inside a folded key: after 4 or more of a key's characters that end their line (a colon
# too: a Telegram token has one), before a line of only a key's characters (its indentation aside).  A
# folded key's first line may be too short to be known on its own, and its last too short to look like a
# key at all: the key is looked for with its lines joined (``_unfolded``), by the rules that know a key by
# its own shape or by the header before it.
_FOLD = re.compile(r"(?<=[A-Za-z0-9_+/=.:-]{4})[ \t]*\r?\n[ \t]*(?=[A-Za-z0-9_+/=.-]+[ \t]*(?:\r?\n|\Z))")


def _unfolded(text: str) -> View | None:
    """``text`` with the line breaks inside folded keys taken out; None when it has none."""
    if "\n" not in text:
        return None
    out: list[str] = []
    tokens: list[tuple[int, int, int, int]] = []
    last = at = 0
    for m in _FOLD.finditer(text):
        plain = text[last : m.start()]
        out.append(plain)
        at += len(plain)
        tokens.append((at, at, m.start(), m.end()))
        last = m.end()
    if not tokens:
        return None
    out.append(text[last:])
    return View("".join(out), None, tokens)


def _keys(text: str) -> Iterator[Found]:
    for m in _KEYS.finditer(text):
        yield m.start(), m.end(), (m.lastgroup or "secret").replace("_", "-")


# Secrets known by what stands before them, by kind; the secret is group s, or the whole match.
_CONTEXTS: dict[str, re.Pattern[str]] = {
    kind: re.compile(pattern, flags)
    for kind, pattern, flags in (
        # A block whose END was cut off (truncated output) runs to the next BEGIN or the end of the text.
        (
            "private-key",
            r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY( BLOCK)?-----[\s\S]*?"
            r"(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY( BLOCK)?-----|(?=-----BEGIN)|\Z)",
            0,
        ),
        (
            "url-password",
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:/?#@\[\]]*:"
            + _UNREDACTED
            + r"(?P<s>[^\s/@]+)@",
            0,
        ),
        ("slack-webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/+-]+)", 0),
        (
            "authorization",
            rf"\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:{_AUTH_SCHEME}[ \t]+)?"
            # the value is never the header's own name again (``Authorization: Authorization: Bearer x``):
            # else this match would swallow the second header's name, and its token would be passed over
            # and it is the whole credential: basic auth written out (``Authorization: user:pass``) is
            # one credential, so a colon (or a password's punctuation) does not end it; a space, a quote,
            # a comma or a bracket does
            # a scheme's name is not a credential when it ends the value (``Authorization: Bearer`` alone),
            # but a user named like one is (``Authorization: bearer:pw``)
            rf"(?!{_AUTH_SCHEME}(?:[\s\"'`,;<>()\[\]{{}}]|$))(?!authorization\b)(?P<s>{_CRED}[^\s\"'`,;<>()\[\]{{}}]*)",
            re.IGNORECASE,
        ),
        ("bearer", rf"\bbearer[ \t]+(?P<s>{_CRED}{{16,}})", re.IGNORECASE),
    )
}
# More secrets known by their context, after the general rules (a kind may have several patterns).
_MORE_CONTEXTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, flags))
    for kind, pattern, flags in (
        (
            "discord-webhook",
            r"discord(?:app)?\.com/api/(?:v[0-9]{1,2}/)?webhooks/[0-9]{5,30}/(?P<s>[A-Za-z0-9_-]{20,})",
            0,
        ),
        # A Twilio key (SK and 32 hex) only next to a word that names it, or the token of an "AC…:" pair.
        (
            "twilio",
            r"(?:(?<![A-Za-z])(?i:twilio|api[_ -]?key|key[_ ]?sid|sid|secret)[^\n]{0,40}?"
            r"(?<![A-Za-z0-9])(?=SK)"
            r"|(?<![A-Za-z0-9])AC[0-9a-f]{32}:)(?P<s>(?:SK)?[0-9a-fA-F]{32})(?![A-Za-z0-9])",
            0,
        ),
        # Docker's config.json ("auth": base64 of user:password) and a GCP service account's key id.
        (
            "docker-auth",
            r"\"(?:auth|identitytoken|registrytoken)\"[ \t]*:[ \t]*\"(?P<s>[A-Za-z0-9+/_-]{8,}={0,2})\"",
            re.IGNORECASE,
        ),
        ("gcp-key-id", r"\"private_key_id\"[ \t]*:[ \t]*\"(?P<s>[^\"\\\s]{8,})\"", 0),
        (
            "cookie",
            rf"(?<![A-Za-z0-9_-])(?:set-)?cookie[ \t]*:[ \t]*(?P<s>{_UNREDACTED}[^\s;=\"']+=[^\r\n\"']*)",
            re.IGNORECASE,
        ),
        (
            "secret",
            rf"[?&](?:key|apikey|sig|signature|auth|pass|pwd|pw)=(?P<s>{_UNREDACTED}[^&#\s\"'<>]+)",
            re.IGNORECASE,
        ),
        # A .pgpass entry, host:port:database:user:password, as a word; the password neither empty nor digits.
        (
            "pgpass",
            r"(?<![^\s\"'`])[^\s:#\"'`][^\s:\"'`]*:(?:[0-9]{1,5}|\*):[^\s:\"'`]+:[^\s:\"'`]+:"
            rf"(?![0-9]+(?![^\s\"'`]))(?P<s>{_UNREDACTED}(?:\\.|[^\s\\\"'`])+)(?![^\s\"'`])",
            0,
        ),
        # Password hashes (.htpasswd, /etc/shadow): MD5-crypt, apr1, SHA-crypt, bcrypt, argon2, {SHA}.
        (
            "password-hash",
            r"(?<![A-Za-z0-9$])(?:\$(?:apr1|1|5|6)\$[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{16,}"
            r"|\$2[abxy]?\$[0-9]{2}\$[./A-Za-z0-9]{53}|\$argon2(?:id|i|d)\$[A-Za-z0-9$=,+/.-]{20,}"
            r"|\{SHA\}[A-Za-z0-9+/]{27}=)",
            0,
        ),
        # Passwords on command lines: mysql -pPW, sshpass -p PW (the same command, before a | ; or &).
        (
            "secret",
            r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mariadb(?:-dump)?)\b"
            rf"[^\n|;&]{{0,200}}?[ \t]-p[\"']?(?P<s>{_UNREDACTED}[^\s\"']+)",
            0,
        ),
        (
            "secret",
            rf"\bsshpass\b[^\n|;&]{{0,100}}?[ \t]-p[ \t]*[\"']?(?P<s>{_UNREDACTED}[^\s\"']+)",
            0,
        ),
    )
)


def _context_finder(kind: str, pattern: re.Pattern[str] | None = None) -> _Finder:
    pattern = pattern or _CONTEXTS[kind]
    group = "s" if "s" in pattern.groupindex else 0

    def find(text: str) -> Iterator[Found]:
        for m in pattern.finditer(text):
            yield m.start(group), m.end(group), kind

    return find


# Names whose values are secrets: *_TOKEN, *_SECRET, *_KEY, *PASSWORD*, *_PASS, *PASSWD*, API_KEY,
# *CREDENTIAL*, and their camelCase forms.  Plurals (max_tokens) and longer words (tokenizer) are not.
_NAME = r"""(?:
    [A-Za-z0-9_.-]{0,60}?(?:password|passwd|passphrase|credential)[A-Za-z0-9_.-]{0,40}
  | (?:[A-Za-z0-9_.-]{0,60}[_.-])?(?:token|secret|api-?key)
  | [A-Za-z0-9_.-]{0,60}[_.-](?:key|pass|pwd)
  | (?-i:[A-Za-z0-9]{0,60}[a-z0-9](?:Token|Secret|Key|Pass|Pwd))
)"""
_HEAD = re.compile(
    rf"""(?<![A-Za-z0-9_.-])(?P<q>["']?){_NAME}(?P=q)[ \t]*[:=](?![=>])[ \t]*(?=\S)""",
    re.IGNORECASE | re.VERBOSE,
)
_QUOTED = {q: re.compile(rf"{q}((?:[^{q}\\\n]|\\.)*){q}") for q in "\"'"}
_STOP = re.compile(r"[\s\"]")  # a bare value ends at a space, or at the quote that closes a JSON string
_QUERY_STOP = re.compile(r"[&#]")  # ...and in a query string (?access_token=…&) at the next parameter
_TRAILING = ",;)}]'"


def _assignments(text: str) -> Iterator[Found]:
    """The values of ``NAME=value``, ``NAME: value`` and ``"name": "value"`` with a secret-looking NAME.

    Heads are found first and each value measured from its head, so a value that holds another head
    (``PASSWD= API_KEY=x``) does not hide it.  The next whitespace is remembered across heads: a long
    line of heads costs one scan, not one per head.
    """
    space = -1
    for head in _HEAD.finditer(text):
        start = head.end()
        quoted = _QUOTED[text[start]].match(text, start) if text[start] in _QUOTED else None
        if quoted:
            yield quoted.start(1), quoted.end(1), "secret"
            continue
        if text.startswith(('\\"', "\\'"), start):
            continue  # an escaped quote (doubly-encoded JSON): the decoded view finds the value
        if space <= start:
            m = _STOP.search(text, start + 1)
            space = m.start() if m else len(text)
        end = space
        if head.start() and text[head.start() - 1] in "?&":
            m = _QUERY_STOP.search(text, start, end)
            end = m.start() if m and m.start() > start else end
        marker = MARKER.match(text, start)
        if marker and not text[marker.end() : end].strip(_TRAILING):
            continue  # redacted already
        while end > start + 1 and text[end - 1] in _TRAILING:
            end -= 1  # closing punctuation after a bare value stays, unless it is all there is
        yield start, end, "secret"


# Key material with no assignment, next to a word that names it: "aws_secret_access_key wJalr…",
# "password is hunter2xyz", "secret key = …".  The value must look generated (see _generated).
_NAMED = re.compile(
    r"""(?<![A-Za-z0-9])
    (?:(?:aws[_ ])?secret[_ ]access[_ ]key|secret[_ ]key|private[_ ]key|api[_ -]?key|access[_ ]token
      |auth[_ ]token|password|passwd|passphrase|secret|token)
    (?![A-Za-z0-9_])["']?
    (?:[ \t]+(?:is|was|=|:)[ \t]+|[ \t]*[:=][ \t]*|[ \t]+)
    (?![/~.]|\[REDACTED:)(?P<s>[A-Za-z0-9/+=_.~!@$%^*-]{8,})""",
    re.IGNORECASE | re.VERBOSE,
)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z", re.IGNORECASE)
_SYMBOLS = frozenset("/+=~!@$%^*")


_ASCII_CLASSES = tuple(map(frozenset, (string.ascii_uppercase, string.ascii_lowercase, string.digits)))


def _classes(value: str) -> int:
    """How many kinds of character ``value`` mixes: upper case, lower case, digits, symbols."""
    if value.isascii():  # what the patterns match, almost always: one set, four look-ups
        chars = frozenset(value)
        return sum(not chars.isdisjoint(kind) for kind in (*_ASCII_CLASSES, _SYMBOLS))
    return sum(
        (
            any(c.isupper() for c in value),
            any(c.islower() for c in value),
            any(c.isdigit() for c in value),
            any(c in _SYMBOLS for c in value),
        )
    )


def _generated(value: str) -> bool:
    """Whether a word looks like key material rather than prose: letters and digits mixed, or long and
    of two kinds of character at least; never a uuid."""
    if _UUID.match(value):
        return False
    mixed = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    return mixed or (len(value) >= 20 and _classes(value) >= 2)


def _named(text: str) -> Iterator[Found]:
    for m in _NAMED.finditer(text):
        value = m.group("s").rstrip(".,;:!")
        if len(value) >= 8 and _generated(value):
            yield m.start("s"), m.start("s") + len(value), "secret"


# An XML element named like a secret: <password>…</password>, <apiKey attr="1">…</apiKey>.
_XML = re.compile(
    rf"<(?P<t>{_NAME})(?:[ \t][^<>]{{0,200}})?>(?P<s>{_UNREDACTED}[^<]{{1,2000}})</(?P=t)>",
    re.IGNORECASE | re.VERBOSE,
)


# The password of "user:password" given to -u/--user (curl, wget --user, httpie -a); a numeric value
# is a group id (docker run -u 1000:1000), not a password.
_USER_OPTION = re.compile(
    rf"""(?<![A-Za-z0-9_-])(?:-u|-a|--user|--proxy-user|--auth)(?:[ \t]+|=)["']?[^\s:"'/]*:
    (?![/~])(?P<s>{_UNREDACTED}[^\s"']+)""",  # not host:/path (rsync -a, scp): a password starts no path
    re.VERBOSE,
)
# A token as a URL's user name, with no password: https://<token>@github.com/….
_URL_USER = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://(?P<s>[A-Za-z0-9_~.-]{20,200})@(?=[A-Za-z0-9])"
)
_HEX32 = re.compile(r"[0-9a-fA-F]{32,}\Z")
# Short names that are secrets' only when their value is not a path, a variable or a plain word: pwd=, pass:
# (PWD=/home/user and PASS: tests/x.sh are not).
_SHORT_NAME = re.compile(
    r"""(?<![A-Za-z0-9_.-])(?P<q>["']?)(?:pwd|PWD|Pwd|pass|Pass|pw)(?P=q)[ \t]*[:=](?![=>])[ \t]*["']?
    (?P<s>(?![/~.$\[])[^\s"',;&]{3,})""",
    re.VERBOSE,
)
_PLAIN_VALUES = frozenset({"true", "false", "yes", "no", "none", "null", "ok", "fail", "failed", "passed"})


def _command_lines(text: str) -> Iterator[Found]:
    """Passwords given to options, tokens as URL user names, short secret names and XML elements."""
    for m in _XML.finditer(text):
        yield m.start("s"), m.end("s"), "secret"
    for m in _USER_OPTION.finditer(text):
        if not m.group("s").isdigit():
            yield m.start("s"), m.end("s"), "secret"
    for m in _URL_USER.finditer(text):
        user = m.group("s")
        if _generated(user) or _HEX32.match(user):
            yield m.start("s"), m.end("s"), "url-token"
    for m in _SHORT_NAME.finditer(text):
        value = m.group("s")
        if not value.isdigit() and value.lower() not in _PLAIN_VALUES:
            yield m.start("s"), m.end("s"), "secret"


# A bare 40-character AWS secret access key: base64 letters of all three kinds, and random (by its entropy:
# a folder path or a word of that length is not), never 40 hex digits (a git SHA).
_FORTY = re.compile(r"(?<![A-Za-z0-9/+=_.-])[A-Za-z0-9][A-Za-z0-9/+]{39}(?![A-Za-z0-9/+=_.-])")
_MIN_ENTROPY = 4.4  # bits per character; random base64 of 40 has about 4.8, paths and words about 4.1


def _entropy(value: str) -> float:
    n = len(value)
    return -sum(k / n * math.log2(k / n) for k in Counter(value).values())


def _forty(text: str) -> Iterator[Found]:
    for m in _FORTY.finditer(text):
        value = m.group()
        if _classes(value.replace("/", "").replace("+", "")) >= 3 and _entropy(value) >= _MIN_ENTROPY:
            yield m.start(), m.end(), "aws-secret-key"


@functools.lru_cache(maxsize=32)
def _extra_pattern(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    # Longest first, so a secret that contains another is redacted whole.  Markers already in the text
    # are matched (and kept) first, so that a secret such as "secret" never eats into one.
    usable = sorted({s for s in secrets if len(s.strip()) >= MIN_EXTRA_LEN}, key=lambda s: (-len(s), s))
    if not usable:
        return None
    return re.compile(MARKER.pattern + "|(?P<s>" + "|".join(map(re.escape, usable)) + ")")


def _extra_finder(pattern: re.Pattern[str]) -> _Finder:
    def find(text: str) -> Iterator[Found]:
        for m in pattern.finditer(text):
            if m.start("s") != -1:
                yield m.start(), m.end(), "secret"

    return find


# In order of precedence for finds that start at the same place: the more specific kind names the marker.
_FINDERS: tuple[_Finder, ...] = (
    _context_finder("private-key"),
    _context_finder("url-password"),
    _context_finder("slack-webhook"),
    _keys,
    _assignments,
    _context_finder("authorization"),
    _context_finder("bearer"),
    *(_context_finder(kind, pattern) for kind, pattern in _MORE_CONTEXTS),
    _named,
    _command_lines,
    _forty,
)


# What is looked for in a folded key's joined lines: what knows a key by its shape, or by its header.
_UNFOLDED_FINDERS: tuple[_Finder, ...] = (
    _keys,
    _context_finder("authorization"),
    _context_finder("bearer"),
)


def _one_pass(text: str, finders: tuple[_Finder, ...]) -> str:
    """One round of every finder over the text and over each of its decoded views (vaultops.base.unescape),
    whose finds are mapped back to the text."""
    found: list[tuple[int, int, int, str]] = []  # start, finder index, end, kind
    unfolded = _unfolded(text)
    shown = [(view, finders) for view in views(text)]
    if unfolded is not None:
        shown.append((unfolded, _UNFOLDED_FINDERS))
    for view, some in shown:
        for index, find in enumerate(some):
            for v_start, v_end, kind in find(view.text):
                start, end = view.span(v_start, v_end)
                while wrapped := _WRAPPED.match(text, end):
                    end = wrapped.end()
                if start < end and not MARKER.fullmatch(text, start, end):
                    found.append((start, index, end, kind))
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
    finders = _FINDERS if extra is None else (*_FINDERS, _extra_finder(extra))
    for _ in range(_MAX_PASSES):
        redacted = _one_pass(text, finders)
        if redacted == text:
            break
        text = redacted
    return text


def redact_lines(lines: Sequence[str], extra_secrets: Iterable[str] = ()) -> tuple[str, ...]:
    """Lines about to be written, redacted together (a private key spans lines, and becomes one)."""
    text = "\n".join(lines)
    redacted = redact(text, extra_secrets)
    return tuple(lines) if redacted == text else tuple(redacted.split("\n"))


def redact_fields(value: Any, key: str = "", keep: frozenset[str] = frozenset()) -> Any:
    """``value`` (a record about to be written as JSON, or a part of one) with every text redacted
    before it is encoded; the value of a field whose name says it holds a secret (``password``,
    ``api_key``) is replaced whole.  The fields named in ``keep`` (ids) stay as they are."""
    if isinstance(value, str):
        if key in keep:
            return value
        return "[REDACTED:secret]" if value and looks_secret(key) else redact(value)
    if isinstance(value, Mapping):
        return {k: redact_fields(v, str(k), keep) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_fields(v, "", keep) for v in value]
    return value


_SECRET_NAME = re.compile(rf"{_NAME}\Z", re.IGNORECASE | re.VERBOSE)


def looks_secret(name: str) -> bool:
    """Whether a variable or setting called ``name`` holds a secret (API_KEY, DB_PASSWORD, …)."""
    return _SECRET_NAME.match(name) is not None


def secret_values(environ: Mapping[str, str]) -> list[str]:
    """The values of the secret-looking variables in ``environ``: the ``extra_secrets`` of a run."""
    return [value for name, value in environ.items() if looks_secret(name) and value]
