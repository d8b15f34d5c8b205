"""Egress the gate can see: a secret in what a call sends out.

A WebFetch URL, a WebSearch query, an MCP tool's arguments, or a Bash call that reaches the network (curl,
wget, httpie, nc, ssh, a git transfer, dig, inline code that opens a connection, ``/dev/tcp``) together with
a secret is ``send_secret``, denied whatever the host: once the request is made the secret has left.  A
secret is a value the redactor recognises (also inside base64), a reference to a variable whose name says it
holds one (``$GITHUB_TOKEN``, ``${STRIPE_SECRET_KEY}``, ``${!name}``), a program that prints one
(``gh auth token``), or a file or environment dump the same call reads (``.env``, ``env``, ``printenv``,
judged ``read_secrets``).  The reason quotes the call redacted: the verdict is shown to the agent and logged.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from vaultops.base.redact import MARKER, looks_secret, redact
from vaultops.policy.bash import SimpleCommand
from vaultops.policy.judge import names
from vaultops.policy.paths import is_secret
from vaultops.policy.table import Action

# Programs that talk to other machines whatever their arguments.
NETWORK_PROGRAMS = names(
    "curl wget wget2 http https xh xhs httpie nc ncat netcat socat telnet ftp tftp lftp ssh scp sftp "
    "rsync mosh autossh ping ping6 traceroute tracepath mtr dig nslookup host whois ssh-keyscan gh glab "
    "openssl aria2c axel lynx w3m links elinks sendmail mail mailx mutt msmtp swaks aws gcloud az "
    "gsutil kubectl rclone s3cmd torsocks proxychains proxychains4 websocat wscat grpcurl ab hey "
    "httpstat nmap ncrack hping3 iperf iperf3 tcpdump"
)
_GIT_TRANSFERS = names("push fetch pull clone ls-remote remote submodule lfs send-email request-pull archive")
# Text that opens a connection: a URL, a socket device, a network library in inline code.
_NETWORK_TEXT = re.compile(
    r"\b(?:https?|ftps?|wss?|gopher|dict|ldaps?|smtps?|telnet)://|/dev/(?:tcp|udp)/|"
    r"\b(?:requests|urllib\d?|httpx|aiohttp|http\.client|socket|smtplib|ftplib|telnetlib|xmlrpc|"
    r"XMLHttpRequest|WebSocket|Net::HTTP|LWP|IO::Socket|open-uri|axios|node-fetch|undici|"
    r"Invoke-WebRequest|Invoke-RestMethod|net\.Dial|http\.(?:Get|Post)|TCPSocket|fsockopen|curl_exec|"
    r"file_get_contents|dns\.resolver)\b|\bfetch\s*\(|/inet6?/(?:tcp|udp)/",
    re.IGNORECASE,
)
# $NAME, ${NAME}, ${NAME:-…}, ${#NAME}, ${!NAME} (indirect: the variable is named at run time)
_VARIABLE = re.compile(r"\$\{?([#!]?)([A-Za-z_][A-Za-z0-9_]*)")
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH(?!OR)|BEARER|COOKIE|"
    r"SESSION|DSN|WEBHOOK|SIGNING|(?:^|_)(?:PAT|KEY|PWD|PASS|SID)(?:_|$)|"
    r"(?:DATABASE|DB|REDIS|MONGO\w*|POSTGRES\w*|PG|MYSQL|AMQP|RABBITMQ|BROKER)_URL",
    re.IGNORECASE,
)
_NOT_SECRET = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "XAUTHORITY", "GIT_AUTHOR_NAME"})
# Programs whose output is a credential: `$(gh auth token)` in a header sends it.
_PRINTS_SECRET = re.compile(
    r"\bauth\s+token\b|print-access-token|print-identity-token|get-login-password|get-access-token|"
    r"get-secret-value|get-parameters?\b.*--with-decryption|\bvault\s+(?:kv\s+)?(?:get|read)\b|"
    r"\bop\s+(?:read|item\s+get)\b|\bpass\s+show\b|find-generic-password|find-internet-password|"
    r"secret-tool\s+lookup|\bgpg\b.*(?:-d\b|--decrypt)|\bsops\b.*(?:-d\b|--decrypt)|"
    r"\baws\s+configure\s+(?:get|export-credentials)|\bgit\s+credential\s+fill\b|"
    r"\bbw\s+get\b|\blpass\s+show\b|\bkeyring\s+get\b|\bkubectl\b.*\bget\s+secrets?\b",
    re.IGNORECASE,
)
# Inline code reading one variable by name, or the whole environment at once.
_ENV_NAMED = re.compile(
    r"(?:environ(?:\.get)?\s*[\[(]\s*|getenv\s*\(\s*|process\.env\.|process\.env\[\s*|Deno\.env\.get\(\s*|"
    r"\bENV(?:\.fetch\(|\[)\s*|\$ENV\{\s*)['\"]?([A-Za-z_]\w*)"
)
_ENV_WHOLE = re.compile(
    r"(?:os\.environ|process\.env|Deno\.env|Bun\.env|System\.getenv\(\s*\)|%ENV|\bENV\.to_h)"
    r"(?!\s*(?:\[|\.get|\.fetch|\{|\.[A-Za-z_]))"
)
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{20,}={0,2}")
MAX_SHOWN = 160
_NETWORK_ACTIONS = frozenset(
    {"network_read", "network_write", "payment", "message_external", "comment_external", "remote_exec",
     "fetch_metadata", "deploy", "open_pr", "open_draft_pr", "push_own_branch", "push_other_branch"}
)  # fmt: skip


def secret_variable(name: str) -> bool:
    """Whether a variable called ``name`` holds a credential by its name."""
    if name.upper() in _NOT_SECRET:
        return False
    return looks_secret(name) or _SECRET_NAME.search(name) is not None


def _decoded(text: str) -> Iterable[str]:
    """The texts that base64 runs in ``text`` decode to (a key sent encoded is still sent)."""
    for m in _BASE64.finditer(text):
        raw = m.group()
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                value = decode(raw + "=" * (-len(raw) % 4)).decode("utf-8")
            except (binascii.Error, ValueError):
                continue
            if value.isprintable():
                yield value
                break


def literal_secret(text: str) -> str | None:
    """The kind of secret the redactor finds in ``text`` (``github``, ``stripe``, …), else None."""
    for candidate in (text, *_decoded(text)):
        found = MARKER.search(redact(candidate))
        if found is not None:
            return found.group()[len("[REDACTED:") : -1]
    return None


def secret_in(texts: Iterable[str]) -> str | None:
    """What secret ``texts`` carry, in words, or None: a literal value, a secret variable, a program that
    prints one."""
    for text in texts:
        kind = literal_secret(text)
        if kind is not None:
            return f"a secret ({kind})"
        for indirect, name in _VARIABLE.findall(text):
            if indirect == "!":
                return f"${{!{name}}}, a variable named only when it runs (a secret?)"
            if secret_variable(name):
                return f"${name}, a variable that holds a credential"
        for name in _ENV_NAMED.findall(text):
            if secret_variable(name):
                return f"{name}, a variable that holds a credential, read by inline code"
        if _ENV_WHOLE.search(text):
            return "the whole environment, credentials included, read by inline code"
        if _PRINTS_SECRET.search(text):
            return "the output of a program that prints a credential"
    return None


def shown(text: str) -> str:
    text = redact(" ".join(text.split()))
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def _texts(cmd: SimpleCommand) -> list[str]:
    out = [w.text for w in cmd.words] + list(cmd.assigns)
    for red in cmd.redirects:
        out += [red.target.text, red.body]
    return out


def _first_word(cmd: SimpleCommand, value_options: frozenset[str]) -> str:
    words = cmd.words[1:]
    i = 0
    while i < len(words) and words[i].text.startswith("-"):
        i += 2 if words[i].text in value_options else 1
    return words[i].text if i < len(words) else ""


_SOCKET_FILE = re.compile(r"^/dev/(?:tcp|udp)/")
_CODE_RUNNER = re.compile(
    r"^(?:(?:python|pypy)[\d.]*|node(?:js)?|deno|bun|ruby|perl|php|lua|Rscript|julia|tclsh|osascript|pwsh|"
    r"powershell|jshell|g?awk|mawk|nawk|groovy|kotlin|scala|swift|elixir|erl|ghci|runghc|dotnet-script)$"
)
_GIT_VALUES = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})
_COPIERS = frozenset({"rsync", "scp", "sftp"})
_REMOTE_PATH = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[^/\s:=]+:(?!//))")


def reaches_network(cmd: SimpleCommand) -> bool:
    """Whether one simple command may open a connection to another machine."""
    name = cmd.name
    texts = _texts(cmd)
    if name in _COPIERS:  # a copy between local folders stays here
        return any(
            _REMOTE_PATH.match(w.text) and not w.text.startswith(("./", "/", "~")) for w in cmd.words[1:]
        )
    if name in ("curl", "wget") and any(w.text.lower().startswith("file:") for w in cmd.words[1:]):
        return any(_NETWORK_TEXT.search(t) for t in texts)  # file: reads a local file
    if name in NETWORK_PROGRAMS:
        return True
    if name == "git" and _first_word(cmd, _GIT_VALUES) in _GIT_TRANSFERS:
        return True
    if any(_SOCKET_FILE.match(red.target.text) for red in cmd.redirects):
        return True
    # a URL in sed's or echo's arguments is data; in an interpreter's code it may be a connection
    return _CODE_RUNNER.match(name) is not None and any(_NETWORK_TEXT.search(t) for t in texts)


_FILE_VALUE = re.compile(r"^(?:[\w.-]*=)?[@<]?")  # `@.env`, `f=@.env`, `<.env`: the file a value names


def _secret_file(commands: Sequence[SimpleCommand]) -> str | None:
    """A file that holds credentials, named by any command of the call (``gh gist create .env``,
    ``openssl enc -in .env | curl -d @- …``): a call that reaches the network may send it."""
    for cmd in commands:
        for w in cmd.words[1:]:
            path = _FILE_VALUE.sub("", w.text, count=1).split(";", 1)[0]
            if path and not w.dynamic and is_secret(path):
                return f"{path}, a file that holds credentials"
    return None


def bash_leak(command: str, commands: Sequence[SimpleCommand], actions: Sequence[Action]) -> Action | None:
    """``send_secret`` when a Bash call reaches the network and carries or reads a secret, else None."""
    if not any(reaches_network(cmd) for cmd in commands) and not any(
        a.name in _NETWORK_ACTIONS for a in actions
    ):
        return None
    texts = [command] + [t for cmd in commands for t in _texts(cmd)]
    what = secret_in(texts) or _secret_file(commands)
    if what is None and any(a.name == "read_secrets" for a in actions):
        what = "what it reads from a file or the environment that holds credentials"
    if what is None:
        return None
    return Action("send_secret", f"`{shown(command)}`: sends {what} over the network")


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def input_leak(tool: str, tool_input: Mapping[str, Any], keys: Sequence[str] = ()) -> Action | None:
    """``send_secret`` when what a tool sends out (``keys`` of its input, or all of it) holds a literal
    secret, else None.  Variables are not expanded in a tool's input, so only values count."""
    values = [tool_input.get(k) for k in keys] if keys else [tool_input]
    for text in _strings(values):
        kind = literal_secret(text)
        if kind is not None:
            return Action("send_secret", f"{tool} {shown(text)}: sends a secret ({kind}) out")
    return None
