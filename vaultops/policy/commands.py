"""What one simple command does, as policy actions: ``rm -rf /etc`` → modify_outside_worktree, ``gh pr merge``
→ merge_pr, ``pytest -q`` → run_tests.

Each known program has a small rule that reads its arguments the way the program does (which are paths it
writes, which it only reads, which subcommand runs); its redirections are judged for every command.  A program
the rules do not know is ``unknown`` (escalated), so a gap in this file can make the policy ask too often,
never let something through.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from vaultops.policy.bash import SimpleCommand, Word
from vaultops.policy.paths import (
    Place,
    Scope,
    branch_name,
    cwds_of,
    in_files,
    is_policy,
    is_protected,
    is_secret,
    locate,
    place,
)
from vaultops.policy.table import Action

MAX_SHOWN = 160  # how much of a command a reason quotes

# Hosts whose write requests move money, send messages, or change a tracker.
PAYMENT_HOSTS = (
    "stripe.com",
    "paypal.com",
    "braintreegateway.com",
    "squareup.com",
    "squareupsandbox.com",
    "adyen.com",
    "checkout.com",
    "razorpay.com",
    "paddle.com",
    "lemonsqueezy.com",
    "mollie.com",
    "klarna.com",
    "gocardless.com",
    "wise.com",
    "coinbase.com",
    "chargebee.com",
    "recurly.com",
)
MESSAGE_HOSTS = (
    "twilio.com",
    "hooks.slack.com",
    "slack.com",
    "api.telegram.org",
    "discord.com",
    "discordapp.com",
    "sendgrid.com",
    "mailgun.net",
    "postmarkapp.com",
    "resend.com",
    "api.sparkpost.com",
    "mandrillapp.com",
    "vonage.com",
    "nexmo.com",
    "messagebird.com",
    "zulipchat.com",
    "ntfy.sh",
    "api.pushover.net",
    "graph.facebook.com",
)
TRACKER_HOSTS = (
    "api.github.com",
    "github.com",
    "gitlab.com",
    "atlassian.net",
    "asana.com",
    "api.linear.app",
    "app.clickup.com",
    "api.trello.com",
    "api.notion.com",
    "bitbucket.org",
    "sentry.io",
    "youtrack.cloud",
    "app.shortcut.com",
    "api.monday.com",
)

# Code run inline (python -c, node -e, a here-document) that starts programs, deletes or talks to the network
# cannot be judged from its text: such code is escalated; plain computation runs.
_SPAWNS = re.compile(
    r"subprocess|os\.(system|popen|exec|spawn|remove|unlink|rmdir|kill)|pty\.spawn|child_process|execSync|"
    r"spawnSync|\bsystem\s*\(|\bexec\s*\(|shell_exec|passthru|proc_open|popen|\bqx\b|%x|`|rmtree|rmSync|"
    r"unlinkSync|\bunlink\b|Deno\.(run|Command|remove)|Bun\.spawn|socket|urllib|requests\.|http\.client|"
    r"httpx|fetch\s*\(|XMLHttpRequest|Net::HTTP|LWP::|IO::Socket|smtplib|ctypes|__import__|importlib|eval\s*\(|"
    r"FileUtils\.rm|File\.delete|shutil\.(move|rmtree)|open3|Open3|\.kill\(|signal\."
)

_WRITES = re.compile(
    r"\bopen\s*\(|write|unlink|remove|rename|replace|chmod|chown|truncate|mkdir|copy|move|dump\s*\("
)
_PATH_LITERAL = re.compile(r"""["'](~?/[^"'\s]*)["']""")
# Variables that hold credentials: printing them puts the secret into the transcript.
_SECRET_VARIABLE = re.compile(r"\$\{?\w*(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE|CREDENTIAL)\w*", re.I)
# What makes a program's work land in the folder it runs in: run there, outside the worktree, it leaves scope.
_RUNS_HERE = frozenset({"run_build", "run_tests", "run_local", "git_local", "create_worktree", "delete_tree"})

Handler = Callable[["Judge", list[Word]], None]


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def _host(url: str) -> str:
    m = re.match(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://)?(?:[^/@]*@)?(\[[^\]]*\]|[^/:?#]*)", url)
    return (m.group(1) if m else "").lower().rstrip(".")


def _host_in(host: str, domains: Iterable[str]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


def _positionals(args: Sequence[Word], value_opts: Iterable[str] = ()) -> list[Word]:
    """The arguments that are not options (nor an option's value); everything after ``--`` counts."""
    takes = set(value_opts)
    out: list[Word] = []
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            out.extend(args[i + 1 :])
            break
        if text.startswith("-") and text != "-":
            i += 2 if text in takes else 1
            continue
        out.append(args[i])
        i += 1
    return out


def _has(args: Sequence[Word], *flags: str) -> bool:
    """A flag given alone, as ``--flag=…``, or bundled among short ones (``-rf`` has ``-r``)."""
    for w in args:
        t = w.text
        if t == "--":
            return False
        for f in flags:
            if t == f or (f.startswith("--") and t.startswith(f + "=")):
                return True
            if (
                len(f) == 2
                and f[0] == "-"
                and f[1] != "-"
                and re.fullmatch(r"-[A-Za-z0-9]+", t)
                and f[1] in t[1:]
            ):
                return True
    return False


def _value(args: Sequence[Word], *flags: str) -> Word | None:
    """The value of the first of ``flags``: ``-o FILE``, ``--output FILE`` or ``--output=FILE``."""
    for i, w in enumerate(args):
        for f in flags:
            if w.text == f and i + 1 < len(args):
                return args[i + 1]
            if f.startswith("--") and w.text.startswith(f + "="):
                return Word(w.text[len(f) + 1 :], w.dynamic, w.glob)
            attached = f in ("-o", "-O", "-C", "-f", "-d", "-X", "-t", "-P") and len(w.text) > 2
            if attached and w.text.startswith(f):
                return Word(w.text[2:], w.dynamic, w.glob)
    return None


class Judge:
    """Collects the actions of one simple command."""

    def __init__(self, cmd: SimpleCommand, scope: Scope, base_cwd: str) -> None:
        self.cmd = cmd
        self.scope = scope
        self.cwds = cwds_of(base_cwd, cmd.cwds, scope)
        self.text = _short(str(cmd))
        self.actions: list[Action] = []

    def add(self, name: str, why: str) -> None:
        self.actions.append(Action(name, f"`{self.text}`: {why}"))

    def with_cwd(self, directory: Word | None) -> None:
        """``-C DIR`` (git, make, tar, env): later relative paths are under DIR."""
        if directory is None:
            return
        places = place(directory, self.cwds, self.scope)
        self.cwds = [p.path if p.where != "unknown" else None for p in places]

    # --- paths --------------------------------------------------------------------------------------------
    def places(self, word: Word) -> list[Place]:
        return place(word, self.cwds, self.scope)

    def write(self, word: Word, verb: str = "writes") -> None:
        for p in self.places(word):
            if p.where == "unknown":
                self.add("unknown", f"{verb} {word.text!r}, a path only known when it runs")
            elif p.where == "device":
                continue
            elif is_policy(p.path):
                self.add("modify_policy", f"{verb} {p.path}, which guards the agent")
            elif p.where == "inside":
                if not in_files(p.rel, self.scope):
                    self.add("scope_expansion", f"{verb} {p.rel}, which is not among the job's files")
                else:
                    self.add("edit_worktree", f"{verb} {p.rel or '.'} in the worktree")
            elif p.where == "temp":
                self.add("temp_write", f"{verb} {p.path}")
            else:
                self.add("modify_outside_worktree", f"{verb} {p.path}, outside the worktree")

    def delete(self, word: Word, recursive: bool) -> None:
        if not recursive:
            self.write(word, "deletes")
            return
        for p in self.places(word):
            if p.where == "inside" and not is_policy(p.path) and in_files(p.rel, self.scope):
                self.add("delete_tree", f"deletes {p.rel or 'the whole worktree'} recursively")
            else:
                self.write(word, "deletes recursively")
                return

    def read(self, word: Word) -> None:
        for p in self.places(word):
            if p.where in ("unknown", "device", "temp"):
                self.add("read", "reads")
            elif is_secret(p.path) and p.where != "inside":
                self.add("read_secrets", f"reads {p.path}, which holds keys or credentials")
            elif p.where in ("inside", "system"):
                self.add("read", "reads")
            else:
                self.add("read_outside_worktree", f"reads {p.path}, outside the worktree")

    def run_file(self, word: Word) -> None:
        """A program or script named by path: it may run if it lies in the worktree (or a temp folder)."""
        places = self.places(word)
        if all(p.where in ("inside", "temp") for p in places):
            self.add("run_local", f"runs {word.text}")
        else:
            self.add("unknown", f"runs {word.text}, a program outside the worktree the policy does not know")

    def inline_code(self, code: str, language: str) -> None:
        if _SPAWNS.search(code) or language == "AppleScript":  # AppleScript drives other applications
            self.add(
                "unknown", f"inline {language} code that starts programs, deletes files or uses the network"
            )
            return
        if _WRITES.search(code):  # a file it writes is named in the code: judge the ones spelled out
            for literal in _PATH_LITERAL.findall(code):
                if any(p.where not in ("inside", "temp", "device") for p in self.places(Word(literal))):
                    self.add(
                        "unknown", f"inline {language} code that may write {literal}, outside the worktree"
                    )
        self.add("run_local", f"runs inline {language} code")

    # --- the command --------------------------------------------------------------------------------------
    def judge(self) -> list[Action]:
        cmd = self.cmd
        for red in cmd.redirects:
            if red.writes:
                self.write(red.target, f"redirects output ({red.fd}{red.op}) to")
            elif red.reads:
                self.read(red.target)
        if any(v in ("sudo", "doas", "su", "pkexec", "runuser") for v in cmd.via):
            self.add("privileged", "runs as another user")
        if not cmd.words:
            return self.actions or [Action("read", f"`{self.text}`: redirections only")]
        if cmd.words[0].dynamic:
            self.add("unknown", "the program to run is only known when it runs")
            return self.actions
        args = list(cmd.words[1:])
        handler = HANDLERS.get(cmd.name)
        first = cmd.words[0].text
        if "/" in first and handler is None:
            self.run_file(cmd.words[0])
        elif handler is None:
            self.add("unknown", f"`{cmd.name}` is not a command the policy knows")
        else:
            handler(self, args)
        if cmd.stdin_args and cmd.name in _PATH_TAKERS:
            self.add("unknown", "takes more files to work on from its input (xargs)")
        if cmd.name in ("echo", "printf", "printenv") and any(_SECRET_VARIABLE.search(w.text) for w in args):
            self.add("read_secrets", "prints a variable that holds a credential")
        if cmd.name == "printenv" and any(_SECRET_VARIABLE.search("$" + w.text) for w in args):
            self.add("read_secrets", "prints a variable that holds a credential")
        if any(a.name in _RUNS_HERE for a in self.actions):
            for where in self.run_dirs_outside():
                self.add("unknown", f"runs in {where}, outside the worktree")
                break
        return self.actions or [Action("read", f"`{self.text}`")]

    def run_dirs_outside(self) -> list[str]:
        """The folders (other than the worktree and temp folders) the command may run in."""
        out = []
        for cwd in self.cwds:
            if cwd is None:
                out.append("a folder only known when it runs (after a `cd` to a variable)")
                continue
            found = locate(cwd, self.scope)
            if found.where not in ("inside", "temp"):
                out.append(found.path)
        return out


def command_actions(cmd: SimpleCommand, scope: Scope, base_cwd: str) -> list[Action]:
    """The policy actions of one simple command run from ``base_cwd``."""
    return Judge(cmd, scope, base_cwd).judge()


# --- rules, by program ------------------------------------------------------------------------------------


def _read_only(j: Judge, args: list[Word]) -> None:
    j.add("read", "reads")


def _reads_all(value_opts: Iterable[str] = ()) -> Handler:
    def rule(j: Judge, args: list[Word]) -> None:
        for w in _positionals(args, value_opts):
            j.read(w)
        j.add("read", "reads")

    return rule


def _reads_after_first(value_opts: Iterable[str] = (), script_flags: Iterable[str] = ()) -> Handler:
    """grep PATTERN FILES…, jq FILTER FILES…: the first positional is not a path (unless -e/-f gave it)."""
    flags = tuple(script_flags)

    def rule(j: Judge, args: list[Word]) -> None:
        pos = _positionals(args, value_opts)
        for w in pos[0 if flags and _has(args, *flags) else 1 :]:
            j.read(w)
        j.add("read", "reads")

    return rule


def _writes_all(value_opts: Iterable[str] = (), skip_first: bool = False) -> Handler:
    def rule(j: Judge, args: list[Word]) -> None:
        pos = _positionals(args, value_opts)
        if skip_first and pos:  # chmod MODE FILES…, chown OWNER FILES…
            pos = pos[1:]
        for w in pos:
            j.write(w)
        if not pos:
            j.add("read", "changes nothing")

    return rule


def _rm(j: Judge, args: list[Word]) -> None:
    recursive = _has(args, "-r", "-R", "--recursive")
    for w in _positionals(args):
        j.delete(w, recursive)


def _find(j: Judge, args: list[Word]) -> None:
    i = 0
    while i < len(args) and (args[i].text in ("-H", "-L", "-P") or args[i].text.startswith(("-O", "-D"))):
        i += 1
    roots = []
    while i < len(args) and not args[i].text.startswith(("-", "(", "!", ")")):
        roots.append(args[i])
        i += 1
    roots = roots or [Word(".")]
    for root in roots:
        j.read(root)
        if any(a.text == "-delete" for a in args):
            j.delete(root, recursive=True)
    for flag in ("-fprint", "-fprint0", "-fprintf", "-fls"):
        target = _value(args, flag)
        if target is not None:
            j.write(target)


def _cp(j: Judge, args: list[Word]) -> None:
    opts = ("-t", "--target-directory", "-S", "--suffix")
    pos = _positionals(args, opts)
    target = _value(args, "-t", "--target-directory")
    if target is None and len(pos) >= 2:
        target, pos = pos[-1], pos[:-1]
    for w in pos:
        j.read(w)
    if target is not None:
        j.write(target)


def _mv(j: Judge, args: list[Word]) -> None:
    pos = _positionals(args, ("-t", "--target-directory", "-S", "--suffix"))
    target = _value(args, "-t", "--target-directory")
    for w in pos:  # the sources disappear: moving is writing them too
        j.write(w, "moves")
    if target is not None:
        j.write(target, "moves into")


def _ln(j: Judge, args: list[Word]) -> None:
    pos = _positionals(args, ("-t", "--target-directory", "-S", "--suffix"))
    target = _value(args, "-t", "--target-directory")
    if _has(args, "-s", "--symbolic"):
        # a link to outside lets a later write in the same command leave the worktree unseen
        for source in pos if target is not None else pos[:-1] or pos:
            if any(p.where not in ("inside", "temp") for p in j.places(source)):
                j.add("unknown", f"links to {source.text}, outside the worktree")
    if target is not None:
        j.write(target)
    elif len(pos) >= 2:
        j.write(pos[-1], "creates a link at")
    elif pos:
        j.write(Word(pos[0].text.rstrip("/").rsplit("/", 1)[-1] or "."), "creates a link at")


def _install(j: Judge, args: list[Word]) -> None:
    pos = _positionals(args, ("-m", "--mode", "-o", "--owner", "-g", "--group", "-t", "--target-directory"))
    if _has(args, "-d", "--directory"):
        for w in pos:
            j.write(w)
        return
    _cp(j, [a for a in args if a.text not in ("-m", "-o", "-g")])


def _dd(j: Judge, args: list[Word]) -> None:
    for w in args:
        key, eq, value = w.text.partition("=")
        if eq and key == "of":
            j.write(Word(value, w.dynamic, w.glob))
        elif eq and key == "if":
            j.read(Word(value, w.dynamic, w.glob))
    j.add("read", "copies data")


def _tee(j: Judge, args: list[Word]) -> None:
    for w in _positionals(args):
        j.write(w)
    j.add("read", "copies its input")


def _sed(j: Judge, args: list[Word]) -> None:
    in_place = _has(args, "--in-place") or any(re.fullmatch(r"-[a-zA-Z]*i.*", a.text) for a in args)
    pos = _positionals(args, ("-e", "--expression", "-f", "--file", "-l", "--line-length"))
    files = pos if _has(args, "-e", "--expression", "-f", "--file") else pos[1:]
    for w in files:
        if in_place:
            j.write(w, "edits in place")
        else:
            j.read(w)
    j.add("read", "filters text")


def _awk(j: Judge, args: list[Word]) -> None:
    pos = _positionals(args, ("-f", "-v", "-F", "--file", "--assign", "--field-separator", "-i", "--include"))
    if not _has(args, "-f", "--file") and pos:
        j.inline_code(pos[0].text, "awk")
        pos = pos[1:]
    include = _value(args, "-i", "--include")
    for w in pos:
        if "=" in w.text:
            continue  # var=value between files
        if include is not None and include.text == "inplace":
            j.write(w, "edits in place")
        else:
            j.read(w)


def _sort(j: Judge, args: list[Word]) -> None:
    out = _value(args, "-o", "--output")
    if out is not None:
        j.write(out)
    for w in _positionals(args, ("-o", "--output", "-k", "--key", "-t", "--field-separator", "-S", "-T")):
        j.read(w)
    j.add("read", "sorts")


def _tar(j: Judge, args: list[Word]) -> None:
    first = args[0].text if args else ""
    bundle = first if first and not first.startswith("-") else ""
    extract = "x" in bundle or _has(args, "-x", "--extract", "--get")
    create = "c" in bundle or "r" in bundle or "u" in bundle or _has(args, "-c", "--create", "-r", "--append")
    archive = _value(args, "-f", "--file")
    if archive is None and bundle and "f" in bundle and len(args) > 1:
        archive = args[1]
    j.with_cwd(_value(args, "-C", "--directory"))
    if extract:
        j.write(Word("."), "extracts an archive into")
        if archive is not None:
            j.read(archive)
    elif create and archive is not None:
        j.write(archive)
    elif archive is not None:
        j.read(archive)
    j.add("read", "archives")


def _unzip(j: Judge, args: list[Word]) -> None:
    if _has(args, "-l", "-t", "-v", "-Z"):
        j.add("read", "lists an archive")
        return
    target = _value(args, "-d")
    j.write(target or Word("."), "extracts an archive into")


def _compress(j: Judge, args: list[Word]) -> None:
    if _has(args, "-c", "--stdout", "-l", "--list", "-t", "--test"):
        for w in _positionals(args):
            j.read(w)
        j.add("read", "reads compressed data")
        return
    for w in _positionals(args, ("-S", "--suffix")):
        j.write(w, "compresses or expands in place")


def _zip(j: Judge, args: list[Word]) -> None:
    pos = _positionals(args, ("-x", "-i", "-b", "-n", "-t", "-tt"))
    if pos:
        j.write(pos[0])
    for w in pos[1:]:
        j.read(w)


def _rsync(j: Judge, args: list[Word]) -> None:
    pos = _positionals(
        args,
        (
            "-e",
            "--rsh",
            "--exclude",
            "--include",
            "--filter",
            "-f",
            "--exclude-from",
            "--include-from",
            "--files-from",
            "--port",
            "--password-file",
        ),
    )
    if len(pos) < 2:
        j.add("read", "lists files")
        return
    remote = [w for w in pos if _is_remote(w.text)]
    dest = pos[-1]
    if _is_remote(dest.text):
        j.add("network_write", f"copies files to another machine ({dest.text})")
    else:
        if remote:
            j.add("network_read", "copies files from another machine")
        if _has(
            args, "--delete", "--delete-after", "--delete-before", "--delete-during", "--delete-excluded"
        ):
            j.delete(dest, recursive=True)
        else:
            j.write(dest)
    for w in pos[:-1]:
        if not _is_remote(w.text):
            j.read(w)
            if _has(args, "--remove-source-files"):
                j.write(w, "moves")


def _is_remote(text: str) -> bool:
    return bool(re.match(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[^/\s:]+:(?!//))", text)) and not text.startswith(
        ("./", "/", "~")
    )


def _scp(j: Judge, args: list[Word]) -> None:
    pos = _positionals(args, ("-P", "-i", "-o", "-F", "-c", "-l", "-S", "-J"))
    if not pos:
        j.add("read", "nothing to copy")
        return
    dest = pos[-1]
    if _is_remote(dest.text):
        j.add("network_write", f"copies files to another machine ({dest.text})")
    else:
        j.add("network_read", "copies files from another machine")
        j.write(dest)
    for w in pos[:-1]:
        if not _is_remote(w.text):
            j.read(w)


def _ssh(j: Judge, args: list[Word]) -> None:
    pos = _positionals(
        args,
        (
            "-p",
            "-i",
            "-o",
            "-F",
            "-l",
            "-L",
            "-R",
            "-D",
            "-J",
            "-c",
            "-m",
            "-b",
            "-e",
            "-E",
            "-I",
            "-O",
            "-Q",
            "-S",
            "-W",
            "-w",
            "-B",
        ),
    )
    if _has(args, "-V", "-G") or not pos:
        j.add("read", "prints ssh's settings")
        return
    j.add("remote_exec", f"runs commands on {pos[0].text}")


# --- network ---


_CURL_VALUES = frozenset(
    [
        "-X",
        "--request",
        "-d",
        "--data",
        "--data-raw",
        "--data-binary",
        "--data-urlencode",
        "--data-ascii",
        "--json",
        "-F",
        "--form",
        "--form-string",
        "-T",
        "--upload-file",
        "-H",
        "--header",
        "-u",
        "--user",
        "-o",
        "--output",
        "-A",
        "--user-agent",
        "-e",
        "--referer",
        "-b",
        "--cookie",
        "-c",
        "--cookie-jar",
        "-x",
        "--proxy",
        "-w",
        "--write-out",
        "-m",
        "--max-time",
        "-r",
        "--range",
        "-K",
        "--config",
        "-E",
        "--cert",
        "--key",
        "--cacert",
        "--connect-timeout",
        "--retry",
        "--retry-delay",
        "--retry-max-time",
        "--resolve",
        "--connect-to",
        "-U",
        "--proxy-user",
        "--output-dir",
        "--url",
        "-z",
        "--time-cond",
        "-Y",
        "-y",
        "--limit-rate",
        "--max-filesize",
        "--oauth2-bearer",
        "--aws-sigv4",
        "--interface",
        "--dns-servers",
        "--unix-socket",
        "--variable",
        "--expand-url",
    ]
)
_CURL_WRITES = (
    "-d",
    "--data",
    "--data-raw",
    "--data-binary",
    "--data-urlencode",
    "--data-ascii",
    "--json",
    "-F",
    "--form",
    "--form-string",
    "-T",
    "--upload-file",
)


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


def _curl(j: Judge, args: list[Word]) -> None:
    if _has(args, "-K", "--config"):
        j.add("network_write", "reads its request from a config file")
    method_word = _value(args, "-X", "--request")
    method = method_word.text.upper() if method_word else ""
    sends = any(_value(args, f) is not None or _has(args, f) for f in _CURL_WRITES) and not _has(
        args, "-G", "--get"
    )
    if _has(args, "-I", "--head") and not method:
        method = "HEAD"
    urls = _positionals(args, _CURL_VALUES) + [w for w in [_value(args, "--url")] if w is not None]
    out = _value(args, "-o", "--output")
    if out is not None:
        j.write(out, "downloads to")
    elif _has(args, "-O", "--remote-name", "--remote-name-all"):
        j.write(_value(args, "--output-dir") or Word("."), "downloads into")
    for flag in ("-c", "--cookie-jar"):
        jar = _value(args, flag)
        if jar is not None:
            j.write(jar)
    for flag in ("-T", "--upload-file"):
        up = _value(args, flag)
        if up is not None:
            j.read(up)
    for flag in ("-d", "--data", "--data-binary", "--data-raw", "--json", "-F", "--form"):
        data = _value(args, flag)
        if data is not None and "@" in data.text and flag != "--data-raw":
            j.read(Word(data.text.split("@", 1)[1].split(";")[0], data.dynamic))
    _web(j, urls, method, sends)


def _wget(j: Judge, args: list[Word]) -> None:
    values = (
        "-O",
        "--output-document",
        "-o",
        "--output-file",
        "-P",
        "--directory-prefix",
        "--post-data",
        "--post-file",
        "--method",
        "--body-data",
        "--body-file",
        "--header",
        "-U",
        "--user-agent",
        "-e",
        "--execute",
        "-i",
        "--input-file",
        "-t",
        "--tries",
        "-T",
        "--timeout",
        "--user",
        "--password",
    )
    method_word = _value(args, "--method")
    method = method_word.text.upper() if method_word else ""
    sends = any(
        _value(args, f) is not None for f in ("--post-data", "--post-file", "--body-data", "--body-file")
    )
    out = _value(args, "-O", "--output-document")
    if out is not None and out.text != "-":
        j.write(out, "downloads to")
    elif out is None:
        j.write(_value(args, "-P", "--directory-prefix") or Word("."), "downloads into")
    if _value(args, "-i", "--input-file") is not None:
        j.add("network_read", "downloads the URLs listed in a file")
    _web(j, _positionals(args, values), method, sends)


def _httpie(j: Judge, args: list[Word]) -> None:
    pos = _positionals(
        args,
        (
            "-a",
            "--auth",
            "-o",
            "--output",
            "--session",
            "-A",
            "--auth-type",
            "--verify",
            "--cert",
            "--cert-key",
            "--proxy",
            "--timeout",
        ),
    )
    method = ""
    if pos and re.fullmatch(r"[A-Z]+", pos[0].text):
        method, pos = pos[0].text, pos[1:]
    items = pos[1:]
    sends = any(re.search(r"(?<!=)=|:=|@", w.text) for w in items) or _has(args, "-f", "--form")
    out = _value(args, "-o", "--output")
    if out is not None:
        j.write(out, "downloads to")
    _web(j, pos[:1], method, sends)


def _raw_network(j: Judge, args: list[Word]) -> None:
    j.add("network_write", f"{j.cmd.name} opens a raw network connection")


def _network_read(j: Judge, args: list[Word]) -> None:
    j.add("network_read", "looks something up on the network")


# --- programs and languages ---

_INTERPRETERS = {
    "python": "python",
    "python2": "python",
    "python3": "python",
    "pypy": "python",
    "pypy3": "python",
    "node": "JavaScript",
    "nodejs": "JavaScript",
    "deno": "JavaScript",
    "bun": "JavaScript",
    "ruby": "Ruby",
    "perl": "Perl",
    "php": "PHP",
    "lua": "Lua",
    "Rscript": "R",
    "julia": "Julia",
    "osascript": "AppleScript",
    "tclsh": "Tcl",
}
_INLINE_FLAGS = {
    "python": ("-c",),
    "JavaScript": ("-e", "--eval", "-p", "--print"),
    "Ruby": ("-e",),
    "Perl": ("-e", "-E"),
    "PHP": ("-r",),
    "Lua": ("-e",),
    "R": ("-e",),
    "Julia": ("-e", "--eval"),
    "AppleScript": ("-e",),
    "Tcl": (),
}
_PY_MODULES_TESTS = frozenset({"pytest", "unittest", "nose2", "nose", "doctest", "tox", "nox", "ward"})
_PY_MODULES_BUILD = frozenset(
    {
        "pip",
        "venv",
        "virtualenv",
        "build",
        "mypy",
        "ruff",
        "black",
        "isort",
        "flake8",
        "pylint",
        "pyright",
        "coverage",
        "compileall",
        "py_compile",
        "ensurepip",
        "pre_commit",
        "setuptools",
        "wheel",
        "pip_audit",
        "bandit",
        "pydoc",
    }
)
_PY_MODULES_READ = frozenset(
    {"json.tool", "site", "sysconfig", "platform", "this", "tokenize", "pydoc", "timeit"}
)


_INTERPRETER_VALUES = frozenset(
    {
        "-W",
        "-X",
        "-I",
        "-M",
        "-r",
        "--require",
        "--import",
        "--loader",
        "--inspect-port",
        "-C",
        "--title",
        "--env-file",
    }
)


def _interpreter(j: Judge, args: list[Word]) -> None:
    """python/node/ruby/perl/…: a script file runs like any local program; inline code (``-c``, ``-e``, a
    here-document) is read for what it does; ``-m pytest`` and friends are the tools they name."""
    name = j.cmd.name
    language = _INTERPRETERS.get(name) or _INTERPRETERS.get(re.sub(r"[\d.]+$", "", name), "script")
    if len(args) == 1 and args[0].text in ("-V", "--version", "-v"):
        j.add("read", "prints its version")
        return
    if name in ("deno", "bun") and args and not args[0].text.startswith("-"):
        if _runtime_subcommand(j, args, language):
            return
        args = args[1:] if args[0].text in ("run", "task") else args
    inline = _INLINE_FLAGS.get(language, ())
    i = 0
    while i < len(args):
        t = args[i].text
        if t == "--":
            i += 1
            break
        if not t.startswith("-") or t == "-":
            break
        flag = next((f for f in inline if t == f or (len(f) == 2 and t.startswith(f) and len(t) > 2)), None)
        bundled = language in ("Perl", "Ruby") and re.fullmatch(r"-[a-zA-Z]*[eE]", t)
        if flag is not None or bundled:
            code = (
                t[2:] if flag is not None and t != flag else (args[i + 1].text if i + 1 < len(args) else "")
            )
            j.inline_code(code, language)
            if language == "Perl" and any(re.fullmatch(r"-[a-zA-Z]*i\S*", a.text) for a in args):
                for w in args[i + 2 :]:
                    if not w.text.startswith("-"):
                        j.write(w, "edits in place")
            return
        if language == "python" and (t == "-m" or (t.startswith("-m") and len(t) > 2)):
            module = t[2:] if len(t) > 2 else (args[i + 1].text if i + 1 < len(args) else "")
            _python_module(j, module, args[i + (1 if len(t) > 2 else 2) :])
            return
        i += 2 if t in _INTERPRETER_VALUES else 1
    script = args[i] if i < len(args) else None
    if script is None or script.text == "-":
        for red in j.cmd.redirects:
            if red.op in ("<<", "<<-", "<<<"):
                j.inline_code(red.body or red.target.text, language)
                return
            if red.op == "<":
                j.run_file(red.target)
                return
        if j.cmd.piped_in or script is not None:
            j.add("unknown", f"runs {language} code read from its input")
        else:
            j.add("unknown", f"an interactive {language} session")
        return
    if language == "python" and script.text.endswith("manage.py"):
        _django(j, [w.text for w in args[i + 1 :]])
    j.run_file(script)


def _runtime_subcommand(j: Judge, args: list[Word], language: str) -> bool:
    """deno/bun subcommands; False when the first word is a script (or ``run``/``task``) to run."""
    sub = args[0].text
    if sub == "test":
        j.add("run_tests", "runs the tests")
    elif sub in (
        "fmt",
        "lint",
        "check",
        "install",
        "add",
        "remove",
        "build",
        "compile",
        "cache",
        "info",
        "i",
    ):
        j.add("run_build", f"{j.cmd.name} {sub}")
    elif sub == "publish":
        j.add("deploy", "publishes a package")
    elif sub == "x":
        _wrapper_inner(j, args[1:])
    elif sub == "eval":
        j.inline_code(args[1].text if len(args) > 1 else "", language)
    else:
        return False
    return True


def _python_module(j: Judge, module: str, rest: list[Word]) -> None:
    top = module.split(".")[0]
    if top in _PY_MODULES_TESTS:
        j.add("run_tests", f"runs the tests ({module})")
    elif module == "pip" or top == "pip":
        _pip(j, rest)
    elif top == "twine" and rest and rest[0].text == "upload":
        j.add("deploy", "uploads a package to a registry")
    elif top in _PY_MODULES_BUILD:
        j.add("run_build", f"python -m {module}")
    elif module in _PY_MODULES_READ:
        j.add("read", f"python -m {module}")
    elif top in ("http",):
        j.add("run_local", "serves files over HTTP")
    elif top in ("smtplib", "smtpd"):
        j.add("message_external", "sends mail")
    else:
        j.add("run_local", f"runs the module {module}")


def _django(j: Judge, rest: list[str]) -> None:
    sub = rest[0] if rest else ""
    if sub == "test":
        j.add("run_tests", "runs the tests")
    elif sub in ("migrate", "flush", "sqlflush", "dbshell", "loaddata", "createsuperuser", "changepassword"):
        j.add("database", f"manage.py {sub} changes the database")


def _manage_py(j: Judge, args: list[Word]) -> None:
    _django(j, [w.text for w in args])
    j.run_file(j.cmd.words[0])


def _environment(j: Judge, args: list[Word]) -> None:
    """``env`` or ``printenv`` alone prints every variable, tokens included; one named variable is fine."""
    if [w for w in _positionals(args, ("-u", "--unset")) if "=" not in w.text]:
        j.add("read", "prints a variable")
    else:
        j.add("read_secrets", "prints the whole environment, tokens included")


def _wrapper_inner(j: Judge, inner: list[Word]) -> None:
    """npx X, uvx X, poetry run X, bundle exec X: judge X as the command."""
    if not inner:
        j.add("read", "runs nothing")
        return
    sub = SimpleCommand(tuple(inner), (), (), j.cmd.cwds, j.cmd.via, j.cmd.piped_in, j.cmd.stdin_args)
    inner_judge = Judge(sub, j.scope, "/")
    inner_judge.cwds = j.cwds
    actions = inner_judge.judge()
    if all(a.name == "unknown" for a in actions) and "/" not in inner[0].text:
        j.add("unknown", f"fetches and runs the package `{inner[0].text}`, which the policy does not know")
        return
    j.actions.extend(actions)


_TEST_WORDS = re.compile(r"^(test|tests|check|spec|specs|unit|e2e|integration|test[:_-].*|.*[:_-]test)$")
_DEPLOY_WORDS = re.compile(r"^(deploy|release|publish|upload|ship|push)([:_-].*)?$")


def _npm(j: Judge, args: list[Word]) -> None:
    pos = _positionals(args, ("--prefix", "-C", "--dir", "--filter", "-w", "--workspace", "--registry"))
    sub = pos[0].text if pos else ""
    rest = pos[1:]
    if _has(args, "-g", "--global") or any(a.text == "--location=global" for a in args):
        j.add("system_change", "installs or removes packages globally")
        return
    if sub in ("test", "t", "tst") or (
        sub in ("run", "run-script") and rest and _TEST_WORDS.match(rest[0].text)
    ):
        j.add("run_tests", "runs the tests")
    elif sub in ("publish", "unpublish", "deprecate", "dist-tag", "owner", "access", "team"):
        j.add("deploy", f"{j.cmd.name} {sub} changes a package registry")
    elif sub in ("login", "adduser", "logout", "token"):
        j.add("key_rotation", f"{j.cmd.name} {sub}")
    elif sub in ("run", "run-script") and rest and _DEPLOY_WORDS.match(rest[0].text):
        j.add("deploy", f"runs the script {rest[0].text!r}")
    elif sub in ("exec", "x", "dlx"):
        _wrapper_inner(j, rest)
    elif sub == "" and j.cmd.name in ("yarn", "pnpm", "bun"):
        j.add("run_build", "installs the dependencies")
    elif j.cmd.name in ("yarn", "pnpm") and sub and sub not in _NPM_SUBS and not sub.startswith("-"):
        # `yarn build`, `pnpm lint`: a script from package.json
        if _TEST_WORDS.match(sub):
            j.add("run_tests", "runs the tests")
        elif _DEPLOY_WORDS.match(sub):
            j.add("deploy", f"runs the script {sub!r}")
        else:
            j.add("run_build", f"runs the script {sub!r}")
    else:
        j.add("run_build", f"{j.cmd.name} {sub}".strip())


_NPM_SUBS = frozenset(
    {
        "install",
        "i",
        "ci",
        "add",
        "remove",
        "rm",
        "uninstall",
        "update",
        "upgrade",
        "up",
        "run",
        "run-script",
        "exec",
        "build",
        "start",
        "ls",
        "list",
        "outdated",
        "audit",
        "why",
        "init",
        "create",
        "pack",
        "version",
        "view",
        "info",
        "link",
        "unlink",
        "dedupe",
        "prune",
        "config",
        "cache",
        "help",
        "doctor",
        "fund",
        "explain",
        "query",
        "rebuild",
        "restart",
        "stop",
        "prefix",
        "root",
        "bin",
        "search",
        "set",
        "get",
        "install-test",
        "it",
        "workspaces",
        "workspace",
        "import",
        "patch",
        "store",
        "env",
        "node",
        "dev",
        "format",
        "lint",
    }
)


def _npx(j: Judge, args: list[Word]) -> None:
    pos = _positionals(args, ("-p", "--package", "-c", "--call"))
    call = _value(args, "-c", "--call")
    if call is not None:
        j.add("unknown", "runs a command string through npx -c")
        return
    _wrapper_inner(j, args[args.index(pos[0]) :] if pos else [])


def _pip(j: Judge, args: list[Word]) -> None:
    pos = _positionals(
        args,
        (
            "-r",
            "--requirement",
            "-c",
            "--constraint",
            "-t",
            "--target",
            "-i",
            "--index-url",
            "--extra-index-url",
            "--prefix",
            "--root",
            "-e",
            "--editable",
        ),
    )
    if _has(args, "--break-system-packages") or _value(args, "--prefix", "--root") is not None:
        j.add("system_change", "installs packages into the system's Python")
        return
    target = _value(args, "-t", "--target")
    if target is not None:
        j.write(target, "installs into")
    sub = pos[0].text if pos else ""
    j.add("run_build", f"pip {sub}".strip())


def _python_tool(j: Judge, args: list[Word]) -> None:
    """uv, poetry, pdm, hatch, pipenv, conda, rye: package managers with a `run X` that runs X."""
    pos = _positionals(
        args,
        (
            "-p",
            "--python",
            "--directory",
            "-C",
            "--project",
            "-n",
            "--name",
            "--with",
            "--from",
            "-e",
            "--env",
        ),
    )
    sub = pos[0].text if pos else ""
    if sub == "run":
        idx = args.index(pos[0])
        inner = _positionals(
            args[idx + 1 :], ("--with", "--from", "-p", "--python", "-e", "--env", "-n", "--name")
        )
        start = args[idx + 1 :].index(inner[0]) if inner else 0
        _wrapper_inner(j, args[idx + 1 :][start:] if inner else [])
    elif sub == "pip":
        _pip(j, args[args.index(pos[0]) + 1 :])
    elif sub in ("publish", "upload"):
        j.add("deploy", f"{j.cmd.name} {sub} uploads a package")
    elif sub == "tool" and len(pos) > 1 and pos[1].text == "run":
        _wrapper_inner(j, args[args.index(pos[1]) + 1 :])
    elif sub == "test":
        j.add("run_tests", "runs the tests")
    else:
        j.add("run_build", f"{j.cmd.name} {sub}".strip())


def _uvx(j: Judge, args: list[Word]) -> None:
    inner = _positionals(args, ("--with", "--from", "-p", "--python"))
    _wrapper_inner(j, args[args.index(inner[0]) :] if inner else [])


def _subcommand_tool(
    tests: Iterable[str], deploys: Iterable[str] = (), runs: Iterable[str] = (), reads: Iterable[str] = ()
) -> Handler:
    tests, deploys, runs, reads = frozenset(tests), frozenset(deploys), frozenset(runs), frozenset(reads)

    def rule(j: Judge, args: list[Word]) -> None:
        pos = _positionals(args, ("-C", "--manifest-path", "-p", "--package", "--project", "-f", "--file"))
        sub = pos[0].text if pos else ""
        if sub in tests:
            j.add("run_tests", "runs the tests")
        elif sub in deploys:
            j.add("deploy", f"{j.cmd.name} {sub} publishes or deploys")
        elif sub in runs:
            j.add("run_local", f"{j.cmd.name} {sub}")
        elif sub in reads or (_has(args, "--version", "-V") and not sub):
            j.add("read", f"{j.cmd.name} {sub}".strip())
        else:
            j.add("run_build", f"{j.cmd.name} {sub}".strip())

    return rule


def _make(j: Judge, args: list[Word]) -> None:
    j.with_cwd(_value(args, "-C", "--directory"))
    targets = [
        w.text
        for w in _positionals(
            args, ("-C", "--directory", "-f", "--file", "--makefile", "-j", "--jobs", "-l", "-o", "-W", "-I")
        )
        if "=" not in w.text
    ]
    if any(t in ("install", "uninstall") for t in targets):
        j.add("system_change", "make install writes outside the worktree")
    elif any(_DEPLOY_WORDS.match(t) for t in targets):
        j.add("deploy", f"make {' '.join(targets)}")
    elif any(_TEST_WORDS.match(t) for t in targets):
        j.add("run_tests", "runs the tests")
    else:
        j.add("run_build", f"make {' '.join(targets)}".strip())


def _build_tool(j: Judge, args: list[Word]) -> None:
    goals = [
        w.text for w in _positionals(args, ("-p", "-f", "--file", "-D", "-P", "-pl", "-x", "--exclude-task"))
    ]
    if any(_DEPLOY_WORDS.match(g) or g.startswith(("publish", "deploy")) for g in goals):
        j.add("deploy", f"{j.cmd.name} {' '.join(goals)}")
    elif any(_TEST_WORDS.match(g) or g in ("verify", "connectedCheck") for g in goals):
        j.add("run_tests", "runs the tests")
    else:
        j.add("run_build", f"{j.cmd.name} {' '.join(goals)}".strip())


def _compiler(j: Judge, args: list[Word]) -> None:
    out = _value(args, "-o")
    if out is not None:
        j.write(out)
    j.add("run_build", "compiles")


def _run_build(j: Judge, args: list[Word]) -> None:
    j.add("run_build", j.cmd.name)


def _run_tests(j: Judge, args: list[Word]) -> None:
    j.add("run_tests", "runs the tests")


def _bundle(j: Judge, args: list[Word]) -> None:
    pos = _positionals(args)
    if pos and pos[0].text == "exec":
        _wrapper_inner(j, args[args.index(pos[0]) + 1 :])
    else:
        j.add("run_build", "bundle")


def _rake(j: Judge, args: list[Word]) -> None:
    tasks = [w.text for w in _positionals(args)]
    if any(t.startswith("db:") for t in tasks):
        j.add("database", f"{j.cmd.name} {' '.join(tasks)} changes the database")
    elif any(_TEST_WORDS.match(t) for t in tasks):
        j.add("run_tests", "runs the tests")
    elif j.cmd.name == "rails" and tasks and tasks[0] in ("server", "s", "console", "c", "runner", "r"):
        j.add("run_local", f"rails {tasks[0]}")
    elif any(_DEPLOY_WORDS.match(t) for t in tasks):
        j.add("deploy", f"{j.cmd.name} {' '.join(tasks)}")
    else:
        j.add("run_build", f"{j.cmd.name} {' '.join(tasks)}".strip())


def _docker(j: Judge, args: list[Word]) -> None:
    pos = _positionals(
        args,
        (
            "-H",
            "--host",
            "--context",
            "-c",
            "--config",
            "-f",
            "--file",
            "-p",
            "--project-name",
            "--log-level",
            "--env-file",
        ),
    )
    words = [w.text for w in pos]
    sub = words[0] if words else ""
    if sub == "compose" or j.cmd.name.endswith("compose"):
        words = words[1:] if sub == "compose" else words
        sub = words[0] if words else ""
        if sub in ("build", "config", "convert", "pull"):
            j.add("run_build", f"compose {sub}")
        elif sub in ("ps", "logs", "ls", "images", "top", "version", "port", "events"):
            j.add("read", f"compose {sub}")
        else:
            j.add("system_change", f"compose {sub} starts, stops or changes containers")
        return
    if sub == "buildx" and len(words) > 1:
        sub = words[1]
    if sub in ("build", "pull", "tag", "save", "load", "bake"):
        j.add("run_build", f"{j.cmd.name} {sub}")
    elif sub in (
        "ps",
        "images",
        "image",
        "logs",
        "inspect",
        "version",
        "info",
        "history",
        "top",
        "stats",
        "search",
        "events",
        "port",
        "diff",
        "ls",
    ):
        j.add("read", f"{j.cmd.name} {sub}")
    elif sub in ("push",):
        j.add("deploy", "pushes an image to a registry")
    elif sub in ("login", "logout"):
        j.add("key_rotation", f"{j.cmd.name} {sub}")
    else:
        j.add("system_change", f"{j.cmd.name} {sub} runs or changes containers (they can reach the host)")


# --- git and the forges ---

_GIT_READ = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "blame",
        "grep",
        "describe",
        "shortlog",
        "rev-parse",
        "rev-list",
        "ls-files",
        "ls-tree",
        "cat-file",
        "merge-base",
        "name-rev",
        "whatchanged",
        "show-ref",
        "for-each-ref",
        "count-objects",
        "fsck",
        "verify-commit",
        "verify-tag",
        "help",
        "version",
        "var",
        "check-ignore",
        "check-attr",
        "diff-tree",
        "diff-files",
        "diff-index",
        "range-diff",
        "annotate",
        "show-branch",
        "cherry",
        "check-ref-format",
        "get-tar-commit-id",
        "ls-remote",
        "--version",
        "--help",
        "-h",
        "reflog",
    }
)
_GIT_LOCAL = frozenset(
    {
        "add",
        "commit",
        "merge",
        "rebase",
        "cherry-pick",
        "revert",
        "mv",
        "rm",
        "switch",
        "apply",
        "am",
        "init",
        "notes",
        "sparse-checkout",
        "maintenance",
        "bundle",
        "commit-tree",
        "hash-object",
        "mktree",
        "read-tree",
        "write-tree",
        "symbolic-ref",
        "merge-file",
        "difftool",
        "mergetool",
        "format-patch",
        "fetch",
        "pull",
        "restore",
        "checkout",
        "stash",
        "branch",
        "tag",
        "remote",
        "submodule",
        "bisect",
        "lfs",
        "update-index",
        "gc",
        "repack",
        "pack-refs",
        "rerere",
        "citool",
        "gui",
        "archive",
        "worktree",
        "config",
        "clone",
        "prune",
        "replace",
        "update-ref",
        "filter-branch",
        "filter-repo",
        "send-email",
        "request-pull",
        "push",
        "credential",
        "daemon",
        "instaweb",
        "shell",
        "upload-pack",
        "receive-pack",
        "http-backend",
    }
)
_GIT_CODE_KEYS = re.compile(
    r"^(core\.(hookspath|fsmonitor|sshcommand|pager|editor|askpass|gitproxy)|alias\..*|credential\..*|"
    r"filter\..*|diff\..*\.textconv|url\..*|sequence\.editor|gpg\.program|include\..*|includeif\..*)$",
    re.IGNORECASE,
)


def _git(j: Judge, args: list[Word]) -> None:
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        opt = args[i].text
        if opt == "-C" and i + 1 < len(args):
            j.with_cwd(args[i + 1])
            i += 2
        elif opt in ("-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix"):
            if opt == "-c" and i + 1 < len(args) and _GIT_CODE_KEYS.match(args[i + 1].text.split("=")[0]):
                j.add(
                    "unknown", f"sets {args[i + 1].text.split('=')[0]} for this git command, which runs code"
                )
            i += 2
        elif opt.startswith(("--git-dir=", "--work-tree=")):
            i += 1
        elif opt in ("--version", "--help", "-h"):
            j.add("read", "git")
            return
        else:
            i += 1
    if i >= len(args):
        j.add("read", "git")
        return
    sub, rest = args[i].text, args[i + 1 :]
    words = [w.text for w in rest]
    if sub in _GIT_READ:
        if sub == "reflog" and words[:1] in (["expire"], ["delete"]):
            j.add("delete_tree", "git reflog expire/delete drops history")
        else:
            j.add("read", f"git {sub}")
        return
    if sub not in _GIT_LOCAL:
        j.add("unknown", f"`git {sub}` is not a git command the policy knows (an alias?)")
        return
    elsewhere = j.run_dirs_outside()
    if elsewhere and sub not in ("push", "fetch", "clone", "ls-remote", "lfs"):
        j.add("modify_outside_worktree", f"git {sub} in {elsewhere[0]}, a repository outside the worktree")
    elif elsewhere and sub == "push":
        j.add("push_other_branch", f"pushes from {elsewhere[0]}, a repository outside the worktree")
    if sub == "push":
        _git_push(j, rest)
    elif sub == "clone":
        pos = _positionals(
            rest,
            (
                "-b",
                "--branch",
                "-o",
                "--origin",
                "--depth",
                "-c",
                "--config",
                "--reference",
                "--separate-git-dir",
                "-u",
                "--upload-pack",
                "-j",
                "--jobs",
                "--filter",
                "--template",
                "--shallow-since",
                "--shallow-exclude",
            ),
        )
        if _value(rest, "-u", "--upload-pack") is not None or _value(rest, "--template") is not None:
            j.add("unknown", "git clone with a command or templates of its own")
        j.add("network_read", "clones a repository")
        if len(pos) >= 2:
            j.write(pos[1], "clones into")
        elif pos:
            name = pos[0].text.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git") or "."
            j.write(Word(name, pos[0].dynamic), "clones into")
    elif sub in ("branch", "tag"):
        if _has(rest, "-d", "-D", "--delete"):
            j.add("delete_branch", f"deletes a {sub}")
        else:
            j.add("git_local", f"git {sub}")
    elif sub == "reset":
        if _has(rest, "--hard", "--merge", "--keep"):
            j.add("delete_tree", "git reset --hard discards uncommitted changes")
        else:
            j.add("git_local", "git reset")
    elif sub == "clean":
        if _has(rest, "-n", "--dry-run"):
            j.add("read", "git clean --dry-run")
        else:
            j.add("delete_tree", "git clean deletes untracked files")
    elif (
        sub in ("checkout", "restore")
        and ("." in words or _has(rest, "-f", "--force"))
        and not _has(rest, "--staged", "-b", "-B")
    ):
        j.add("delete_tree", f"git {sub} discards uncommitted changes")
    elif sub == "stash" and words[:1] in (["drop"], ["clear"]):
        j.add("delete_tree", f"git stash {words[0]} drops saved work")
    elif sub == "worktree":
        action = words[0] if words else "list"
        if action == "add":
            j.add("create_worktree", "creates a worktree")
        elif action in ("remove", "prune"):
            j.add("delete_tree", f"git worktree {action}")
        elif action == "list":
            j.add("read", "git worktree list")
        else:
            j.add("git_local", f"git worktree {action}")
    elif sub == "config":
        _git_config(j, rest)
    elif sub in ("filter-branch", "filter-repo", "replace", "prune"):
        j.add("delete_tree", f"git {sub} rewrites or drops history")
    elif sub == "update-ref" and _has(rest, "-d"):
        j.add("delete_branch", "git update-ref -d deletes a ref")
    elif sub in ("send-email", "request-pull"):
        j.add("message_external", f"git {sub} sends mail")
    elif sub in ("submodule", "bisect", "rebase") and (
        (sub == "submodule" and "foreach" in words)
        or (sub == "bisect" and "run" in words)
        or (sub == "rebase" and (_has(rest, "-x", "--exec")))
    ):
        j.add("unknown", f"git {sub} runs a command of its own")
    elif sub in ("credential", "daemon", "instaweb", "shell", "upload-pack", "receive-pack", "http-backend"):
        j.add("unknown", f"git {sub}")
    elif sub == "lfs" and words[:1] == ["push"]:
        j.add("push_other_branch", "git lfs push uploads objects")
    elif sub == "archive":
        out = _value(rest, "-o", "--output")
        if out is not None:
            j.write(out)
        j.add("read", "git archive")
    else:
        j.add("git_local", f"git {sub}")


def _git_config(j: Judge, rest: list[Word]) -> None:
    reading = _has(
        rest,
        "--get",
        "--get-all",
        "--get-regexp",
        "-l",
        "--list",
        "--show-origin",
        "--get-urlmatch",
        "--show-scope",
        "--name-only",
    ) or (len(_positionals(rest, ("-f", "--file"))) == 1 and not _has(rest, "--unset", "--unset-all"))
    if reading or not rest or (rest and rest[0].text in ("get", "list")):
        j.add("read", "git config")
        return
    if _has(rest, "--global", "--system") or _value(rest, "-f", "--file") is not None:
        target = _value(rest, "-f", "--file")
        if target is not None:
            j.write(target)
        else:
            j.add("modify_outside_worktree", "changes git's global settings")
        return
    pos = _positionals(rest, ("-f", "--file", "--type", "--default"))
    key = (
        pos[1].text
        if pos and pos[0].text in ("set", "unset") and len(pos) > 1
        else (pos[0].text if pos else "")
    )
    if _GIT_CODE_KEYS.match(key):
        j.add("modify_policy", f"sets {key}, which makes git run a program")
    else:
        j.add("git_local", f"git config {key}")


def _git_push(j: Judge, rest: list[Word]) -> None:
    if _has(rest, "-n", "--dry-run"):
        j.add("read", "git push --dry-run")
        return
    scope = j.scope
    if _has(rest, "-f", "--force", "--force-with-lease", "--force-if-includes"):
        j.add("merge_pr", "force-pushes (rewrites the remote's history)")
    if _has(rest, "--mirror", "--all", "--branches"):
        j.add("merge_pr", "pushes every branch, main included")
    if _has(rest, "--prune"):
        j.add("delete_branch", "deletes remote branches (--prune)")
    if _has(rest, "--tags", "--follow-tags"):
        j.add("push_other_branch", "pushes tags (releases may follow)")
    deleting = _has(rest, "-d", "--delete")
    pos = _positionals(rest, ("--repo", "-o", "--push-option", "--receive-pack", "--exec", "--signed"))
    if _value(rest, "--receive-pack", "--exec") is not None:
        j.add("unknown", "git push with a command of its own on the other side")
    if pos and (_is_remote(pos[0].text) or pos[0].text.startswith(("/", "./", "../", "~"))):
        j.add("push_other_branch", f"pushes to {pos[0].text}, a remote given by URL or path")
    refspecs = pos[1:]
    if not refspecs:
        refspecs = [Word(scope.current_branch or "")] if not deleting else []
    for spec in refspecs:
        text = spec.text
        if spec.dynamic:
            j.add("unknown", f"pushes {text!r}, a branch only known when it runs")
            continue
        if text.startswith("+"):
            j.add("merge_pr", f"force-pushes {text}")
            text = text[1:]
        src, colon, dst = text.partition(":")
        if colon and not src:
            j.add("delete_branch", f"deletes the remote branch {dst}")
            continue
        target = branch_name(dst if colon else src)
        if target == "HEAD" or not target:
            target = scope.current_branch or ""
        if deleting:
            j.add("delete_branch", f"deletes the remote branch {target}")
        elif target.startswith("refs/tags/"):
            j.add("push_other_branch", f"pushes the tag {target}")
        elif not target:
            j.add("push_other_branch", "pushes the checked-out branch, which is not known")
        elif is_protected(target):
            j.add("merge_pr", f"pushes to {target}")
        elif scope.own_branch is not None and target == scope.own_branch:
            j.add("push_own_branch", f"pushes to {target}, the worker's own branch")
        else:
            j.add("push_other_branch", f"pushes to {target}, which is not the worker's own branch")


def _forge(j: Judge, args: list[Word]) -> None:
    """gh (GitHub) and glab (GitLab): pull/merge requests, issues, releases, the API."""
    pos = _positionals(
        args,
        (
            "-R",
            "--repo",
            "-b",
            "--body",
            "-t",
            "--title",
            "-B",
            "--base",
            "-H",
            "--head",
            "-F",
            "--body-file",
            "-l",
            "--label",
            "-a",
            "--assignee",
            "-r",
            "--reviewer",
            "-m",
            "--milestone",
            "-X",
            "--method",
            "-f",
            "--field",
            "--raw-field",
            "-q",
            "--jq",
            "--json",
            "-L",
            "--limit",
            "-s",
            "--state",
            "--input",
            "-p",
            "--template",
            "-S",
            "--search",
            "--hostname",
            "-h",
        ),
    )
    words = [w.text for w in pos]
    group = words[0] if words else ""
    sub = words[1] if len(words) > 1 else ""
    group = "pr" if group == "mr" else group
    name = j.cmd.name
    if _has(args, "--version") or group in ("", "help", "version", "completion", "--help"):
        j.add("read", name)
    elif group == "pr":
        if sub == "merge":
            j.add("merge_pr", f"{name} {words[0]} merge merges a pull request")
        elif sub == "create":
            if _has(args, "-d", "--draft"):
                j.add("open_draft_pr", "opens a draft pull request")
            else:
                j.add("open_pr", "opens a pull request for review (not a draft)")
        elif sub in ("ready", "update") and not _has(args, "--undo"):
            j.add("open_pr", f"marks a pull request ready ({sub})")
        elif sub in ("view", "list", "status", "diff", "checks", "show"):
            j.add("network_read", f"{name} pr {sub}")
        elif sub == "checkout":
            j.add("git_local", "checks a pull request out")
        else:
            j.add("comment_external", f"{name} pr {sub} changes a pull request")
    elif group == "issue":
        if sub in ("view", "list", "status", "show"):
            j.add("network_read", f"{name} issue {sub}")
        else:
            j.add("comment_external", f"{name} issue {sub} changes an issue")
    elif group == "api":
        _forge_api(j, args, words[1:])
    elif group == "release":
        if sub in ("view", "list", "download"):
            j.add("network_read", f"{name} release {sub}")
        else:
            j.add("deploy", f"{name} release {sub}")
    elif group == "auth":
        j.add("read" if sub == "status" else "key_rotation", f"{name} auth {sub}")
    elif group in ("secret", "variable", "ssh-key", "gpg-key", "token"):
        j.add("read" if sub == "list" else "key_rotation", f"{name} {group} {sub}")
    elif group in ("run", "workflow", "ci", "pipeline", "job"):
        if sub in ("view", "list", "watch", "download", "status", "get", "trace", "lint"):
            j.add("network_read", f"{name} {group} {sub}")
        else:
            j.add("network_write", f"{name} {group} {sub} starts or changes CI")
    elif group == "repo":
        if sub in ("view", "list"):
            j.add("network_read", f"{name} repo {sub}")
        elif sub == "clone":
            j.add("network_read", "clones a repository")
            if len(pos) > 3:
                j.write(pos[3], "clones into")
        else:
            j.add("unknown", f"{name} repo {sub} changes a repository's settings")
    elif group in ("browse", "status", "search"):
        j.add("network_read", f"{name} {group}")
    elif group in ("label", "project", "gist", "snippet"):
        if sub in ("view", "list"):
            j.add("network_read", f"{name} {group} {sub}")
        else:
            j.add("comment_external", f"{name} {group} {sub}")
    else:
        j.add("unknown", f"`{name} {group}` is not a {name} command the policy knows")


def _forge_api(j: Judge, args: list[Word], rest: list[str]) -> None:
    method_word = _value(args, "-X", "--method")
    fields = any(_value(args, f) is not None for f in ("-f", "-F", "--field", "--raw-field", "--input"))
    method = method_word.text.upper() if method_word else ("POST" if fields else "GET")
    path = rest[0] if rest else ""
    if path == "graphql":
        text = " ".join(w.text for w in args)
        if re.search(r"\bmutation\b", text):
            if re.search(r"merge(PullRequest|Branch)", text, re.IGNORECASE):
                j.add("merge_pr", "merges through the GraphQL API")
            else:
                j.add("comment_external", "changes GitHub through the GraphQL API")
        else:
            j.add("network_read", "queries the GraphQL API")
        return
    if method in ("GET", "HEAD"):
        j.add("network_read", f"{method} {path}")
    elif re.search(r"pulls/\d+/merge|/merges\b|merge_requests/\d+/merge", path):
        j.add("merge_pr", f"{method} {path} merges")
    elif method == "DELETE" and "git/refs" in path:
        j.add("delete_branch", f"DELETE {path}")
    elif re.search(r"/(issues|pulls|comments|reviews|labels|assignees|merge_requests|notes)\b", path):
        j.add("comment_external", f"{method} {path}")
    else:
        j.add("network_write", f"{method} {path} changes something through the API")


def _tracker(j: Judge, args: list[Word]) -> None:
    pos = [w.text for w in _positionals(args)]
    if pos and pos[0] in (
        "list",
        "view",
        "get",
        "show",
        "search",
        "me",
        "whoami",
        "status",
        "--help",
        "help",
    ):
        j.add("network_read", f"{j.cmd.name} {pos[0]}")
    else:
        j.add("comment_external", f"{j.cmd.name} changes an external tracker")


# --- the system ---


def _reads_or(reading: Iterable[str]) -> Handler:
    """Read-only for the subcommands (or flags) in ``reading`` ("" for none at all), else a system change."""
    reading = frozenset(reading)

    def rule(j: Judge, args: list[Word]) -> None:
        pos = [w.text for w in _positionals(args, ("-H", "--host", "-M", "--machine", "-o", "--output"))]
        sub = pos[0] if pos else ""
        if sub in reading or any(a.text in reading for a in args if a.text.startswith("-")):
            j.add("read", f"{j.cmd.name} {sub}".strip())
        else:
            j.add("system_change", f"{j.cmd.name} {sub} changes the system".replace("  ", " "))

    return rule


def _ip(j: Judge, args: list[Word]) -> None:
    changing = {
        "add",
        "del",
        "delete",
        "set",
        "change",
        "replace",
        "flush",
        "up",
        "down",
        "append",
        "prepend",
    }
    if any(w.text in changing for w in args) or (j.cmd.name == "ifconfig" and len(_positionals(args)) > 1):
        j.add("system_change", "changes the network setup")
    else:
        j.add("read", j.cmd.name)


def _kill(j: Judge, args: list[Word]) -> None:
    if any(a.text in ("-0", "-l", "-L", "--list") for a in args) or not args:
        j.add("read", "checks a process")
    else:
        j.add("kill_process", "signals or kills processes")


def _crontab(j: Judge, args: list[Word]) -> None:
    j.add("read" if _has(args, "-l") and not _has(args, "-r", "-e") else "system_change", "crontab")


def _sysctl(j: Judge, args: list[Word]) -> None:
    if _has(args, "-w", "--write", "-p", "--load", "--system") or any("=" in w.text for w in args):
        j.add("system_change", "changes kernel settings")
    else:
        j.add("read", "sysctl")


def _stripe(j: Judge, args: list[Word]) -> None:
    pos = [
        w.text
        for w in _positionals(
            args,
            (
                "--api-key",
                "-p",
                "--project-name",
                "-d",
                "--data",
                "-e",
                "--expand",
                "--stripe-account",
                "--color",
                "--log-level",
            ),
        )
    ]
    if (
        not pos
        or pos[0] in ("help", "version", "completion")
        or _has(args, "--version", "-v", "--help", "-h")
    ):
        j.add("read", "stripe")
    elif pos[0] in ("listen", "logs", "status", "open", "samples", "fixtures") or (
        len(pos) > 1 and pos[-1] in ("list", "retrieve", "search")
    ):
        j.add("network_read" if pos[0] != "fixtures" else "payment", f"stripe {' '.join(pos[:2])}")
    elif pos[0] == "login" or pos[0] == "logout":
        j.add("key_rotation", f"stripe {pos[0]}")
    else:
        j.add("payment", f"stripe {' '.join(pos[:3])} changes the Stripe account")


def _gpg(j: Judge, args: list[Word]) -> None:
    if _has(
        args,
        "--gen-key",
        "--full-generate-key",
        "--full-gen-key",
        "--quick-gen-key",
        "--quick-generate-key",
        "--delete-key",
        "--delete-keys",
        "--delete-secret-keys",
        "--delete-secret-key",
        "--import",
        "--export-secret-keys",
        "--export-secret-subkeys",
        "--edit-key",
        "--quick-add-key",
        "--gen-revoke",
        "--send-keys",
        "--change-passphrase",
        "--passwd",
    ):
        j.add("key_rotation", "gpg changes or exports keys")
    elif _has(args, "-d", "--decrypt"):
        j.add("read_secrets", "gpg decrypts")
    else:
        j.add("read", "gpg")


def _openssl(j: Judge, args: list[Word]) -> None:
    sub = args[0].text if args else ""
    if sub in ("genrsa", "genpkey", "req", "ecparam", "gendsa", "ca", "x509") and _has(
        args, "-new", "-out", "-genkey", "-newkey"
    ):
        j.add("key_rotation", f"openssl {sub} makes keys or certificates")
    elif sub in ("genrsa", "genpkey", "gendsa"):
        j.add("key_rotation", f"openssl {sub} makes a key")
    else:
        out = _value(args, "-out")
        if out is not None:
            j.write(out)
        j.add("read", f"openssl {sub}")


def _cloud(j: Judge, args: list[Word]) -> None:
    words = [w.text for w in args]
    if not words or words[:1] in (["--version"], ["version"], ["-v"], ["help"], ["--help"]):
        j.add("read", j.cmd.name)
    else:
        j.add("deploy", f"{j.cmd.name} {' '.join(words[:2])} acts on cloud or cluster resources")


def _terraform(j: Judge, args: list[Word]) -> None:
    pos = [w.text for w in _positionals(args, ("-chdir", "-var", "-var-file", "-target", "-out"))]
    sub = pos[0] if pos else ""
    if sub in (
        "plan",
        "validate",
        "fmt",
        "init",
        "show",
        "output",
        "providers",
        "graph",
        "version",
        "get",
        "preview",
        "test",
        "console",
        "",
    ):
        j.add("run_build", f"{j.cmd.name} {sub}".strip())
    else:
        j.add("deploy", f"{j.cmd.name} {sub} changes infrastructure")


def _shell(j: Judge, args: list[Word]) -> None:
    """A shell left after the splitter took `-c '…'` and here-documents: the wrapper, or a script it runs."""
    if (
        any(red.op in ("<<", "<<-", "<<<") for red in j.cmd.redirects)
        or _has(args, "-c")
        or any(re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", a.text) for a in args)
    ):
        j.add("read", "a shell running the commands judged on their own")
        return
    if _has(args, "--version") and len(args) == 1:
        j.add("read", f"{j.cmd.name} --version")
        return
    script = next((w for w in args if not w.text.startswith(("-", "+"))), None)
    if script is not None:
        j.run_file(script)
        return
    for red in j.cmd.redirects:
        if red.op == "<":
            j.run_file(red.target)
            return
    j.add("unknown", "runs shell commands read from its input" if j.cmd.piped_in else "an interactive shell")


def _source(j: Judge, args: list[Word]) -> None:
    if args:
        j.run_file(args[0])
    else:
        j.add("read", "source")


def _privileged(j: Judge, args: list[Word]) -> None:
    j.add("privileged", f"{j.cmd.name} runs commands as another user")


def _executable_tool(name: str) -> Handler:
    def rule(j: Judge, args: list[Word]) -> None:
        j.add("unknown", f"{name} runs a command of its own")

    return rule


def _action(name: str, why: str) -> Handler:
    def rule(j: Judge, args: list[Word]) -> None:
        j.add(name, why)

    return rule


def _hostname(j: Judge, args: list[Word]) -> None:
    pos = _positionals(args)
    j.add("system_change" if pos else "read", "sets the host name" if pos else "hostname")


def _database(j: Judge, args: list[Word]) -> None:
    j.add("database", f"{j.cmd.name} talks to a database")


def _migrations(reads: Iterable[str]) -> Handler:
    reads = frozenset(reads)

    def rule(j: Judge, args: list[Word]) -> None:
        words = [w.text for w in _positionals(args, ("-c", "--config", "-x", "-n", "--name"))]
        if words and words[0] in reads:
            j.add("read", f"{j.cmd.name} {words[0]}")
        else:
            j.add("database", f"{j.cmd.name} {' '.join(words[:2])} changes the database")

    return rule


def _prisma(j: Judge, args: list[Word]) -> None:
    words = [w.text for w in _positionals(args, ("--schema", "--name"))]
    if words[:1] in (["migrate"], ["db"]) and words[1:2] not in (["status"], ["diff"]):
        j.add("database", f"prisma {' '.join(words[:2])} changes the database")
    else:
        j.add("run_build", f"prisma {' '.join(words[:2])}".strip())


_PATH_TAKERS = frozenset(
    {
        "rm",
        "mv",
        "cp",
        "chmod",
        "chown",
        "chgrp",
        "touch",
        "mkdir",
        "rmdir",
        "shred",
        "unlink",
        "truncate",
        "ln",
        "tee",
        "install",
        "sed",
        "perl",
    }
)

HANDLERS: dict[str, Handler] = {}


def _register(names: str, handler: Handler) -> None:
    for name in names.split():
        HANDLERS[name] = handler


_register(
    "echo printf true false : pwd whoami id groups uname date cal uptime which whereis type "
    "hash nproc arch lscpu free vmstat df ps pgrep pidof jobs sleep wait test [ [[ seq yes expr bc dc "
    "factor getconf locale tput stty clear reset history alias unalias set unset export declare typeset "
    "local readonly shift read return exit break continue trap umask ulimit cd pushd popd dirs man help "
    "info whatis apropos tty logname users who w last lsblk lsusb lspci netstat ss lsof sw_vers "
    "system_profiler journalctl dmesg getent mdfind mdls basename dirname eval watch "
    "command builtin shopt complete compgen fc bind let disown suspend times enable caller mapfile "
    "readarray nohup time nice timeout stdbuf ionice setsid exec xargs flock caffeinate unbuffer chronic "
    "column rev fold fmt expand unexpand nl tac seq shuf numfmt tsort printf vdir dircolors tput "
    "notify-send say true htop top iostat mpstat sar nvidia-smi ulimit sha1sum lsattr ldd nm objdump "
    "readelf otool",
    _read_only,
)
_register(
    "cat less more wc stat file tree od xxd hexdump strings sha256sum sha512sum md5sum md5 shasum "
    "cksum b2sum readlink realpath diff cmp comm uniq paste join zcat bzcat xzcat gzcat zless getfacl pr "
    "iconv base64 base32 diff3 colordiff delta bat exa eza lsd fd fdfind look wdiff sdiff icdiff",
    _reads_all(),
)
_register("head tail", _reads_all(("-n", "-c", "--lines", "--bytes")))
_register("du", _reads_all(("-d", "--max-depth", "--exclude", "-t", "--threshold", "-B", "--block-size")))
_register("ls ll la", _reads_all(("-I", "--ignore", "-w", "--width", "-T", "--tabsize", "--hide")))
_register("cut", _reads_all(("-d", "-f", "-c", "-b", "--delimiter", "--fields")))
_register("env printenv", _environment)
_register(
    "grep egrep fgrep rg ag ack zgrep ugrep",
    _reads_after_first(
        (
            "-e",
            "-f",
            "-m",
            "-A",
            "-B",
            "-C",
            "--include",
            "--exclude",
            "--exclude-dir",
            "-g",
            "--glob",
            "-t",
            "--type",
            "--max-count",
            "-d",
            "-D",
            "--context",
            "--after-context",
            "--before-context",
            "--color",
            "--colour",
            "-T",
            "--type-add",
            "-j",
            "--threads",
            "-M",
            "--max-columns",
            "--regexp",
            "--file",
        ),
        ("-e", "-f", "--regexp", "--file"),
    ),
)
_register(
    "jq yq gojq jaq",
    _reads_after_first(
        ("--arg", "--argjson", "--slurpfile", "--rawfile", "-f", "--from-file", "--indent", "--tab"),
        ("-f", "--from-file"),
    ),
)
_register(
    "touch mkdir rmdir truncate mkfifo mknod",
    _writes_all(("-m", "--mode", "-d", "--date", "-r", "--reference", "-s", "--size", "-t")),
)
_register("chmod chown chgrp chattr setfacl", _writes_all(("--reference",), skip_first=True))
_register("rm", _rm)
_register("unlink shred srm", _writes_all(("-n", "--iterations", "-s", "--size")))
_register("cp", _cp)
_register("mv", _mv)
_register("ln", _ln)
_register("install", _install)
_register("dd", _dd)
_register("tee", _tee)
_register("sed gsed", _sed)
_register("awk gawk mawk nawk", _awk)
_register("sort", _sort)
_register("find", _find)
_register("tar gtar bsdtar", _tar)
_register("unzip", _unzip)
_register("gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 compress uncompress", _compress)
_register("zip 7z", _zip)
_register("patch", _action("edit_worktree", "applies a patch in the worktree"))
_register("mktemp", _action("temp_write", "makes a temporary file"))
_register("rsync", _rsync)
_register("scp sftp", _scp)
_register("ssh mosh autossh", _ssh)
_register("ssh-keyscan dig nslookup host ping ping6 traceroute tracepath mtr whois", _network_read)
_register("nc ncat netcat socat telnet ftp tftp lftp", _raw_network)
_register("curl", _curl)
_register("wget wget2", _wget)
_register("http https xh xhs httpie", _httpie)
_register(
    " ".join(_INTERPRETERS) + " python3.8 python3.9 python3.10 python3.11 python3.12 python3.13 "
    "python3.14 python2.7",
    _interpreter,
)
_register("sh bash zsh dash ksh mksh ash fish", _shell)
_register("source .", _source)
_register("manage.py", _manage_py)
_register(
    "pytest py.test tox nox jest vitest mocha ava karma rspec phpunit bats ctest behave nosetests "
    "nose2 trial prove cypress playwright ward hypothesis",
    _run_tests,
)
_register("npm yarn pnpm", _npm)
_register("npx pnpx bunx", _npx)
_register("pip pip3 pip2", _pip)
_register("uv poetry pdm hatch pipenv conda mamba micromamba rye pixi", _python_tool)
_register("uvx pipx", _uvx)
_register(
    "cargo", _subcommand_tool(("test", "nextest", "bench"), ("publish", "yank", "owner", "login"), ("run",))
)
_register("go", _subcommand_tool(("test",), (), ("run",), ("version", "env", "list", "doc")))
_register("dotnet", _subcommand_tool(("test",), ("nuget",), ("run",)))
_register("swift", _subcommand_tool(("test",), (), ("run",)))
_register("mix", _subcommand_tool(("test",), ("hex.publish",), ("run",)))
_register("stack cabal", _subcommand_tool(("test",), ("upload",), ("run", "exec")))
_register(
    "xcodebuild",
    lambda j, a: j.add("run_tests" if any(w.text == "test" for w in a) else "run_build", "xcodebuild"),
)
_register("make gmake", _make)
_register("mvn mvnw gradle gradlew ant sbt lein bazel bazelisk buck", _build_tool)
_register("gcc g++ cc c++ clang clang++ rustc javac kotlinc swiftc zig tcc ld as nasm ar", _compiler)
_register(
    "cmake ninja meson scons tsc ruff black isort mypy pyright flake8 pylint bandit eslint prettier "
    "stylelint rustfmt gofmt goimports golangci-lint clang-format clang-tidy shellcheck shfmt hadolint "
    "yamllint markdownlint rubocop swiftlint swiftformat ktlint pre-commit biome vite webpack rollup "
    "esbuild parcel turbo nx lerna composer gem opam dune rebar3 pod carthage flutter dart "
    "protoc buf sqlc air nodemon tailwindcss postcss sass",
    _run_build,
)
_register("bundle", _bundle)
_register("rake rails", _rake)
_register("docker podman nerdctl docker-compose podman-compose", _docker)
_register("git", _git)
_register("gh glab", _forge)
_register("jira acli asana linear clickup trello", _tracker)
_register(
    "mail mailx sendmail mutt neomutt msmtp swaks ssmtp twilio telegram-send apprise slack-cli",
    _action("message_external", "sends a message"),
)
_register("stripe", _stripe)
_register(
    "ssh-keygen ssh-add ssh-copy-id age-keygen certbot", _action("key_rotation", "creates or loads keys")
)
_register("gpg gpg2", _gpg)
_register("openssl", _openssl)
_register("security pass op bw vault keyring secret-tool", _action("read_secrets", "reads a secret store"))
_register(
    "systemctl",
    _reads_or(
        (
            "status",
            "is-active",
            "is-enabled",
            "is-failed",
            "list-units",
            "list-unit-files",
            "list-timers",
            "list-sockets",
            "show",
            "cat",
            "--version",
            "help",
            "list-dependencies",
        )
    ),
)
_register(
    "launchctl",
    _reads_or(
        (
            "list",
            "print",
            "print-disabled",
            "blame",
            "help",
            "version",
            "dumpstate",
            "managerpid",
            "manageruid",
        )
    ),
)
_register(
    "service",
    lambda j, a: j.add(
        "read" if any(w.text in ("status", "--status-all") for w in a) else "system_change", "service"
    ),
)
_register(
    "brew",
    _reads_or(
        (
            "list",
            "ls",
            "info",
            "search",
            "outdated",
            "deps",
            "uses",
            "config",
            "doctor",
            "--version",
            "--prefix",
            "leaves",
            "desc",
            "home",
            "",
        )
    ),
)
_register(
    "apt apt-get aptitude apt-cache dpkg yum dnf rpm pacman apk zypper snap flatpak port nix-env pkg emerge",
    _reads_or(
        (
            "list",
            "show",
            "search",
            "info",
            "policy",
            "-l",
            "-L",
            "-q",
            "-Q",
            "-s",
            "-Ss",
            "-Qi",
            "--list",
            "--search",
            "query",
            "madison",
            "depends",
            "rdepends",
            "",
        )
    ),
)
_register(
    "shutdown reboot halt poweroff init telinit mount umount fdisk parted mkfs mkfs.ext4 mkfs.xfs mkswap "
    "swapon swapoff losetup cryptsetup useradd userdel usermod groupadd groupdel passwd chpasswd chsh "
    "adduser deluser visudo dscl iptables ip6tables nft ufw firewall-cmd pfctl modprobe insmod rmmod "
    "ldconfig update-alternatives chroot scutil nvram csrutil spctl tmutil hostnamectl timedatectl "
    "localectl at batch atrm systemd-run kextload diskutil",
    _action("system_change", "changes the system"),
)
_register("sysctl", _sysctl)
_register("defaults", _reads_or(("read", "domains", "find", "read-type", "export")))
_register("ip ifconfig", _ip)
_register("hostname", _hostname)
_register("crontab", _crontab)
_register("kill pkill killall xkill", _kill)
_register("sudo doas su pkexec runuser", _privileged)
_register(
    "psql mysql mariadb sqlite3 mongo mongosh redis-cli cqlsh clickhouse-client sqlcmd duckdb pg_dump "
    "pg_restore mysqldump dropdb createdb",
    _database,
)
_register("alembic", _migrations(("current", "history", "heads", "branches", "show", "check")))
_register("flyway liquibase dbmate goose migrate knex sequelize", _migrations(("info", "status", "validate")))
_register("prisma", _prisma)
_register(
    "aws gcloud gsutil az kubectl helm kustomize pulumi fly flyctl heroku vercel netlify firebase wrangler "
    "serverless sls doctl linode-cli hcloud ansible ansible-playbook eb cdk sam twine railway render "
    "oc eksctl",
    _cloud,
)
_register("terraform tofu terragrunt", _terraform)
_register("parallel", _executable_tool("parallel"))
_register("ssh-agent", _action("key_rotation", "starts an agent that holds keys"))
