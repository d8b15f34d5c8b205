"""Judging one simple command: the ``Judge`` that collects its actions, the path rules it applies to every
argument and redirection, and the registry of per-program rules (``vaultops.policy.rules``) it dispatches to.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence

from vaultops.policy.bash import FOUND, SimpleCommand, Word
from vaultops.policy.environ import risky_assignment
from vaultops.policy.hosts import exposed_addresses, metadata_targets
from vaultops.policy.paths import (
    Place,
    Scope,
    cwds_of,
    in_files,
    is_policy,
    is_secret,
    is_temp_root,
    locate,
    place,
)
from vaultops.policy.table import Action


def names(text: str) -> frozenset[str]:
    """A set of names written as one string: long option and program lists stay readable."""
    return frozenset(text.split())


MAX_SHOWN = 160  # how much of a command a reason quotes

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

# Inline code that reads the whole environment, or a variable named at run time: the secrets in it are read.
_READS_ENVIRON = re.compile(
    r"os\.environ|os\.getenv|getenv\s*\(|environ\b|process\.env|ENV\s*\[|\bENV\b|%ENV|\$ENV\b|Deno\.env|"
    r"Bun\.env|System\.getenv|/proc/\w+/environ"
)

# Inline code that serves on a port (bound to every interface unless told otherwise).
_SERVES = re.compile(
    r"createServer|\.listen\s*\(|HTTPServer|TCPServer|socketserver|serve_forever|WEBrick|\bhttpd\b|"
    r"Deno\.serve|Bun\.serve|\bapp\.run\s*\(|\bbind\s*\(\s*\(?\s*['\"](?:0\.0\.0\.0)?['\"]"
)

# `import('https://…')`, `require("https://…")`, `from 'https://…'`: code fetched when it runs
_REMOTE_IMPORT = re.compile(
    r"""(?:\bimport\b|\brequire\b|\bload\b|\bfrom\b|\bsource\b|include|dofile)\s*\(?\s*["'`](?:https?|data|jsr|npm):""",
    re.IGNORECASE,
)

_PATH_LITERAL = re.compile(r"""["'](~?/[^"'\s]*)["']""")

# Variables that hold credentials: printing them puts the secret into the transcript.
_SECRET_VARIABLE = re.compile(
    r"\$\{?\w*(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE|CREDENTIAL|DSN|WEBHOOK|CONN\w*_STRING|"
    r"(DATABASE|DB|REDIS|MONGO\w*|POSTGRES\w*|PG|MYSQL|AMQP|RABBITMQ|BROKER)_URL)\w*",
    re.I,
)

# Package managers' settings files: a registry, a mirror, a proxy, a script shell, every later install
# or script comes from or runs through what they name.
REGISTRY_SETTINGS = names(
    ".npmrc .yarnrc .yarnrc.yml .pnpmfile.cjs bunfig.toml .bunfig.toml pip.conf pip.ini uv.toml .condarc "
    ".gemrc nuget.config NuGet.Config NuGet.config poetry.toml init.gradle"
)
_REGISTRY_SETTINGS_PATHS = (".cargo/config.toml", ".cargo/config", ".mvn/maven.config", ".mvn/jvm.config",
                            ".m2/settings.xml", ".bundle/config")  # fmt: skip


def registry_settings(path: str) -> bool:
    """Whether ``path`` is a package manager's settings file (a registry, a mirror, a script shell)."""
    return posixpath.basename(path) in REGISTRY_SETTINGS or path.endswith(_REGISTRY_SETTINGS_PATHS)


# What makes a program's work land in the folder it runs in: run there, outside the worktree, it leaves scope.
_RUNS_HERE = frozenset({"run_build", "run_tests", "run_local", "git_local", "create_worktree", "delete_tree"})

# Programs whose plain arguments name hosts: `curl 169.254.169.254`, `nc 0xa9fea9fe 80`.
_HOST_TAKERS = names(
    "curl wget wget2 http https xh xhs httpie nc ncat netcat socat telnet ftp tftp lftp ssh scp sftp rsync "
    "mosh autossh ping ping6 traceroute tracepath mtr dig nslookup host whois ssh-keyscan git"
)

# `$(git ls-files …)`: a list of files of the worktree, whatever they are called (secrets are not tracked)
_LISTS_WORKTREE = re.compile(r"^\s*git\s+ls-files(\s+[-\w'\"*./=]+)*\s*$")

Handler = Callable[["Judge", list[Word]], None]


def short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def positionals(args: Sequence[Word], value_opts: Iterable[str] = ()) -> list[Word]:
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


def has(args: Sequence[Word], *flags: str) -> bool:
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


def flag_value(args: Sequence[Word], *flags: str) -> Word | None:
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
        self.text = short(str(cmd))
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
                if registry_settings(p.path):
                    self.add(
                        "unknown", f"{verb} {p.rel}, which says where packages come from and what runs them"
                    )
                if not in_files(p.rel, self.scope):
                    self.add("scope_expansion", f"{verb} {p.rel}, which is not among the job's files")
                else:
                    self.add("edit_worktree", f"{verb} {p.rel or '.'} in the worktree")
            elif p.where == "temp" and verb.startswith("moves") and is_temp_root(p.path, self.scope):
                self.add("delete_tree", f"{verb} {p.path}, a temp folder itself")
            elif p.where == "temp":
                self.add("temp_write", f"{verb} {p.path}")
            else:
                self.add("modify_outside_worktree", f"{verb} {p.path}, outside the worktree")

    def delete(self, word: Word, recursive: bool) -> None:
        for p in self.places(word):
            root = p.path if not word.glob else p.path.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]
            if p.where == "temp" and (is_temp_root(p.path, self.scope) or is_temp_root(root, self.scope)):
                self.add("delete_tree", f"deletes {word.text}: a temp folder itself, or all that is in it")
                return
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
            if p.where == "unknown":
                if word.origin and all(_LISTS_WORKTREE.match(o) for o in word.origin):
                    self.add("read", "reads files git lists")
                else:
                    self.add("unknown", f"reads {word.text!r}, a path only known when it runs (a secret?)")
            elif p.where == "device":
                self.add("read", "reads")
            elif is_secret(p.path):
                self.add("read_secrets", f"reads {p.path}, which holds keys or credentials")
            elif p.where in ("inside", "system", "temp"):
                self.add("read", "reads")
            else:
                self.add("read_outside_worktree", f"reads {p.path}, outside the worktree")

    def run_file(self, word: Word) -> None:
        """A program or script named by path: it may run if it lies in the worktree (or a temp folder)."""
        places = self.places(word)
        if all(p.where == "inside" for p in places):
            self.add("run_local", f"runs {word.text}")
        elif all(p.where in ("inside", "temp") for p in places):
            self.add("unknown", f"runs {word.text}, a program in a temp folder anyone may write")
        else:
            self.add("unknown", f"runs {word.text}, a program outside the worktree the policy does not know")

    def inline_code(self, code: str, language: str) -> None:
        if _REMOTE_IMPORT.search(code):
            self.add("unknown", f"inline {language} code that loads code from a URL")
        if _SERVES.search(code):
            self.add(
                "network_write", f"inline {language} code that serves on a port other machines may reach"
            )
        if _SPAWNS.search(code) or language == "AppleScript":  # AppleScript drives other applications
            self.add(
                "unknown", f"inline {language} code that starts programs, deletes files or uses the network"
            )
            return
        if _READS_ENVIRON.search(code):
            self.add("read_secrets", f"inline {language} code that reads the environment, secrets included")
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
        for assign in cmd.assigns:
            variable = risky_assignment(assign)
            if variable is not None:
                self.add("unknown", f"sets {variable}, which changes what runs or what it loads")
        self.metadata()
        if not cmd.words:
            return self.actions or [Action("read", f"`{self.text}`: redirections or assignments only")]
        if cmd.words[0].dynamic or (cmd.words[0].glob and cmd.words[0].text not in ("[", "[[")):
            self.add("unknown", "the program to run is only known when it runs")
            return self.actions
        if not cmd.name.isascii() or not cmd.name.isprintable():
            self.add("unknown", f"`{cmd.name}` has characters that only look like a program's name")
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
        if cmd.name not in _HOST_TAKERS:
            self.listens(args)
        if (
            cmd.name in _DESTROYS
            and any(v.startswith("find ") for v in cmd.via)
            and self.destroys_found(args)
        ):
            # `{}` is every file find finds, not the one root it was judged with: all of them are gone
            self.add("delete_tree", f"deletes or overwrites every file `find {cmd.via[-1][5:]}` finds")
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

    def destroys_found(self, args: list[Word]) -> bool:
        """Whether ``find -exec`` hands the found files (``{}``) to be deleted, moved away or overwritten:
        any place for rm, shred, mv…; the target (the last path) for cp, install, ln; ``of=`` for dd."""
        found = [w for w in args if FOUND in w.origin]
        if self.cmd.name in ("cp", "install", "ln"):
            paths = [w for w in args if not w.text.startswith("-")]
            return bool(paths) and FOUND in paths[-1].origin
        if self.cmd.name == "dd":
            return any(w.text.startswith("of=") for w in found)
        return bool(found)

    def listens(self, args: list[Word]) -> None:
        """A server bound beyond this machine (``--bind 0.0.0.0``, ``HOST=0.0.0.0``) serves to the network."""
        assigned = [f"--{a.partition('=')[0].lower()}={a.partition('=')[2]}" for a in self.cmd.assigns]
        for address in exposed_addresses([w.text for w in args] + assigned):
            self.add("network_write", f"listens on {address}, which other machines can reach")
            return

    def metadata(self) -> None:
        """Any URL of the command (or host, for network programs) that is a cloud metadata address."""
        bare = self.cmd.name in _HOST_TAKERS
        texts = [w.text for w in self.cmd.words[1:]] + [r.target.text for r in self.cmd.redirects]
        texts += [r.body for r in self.cmd.redirects if r.body]
        texts += [a.partition("=")[2] for a in self.cmd.assigns]
        for text in texts:
            candidates = [text, *text.split("=", 1)[1:]] if bare else [text]
            for candidate in candidates:
                for target in metadata_targets(candidate, bare=bare):
                    self.add("fetch_metadata", f"reaches {target}, a cloud metadata or link-local address")
                    return

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


def read_only(j: Judge, args: list[Word]) -> None:
    j.add("read", "reads")


def is_remote(text: str) -> bool:
    return bool(re.match(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[^/\s:]+:(?!//))", text)) and not text.startswith(
        ("./", "/", "~")
    )


def runs_its_own(name: str) -> Handler:
    def rule(j: Judge, args: list[Word]) -> None:
        j.add("unknown", f"{name} runs a command of its own")

    return rule


def action(name: str, why: str) -> Handler:
    def rule(j: Judge, args: list[Word]) -> None:
        j.add(name, why)

    return rule


# Programs that destroy the files they are given: run on what find finds, they delete a tree.
_DESTROYS = names("rm shred unlink truncate wipe srm dd rmdir mv cp install ln tee")

_PATH_TAKERS = names(
    "rm mv cp chmod chown chgrp touch mkdir rmdir shred unlink truncate ln tee install sed perl"
)

HANDLERS: dict[str, Handler] = {}


def register(names: str, handler: Handler) -> None:
    for name in names.split():
        HANDLERS[name] = handler
