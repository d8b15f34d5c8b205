"""Rules for programs that talk to the network: curl, wget, httpie, ssh, scp, rsync, raw sockets.

A write request (POST, PUT, data, an upload) to a payment API is ``payment``, to a messaging API
``message_external``, to a tracker ``comment_external`` (a merge endpoint ``merge_pr``); any other write is
``network_write``; a plain GET is ``network_read``.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Sequence

from vaultops.policy.bash import Word
from vaultops.policy.hosts import is_metadata_host
from vaultops.policy.judge import Judge, flag_value, has, is_remote, names, positionals, register
from vaultops.policy.options import read_options
from vaultops.policy.rules.tables import CURL

# Hosts whose write requests move money, send messages, or change a tracker.
PAYMENT_HOSTS = names(
    "stripe.com paypal.com braintreegateway.com squareup.com squareupsandbox.com adyen.com "
    "checkout.com razorpay.com paddle.com lemonsqueezy.com mollie.com klarna.com gocardless.com "
    "wise.com coinbase.com chargebee.com recurly.com"
)

MESSAGE_HOSTS = names(
    "twilio.com hooks.slack.com slack.com api.telegram.org discord.com discordapp.com sendgrid.com "
    "mailgun.net postmarkapp.com resend.com api.sparkpost.com mandrillapp.com vonage.com nexmo.com "
    "messagebird.com zulipchat.com ntfy.sh api.pushover.net graph.facebook.com"
)

TRACKER_HOSTS = names(
    "api.github.com github.com gitlab.com atlassian.net asana.com api.linear.app app.clickup.com "
    "api.trello.com api.notion.com bitbucket.org sentry.io youtrack.cloud app.shortcut.com "
    "api.monday.com"
)


def _host(url: str) -> str:
    m = re.match(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://)?(?:[^/@]*@)?(\[[^\]]*\]|[^/:?#]*)", url)
    return (m.group(1) if m else "").lower().rstrip(".")


def _host_in(host: str, domains: Iterable[str]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


_PLAIN_SSH = re.compile(r"ssh(\s+-[46AaCqTvx]+|\s+-[pilFJ]\s*[\w.@/=:-]+)*")  # -o could set ProxyCommand


def _rsync(j: Judge, args: list[Word]) -> None:
    pos = positionals(
        args,
        names(
            "-e --rsh --exclude --include --filter -f --exclude-from --include-from --files-from --port "
            "--password-file"
        ),
    )
    shell = flag_value(args, "-e", "--rsh")
    if shell is not None and not _PLAIN_SSH.fullmatch(shell.text):
        j.add("unknown", f"rsync -e {shell.text!r}: a remote shell that is not plain ssh")
    if flag_value(args, "--rsync-path") is not None or has(args, "--rsync-path"):
        j.add("unknown", "rsync --rsync-path runs a command of its own on the other side")
    if len(pos) < 2:
        j.add("read", "lists files")
        return
    remote = [w for w in pos if is_remote(w.text)]
    dest = pos[-1]
    if is_remote(dest.text):
        j.add("network_write", f"copies files to another machine ({dest.text})")
    else:
        if remote:
            j.add("network_read", "copies files from another machine")
        if has(args, "--delete", "--delete-after", "--delete-before", "--delete-during", "--delete-excluded"):
            j.delete(dest, recursive=True)
        else:
            j.write(dest)
    for w in pos[:-1]:
        if not is_remote(w.text):
            j.read(w)
            if has(args, "--remove-source-files"):
                j.write(w, "moves")


def _scp(j: Judge, args: list[Word]) -> None:
    pos = positionals(args, ("-P", "-i", "-o", "-F", "-c", "-l", "-S", "-J"))
    if not pos:
        j.add("read", "nothing to copy")
        return
    dest = pos[-1]
    if is_remote(dest.text):
        j.add("network_write", f"copies files to another machine ({dest.text})")
    else:
        j.add("network_read", "copies files from another machine")
        j.write(dest)
    for w in pos[:-1]:
        if not is_remote(w.text):
            j.read(w)


def _ssh(j: Judge, args: list[Word]) -> None:
    pos = positionals(
        args,
        names("-p -i -o -F -l -L -R -D -J -c -m -b -e -E -I -O -Q -S -W -w -B"),
    )
    if has(args, "-V", "-G") or not pos:
        j.add("read", "prints ssh's settings")
        return
    j.add("remote_exec", f"runs commands on {pos[0].text}")


def _web(j: Judge, urls: Sequence[Word], method: str, sends: bool) -> None:
    write = sends or method not in ("", "GET", "HEAD", "OPTIONS")
    if not urls:
        j.add("network_write" if write else "network_read", "makes a web request")
        return
    for url in urls:
        host = _host(url.text)
        shown = f"{method or ('POST' if write else 'GET')} {host or url.text}"
        if url.dynamic and ("$" in host or "…" in host or not host):
            j.add("network_write", f"{shown}: a URL only known when it runs")
        elif _host_in(host, PAYMENT_HOSTS) and write:
            j.add("payment", f"{shown}: a payment API")
        elif _host_in(host, MESSAGE_HOSTS) and write:
            j.add("message_external", f"{shown}: sends a message")
        elif _host_in(host, TRACKER_HOSTS) and write:
            if re.search(r"/pulls/\d+/merge|/merges\b|/merge_requests/\d+/merge", url.text):
                j.add("merge_pr", f"{shown}: merges through the API")
            else:
                j.add("comment_external", f"{shown}: changes an external tracker")
        elif write:
            j.add("network_write", f"{shown}: sends data out")
        elif url.dynamic:
            j.add("network_write", f"{shown}: the URL holds values only known when it runs")
        else:
            j.add("network_read", f"{shown}")


# Options whose value is a file the program writes or reads, and those that run a program or reach a socket.
_WGET_FILE_WRITES = names("-o --output-file -a --append-output --save-cookies --warc-file")
_WGET_FILE_READS = names("--post-file --body-file --load-cookies -i --input-file")
_WGET_RUNS = names("--use-askpass -e --execute --config")


def _files_and_code(j: Judge, args: list[Word], writes: Iterable[str], reads: Iterable[str],
                    runs: Iterable[str] = ()) -> None:  # fmt: skip
    for flag in writes:
        value = flag_value(args, flag)
        if value is not None:
            j.write(value)
    for flag in reads:
        value = flag_value(args, flag)
        if value is not None:
            j.read(value)
    for flag in runs:
        if has(args, flag):
            j.add("unknown", f"{j.cmd.name} {flag} runs a command or reads settings of its own")


# Only http and https are web requests: file:, gopher:, dict:, telnet:, ldap:, … read files or reach other
# services.  A URL without a scheme is http, unless its host names another protocol (curl guesses ftp.x).
_SCHEME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.-]*):(?!\d)")
_GUESSED = re.compile(r"^(ftp|dict|ldap|imap|pop3|smtp|gopher|telnet|tftp|mqtt|rtsp|scp|sftp|smb)\.", re.I)
# curl options whose value names a file with ``@`` (``-d @f``, ``-F a=@f``/``a=<f``, ``-H @f``,
# ``--data-urlencode n@f``, ``--url-query @f``): the file is read and its contents go out.
_CURL_DATA = names("-d --data --data-binary --data-ascii --json")
_CURL_NAMED = names("--data-urlencode --url-query")
_CURL_SENDS = names(
    "-d --data --data-raw --data-binary --data-urlencode --data-ascii --json -F --form --form-string "
    "-T --upload-file"
)
# Options that point the request at another address, resolver or socket than its URL says.
_CURL_REROUTES = names("--resolve --connect-to --doh-url --dns-servers --interface --local-port")


def _url_scheme(j: Judge, url: Word) -> bool:
    """Whether ``url`` is an http(s) web address; other schemes are escalated (``file:`` reads its path)."""
    text = url.text.strip()
    m = _SCHEME.match(text)
    if m is None:
        if _GUESSED.match(text):
            j.add("unknown", f"{text[:60]}: curl guesses a protocol other than http from the name")
            return False
        return True
    scheme = m.group(1).lower()
    if scheme in ("http", "https"):
        return True
    if scheme == "file":
        path = re.sub(r"^file:(//[^/]*)?", "", text, flags=re.I)
        j.read(Word(urllib.parse.unquote(path) or "/", url.dynamic))
    j.add("unknown", f"{text[:60]}: a {scheme}: URL, not a web request")
    return False


def _curl_file_value(option: str, value: Word) -> list[str]:
    """The files a data, form, header or cookie value makes curl read."""
    text = value.text
    if option in _CURL_DATA or option in ("-H", "--header"):
        return [text[1:]] if text.startswith("@") and text != "@-" else []
    if option in _CURL_NAMED:
        text = text.removeprefix("+")
        at, eq = text.find("@"), text.find("=")
        return [text[at + 1 :]] if at >= 0 and (eq < 0 or at < eq) and text[at + 1 :] != "-" else []
    if option in ("-F", "--form"):
        found = re.findall(r"[=;,]\s*[@<]\"?([^;,\"]+)", text)
        return [f for f in found if f != "-"]
    if option in ("-b", "--cookie"):
        return [] if "=" in text else [text]
    if option in ("-w", "--write-out"):
        return [text[1:]] if text.startswith("@") and text != "@-" else []
    return []


def _curl(j: Judge, args: list[Word]) -> None:
    parsed = read_options(j, "curl", args, CURL)
    if parsed.has("-K", "--config"):
        j.add("unknown", "curl reads options from a config file (they may write files or send data)")
    sends = False
    for option, value in parsed.pairs:
        for path in _curl_file_value(option, value):
            j.read(Word(path, value.dynamic))
            sends = True
        if option in ("-w", "--write-out"):
            for path in re.findall(r"%output\{([^}]*)\}", value.text):
                j.write(Word(path.removeprefix(">>"), value.dynamic))
        if option in _CURL_REROUTES:
            parts = re.split(r"[:,\[\]]+", value.text)
            if any(is_metadata_host(p) for p in parts if p):
                j.add("fetch_metadata", f"curl {option} {value.text}: a cloud metadata address")
            j.add("unknown", f"curl {option} sends the request to another address than its URL names")
    if parsed.has(*_CURL_SENDS) and not parsed.has("-G", "--get"):
        sends = True
    method_word = parsed.value("-X", "--request")
    method = method_word.text.upper() if method_word else ""
    if parsed.has("-I", "--head") and not method:
        method = "HEAD"
    if parsed.has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name"):
        j.write(parsed.value("--output-dir") or Word("."), "downloads into")
    urls = list(parsed.positionals) + [w for o, w in parsed.pairs if o == "--url"]
    web = [u for u in urls if _url_scheme(j, u)]
    if web or not urls:
        _web(j, web, method, sends)


def _wget(j: Judge, args: list[Word]) -> None:
    values = names(
        "-O --output-document -o --output-file -P --directory-prefix --post-data --post-file --method "
        "--body-data --body-file --header -U --user-agent -e --execute -i --input-file -t --tries -T "
        "--timeout --user --password"
    )
    method_word = flag_value(args, "--method")
    method = method_word.text.upper() if method_word else ""
    sends = any(
        flag_value(args, f) is not None for f in ("--post-data", "--post-file", "--body-data", "--body-file")
    )
    _files_and_code(j, args, _WGET_FILE_WRITES, _WGET_FILE_READS, _WGET_RUNS)
    out = flag_value(args, "-O", "--output-document")
    if out is not None and out.text != "-":
        j.write(out, "downloads to")
    elif out is None:
        j.write(flag_value(args, "-P", "--directory-prefix") or Word("."), "downloads into")
    if flag_value(args, "-i", "--input-file") is not None:
        j.add("network_read", "downloads the URLs listed in a file")
    _web(j, positionals(args, values), method, sends)


def _httpie(j: Judge, args: list[Word]) -> None:
    pos = positionals(
        args,
        names("-a --auth -o --output --session -A --auth-type --verify --cert --cert-key --proxy --timeout"),
    )
    method = ""
    if pos and re.fullmatch(r"[A-Z]+", pos[0].text):
        method, pos = pos[0].text, pos[1:]
    items = pos[1:]
    sends = any(re.search(r"(?<!=)=|:=|@", w.text) for w in items) or has(args, "-f", "--form")
    given = j.cmd.piped_in or any(red.reads for red in j.cmd.redirects)
    sends = sends or given or any(w.text.split("=", 1)[0] == "--raw" for w in args)
    session = flag_value(args, "--session", "--session-read-only")
    if session is not None and "/" in session.text:
        j.write(session, "keeps its session in")
    out = flag_value(args, "-o", "--output")
    if out is not None:
        j.write(out, "downloads to")
    _web(j, pos[:1], method, sends)


def _raw_network(j: Judge, args: list[Word]) -> None:
    j.add("network_write", f"{j.cmd.name} opens a raw network connection")


def _network_read(j: Judge, args: list[Word]) -> None:
    batch = flag_value(args, "-f") if j.cmd.name in ("dig", "nslookup", "host") else None
    if batch is not None:
        j.read(batch)
        j.add("network_write", f"{j.cmd.name} -f sends each line of {batch.text} out as a query")
    j.add("network_read", "looks something up on the network")


register("rsync", _rsync)
register("scp sftp", _scp)
register("ssh mosh autossh", _ssh)
register("ssh-keyscan dig nslookup host ping ping6 traceroute tracepath mtr whois", _network_read)
register("nc ncat netcat socat telnet ftp tftp lftp", _raw_network)
register("curl", _curl)
register("wget wget2", _wget)
register("http https xh xhs httpie", _httpie)
