"""Split a shell command into the simple commands it would run, the way bash would read it.

The policy judges each simple command on its own, so everything that can start a command must be found:
``&&``, ``||``, ``;``, ``&``, ``|``, newlines, ``( … )`` and ``{ …; }``, ``$( … )`` and backticks (also inside
double quotes and here-documents), ``<( … )``, ``bash -c '…'``, ``eval``, and the wrappers that run another
command (``sudo``, ``env X=1``, ``xargs``, ``find -exec``, ``timeout``, ``nohup``, …).  Quoting follows the
shell: quotes are removed, ``'$(x)'`` is text, ``"$(x)"`` runs.  What cannot be read (an unclosed quote, a
``case`` statement, nesting past a depth) is reported in ``problems``: the caller must then never allow the
command, whatever else it found.  ``split_command`` never raises.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from vaultops.policy.lexer import MAX_DEPTH, REDIRECTS, Lexer, Tok

MAX_TEXT = 100_000  # longer than any real command; refused rather than parsed
UNKNOWN_DIR = "\x00?"  # a `cd` whose target is not known before the command runs


@dataclass(frozen=True)
class Word:
    """One argument after quote removal.  ``dynamic``: its value depends on an expansion ($VAR, $(…), …);
    ``glob``: it holds an unquoted ``*``, ``?`` or ``[`` and names whatever files match."""

    text: str
    dynamic: bool = False
    glob: bool = False
    origin: tuple[str, ...] = ()  # when the word is one command substitution: that command's text


@dataclass(frozen=True)
class Redirect:
    """``op`` is one of ``> >> >| &> &>> < <> << <<< >& <&``; ``target`` the file (or fd, or delimiter);
    ``body`` the text of a here-document or here-string."""

    op: str
    target: Word
    fd: str = ""
    body: str = ""

    @property
    def writes(self) -> bool:
        if self.op == ">&":  # 2>&1, >&2, >&-: duplicating a descriptor names no file; `>& file` writes it
            return not re.fullmatch(r"\d+-?|-", self.target.text)
        return self.op in (">", ">>", ">|", "&>", "&>>", "<>")

    @property
    def reads(self) -> bool:
        return self.op in ("<", "<>")


@dataclass(frozen=True)
class SimpleCommand:
    """One command that would run.  ``cwds``: the ``cd`` targets before it in its scope, in order (the command
    may run in any of them, as a ``cd`` can fail); ``via``: the wrappers it runs under (``sudo``, ``bash -c``,
    ``xargs``, ``find -exec``, …); ``stdin_args``: more arguments arrive on its input (``xargs``)."""

    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...] = ()
    assigns: tuple[str, ...] = ()
    cwds: tuple[str, ...] = ()
    via: tuple[str, ...] = ()
    piped_in: bool = False
    stdin_args: bool = False
    wraps: bool = False  # a wrapper's own words (`timeout 10`, `env X=1`): the command it runs comes apart
    feeder: SimpleCommand | None = None  # the command whose output the pipe into this one carries

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(w.text for w in self.words)

    @property
    def name(self) -> str:
        """The program's name: its basename, without a leading backslash (``\\rm``, ``/bin/rm`` → ``rm``)."""
        if not self.words:
            return ""
        return self.words[0].text.rsplit("/", 1)[-1]

    def __str__(self) -> str:
        return " ".join(self.argv)


@dataclass(frozen=True)
class Split:
    commands: tuple[SimpleCommand, ...]
    problems: tuple[str, ...] = ()


# --- lexing ------------------------------------------------------------------------------------------------

_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


# --- from tokens to simple commands ------------------------------------------------------------------------

_OPENERS = frozenset({"if", "then", "elif", "else", "do", "while", "until", "!", "{", "time"})
_CLOSERS = frozenset({"fi", "done", "esac", "}"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})

# Wrappers that run the rest of their arguments as a command:
# name -> (options that take a value, positional arguments before the command)
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (
        frozenset(
            [
                "-u",
                "-g",
                "-p",
                "-C",
                "-D",
                "-h",
                "-r",
                "-t",
                "-T",
                "-U",
                "--user",
                "--group",
                "--prompt",
                "--chdir",
            ]
        ),
        0,
    ),
    "doas": (frozenset({"-u", "-C"}), 0),
    "env": (frozenset({"-u", "--unset", "-C", "--chdir"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "-o", "--format", "--output"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "--class", "--classdata"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "setsid": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "xargs": (
        frozenset(
            [
                "-I",
                "-L",
                "-n",
                "-P",
                "-s",
                "-d",
                "-E",
                "-a",
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
            ]
        ),
        0,
    ),
    "flock": (frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}), 1),
    "caffeinate": (frozenset({"-t", "-w"}), 0),
    "unbuffer": (frozenset(), 0),
    "chronic": (frozenset(), 0),
    "torsocks": (frozenset(), 0),
    "proxychains": (frozenset({"-f"}), 0),
    "proxychains4": (frozenset({"-f"}), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "watch": (frozenset({"-n", "-d", "--interval"}), 0),
    "pkexec": (frozenset({"--user"}), 0),
    "runuser": (frozenset({"-u", "-g", "--user", "--group"}), 0),
}
_PRIVILEGED = frozenset({"sudo", "doas", "pkexec", "runuser", "su"})


class _Builder:
    def __init__(self, problems: list[str], depth: int) -> None:
        self.problems = problems
        self.depth = depth
        self.out: list[SimpleCommand] = []
        self.previous: SimpleCommand | None = None  # the last command finished: the next one's feeder

    def problem(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)

    def run(self, toks: Sequence[Tok], cwds: tuple[str, ...], via: tuple[str, ...]) -> None:
        scopes: list[list[str]] = [list(cwds)]
        words: list[Tok] = []
        redirects: list[tuple[Tok, Tok | None]] = []
        piped = False
        self.previous = None
        pending: Tok | None = None  # a redirect operator waiting for its target
        in_test = False  # inside [[ … ]], where && < > ( ) are not the shell's
        i = 0
        while i < len(toks):
            tok = toks[i]
            i += 1
            if in_test:
                if not tok.op and tok.text == "]]":
                    in_test = False
                words.append(tok if not tok.op else Tok(text=tok.op))
                continue
            if not tok.op:
                if pending is not None:
                    redirects.append((pending, tok))
                    pending = None
                else:
                    if not words and tok.text == "[[" and not tok.quoted:
                        in_test = True
                    words.append(tok)
                continue
            if pending is not None:
                self.problem(f"a redirection {pending.op} has no target")
                redirects.append((pending, None))
                pending = None
            if tok.op in REDIRECTS:
                pending = tok
                continue
            if tok.op == "(":
                if words and i < len(toks) and toks[i].op == ")":  # name() { …; }: a function definition
                    words = []
                    i += 1
                    continue
                if words:
                    self.problem("a ( in the middle of a command cannot be read")
                self.finish(words, redirects, scopes[-1], via, piped)
                words, redirects, piped = [], [], False
                scopes.append(list(scopes[-1]))
                continue
            if tok.op == ")":
                self.finish(words, redirects, scopes[-1], via, piped)
                words, redirects, piped = [], [], False
                if len(scopes) > 1:
                    scopes.pop()
                else:
                    self.problem("a ) has no matching (")
                continue
            if tok.op in (";;", ";&", ";;&"):
                self.problem("a case statement is not read by the policy")
            # a separator ends the command; after a pipe, the next one reads the pipe
            self.finish(words, redirects, scopes[-1], via, piped)
            words, redirects = [], []
            piped = tok.op in ("|", "|&")
        if pending is not None:
            self.problem(f"a redirection {pending.op} has no target")
            redirects.append((pending, None))
        if in_test:
            self.problem("a [[ is not closed")
        self.finish(words, redirects, scopes[-1], via, piped)
        if len(scopes) > 1:
            self.problem("a ( is not closed")

    # -- one simple command: substitutions first, then the command (and what it wraps) --
    def finish(
        self,
        toks: list[Tok],
        redirects: list[tuple[Tok, Tok | None]],
        scope: list[str],
        via: tuple[str, ...],
        piped: bool,
    ) -> None:
        for tok in toks:
            for sub in tok.subs:
                self.nested_tokens(sub, tuple(scope), via)
        for op, target in redirects:
            for sub in op.subs + (target.subs if target else []):
                self.nested_tokens(sub, tuple(scope), via)
        while toks and not toks[0].quoted and toks[0].text in _CLOSERS:
            toks = toks[1:]
        while toks and not toks[0].quoted and toks[0].text in _OPENERS:
            toks = toks[1:]
        if toks and not toks[0].quoted and toks[0].text == "function":
            toks = toks[2:]  # `function f { …; }`: the body is judged as the code it is
            while toks and not toks[0].quoted and toks[0].text in _OPENERS:
                toks = toks[1:]
        if toks and not toks[0].quoted and toks[0].text in ("for", "select", "case"):
            if toks[0].text == "case":
                self.problem("a case statement is not read by the policy")
            return  # `for x in …` / `function f` name no command; the loop's body comes as its own commands
        assigns: list[str] = []
        while toks and _ASSIGN.match(toks[0].text):  # FOO='a b' cmd: quoting after the name is allowed
            assigns.append(toks[0].text)
            toks = toks[1:]
        words: list[Word] = []
        for tok in toks:
            words.extend(_words(tok))
        reds = tuple(
            Redirect(op.op, _words(t)[0] if t else Word("", dynamic=True), op.fd, op.body or "")
            for op, t in redirects
        )
        if not words and not reds and not assigns:
            self.previous = None
            return
        feeder = self.previous if piped else None
        cmd = SimpleCommand(tuple(words), reds, tuple(assigns), tuple(scope), via, piped, feeder=feeder)
        self.previous = cmd
        if words and not words[0].dynamic and words[0].text in ("cd", "pushd", "popd"):
            scope.append(_cd_target(words))
        self.emit(cmd)

    def nested_tokens(self, toks: list[Tok], cwds: tuple[str, ...], via: tuple[str, ...]) -> None:
        sub = _Builder(self.problems, self.depth + 1)
        sub.run(toks, cwds, via)
        self.out.extend(sub.out)

    def nested_text(self, text: str, cmd: SimpleCommand, via: tuple[str, ...]) -> None:
        if self.depth >= MAX_DEPTH:
            self.problem(f"commands are nested more than {MAX_DEPTH} deep")
            return
        inner = _split(text, self.depth + 1, self.problems, cmd.cwds, via)
        self.out.extend(inner)

    def emit(self, cmd: SimpleCommand) -> None:
        """Record ``cmd``, or what it really runs when it only wraps another command."""
        words = cmd.words
        if not words or words[0].dynamic:
            self.out.append(cmd)
            return
        name = cmd.name
        rest = list(words[1:])
        if name in _SHELLS:
            self.shell(cmd, rest)
            return
        if name == "eval":
            self.out.append(replace(cmd, words=words[:1]))
            self.nested_text(" ".join(w.text for w in rest), cmd, (*cmd.via, "eval"))
            return
        if name == "su":
            self.su(cmd, rest)
            return
        if name in ("trap", "alias"):
            self.out.append(cmd)
            self.deferred(cmd, rest)
            return
        if name == "find":
            self.find(cmd)
            return
        if name == "git":
            self.git_config_code(cmd, rest)
        if name in ("make", "gmake") and _reads_makefile_from_input(rest):
            text = _given_text(cmd)
            if text is not None:
                self.nested_text(make_recipes(text), replace(cmd, redirects=()), (*cmd.via, name))
        if name in ("command", "builtin") and rest and rest[0].text in ("-v", "-V"):
            self.out.append(cmd)  # `command -v x` only looks x up
            return
        if name == "busybox" and rest:
            self.emit(replace(cmd, words=tuple(rest)))
            return
        if name not in _WRAPPERS:
            self.out.append(cmd)
            return
        value_opts, positional = _WRAPPERS[name]
        j = 0
        cwd_change: str | None = None
        env_string: str | None = None
        flock_string: str | None = None
        while j < len(rest) and rest[j].text.startswith("-") and rest[j].text != "-":
            opt = rest[j].text
            if opt == "--":
                j += 1
                break
            if name == "env" and opt in ("-S", "--split-string") and j + 1 < len(rest):
                env_string = rest[j + 1].text
                j += 2
                break
            if name == "env" and opt.startswith("--split-string="):
                env_string = opt.partition("=")[2]
                j += 1
                break
            if name == "env" and (opt in ("-C", "--chdir") or opt.startswith("--chdir=")):
                cwd_change = opt.partition("=")[2] or (rest[j + 1].text if j + 1 < len(rest) else "")
            if name == "flock" and opt in ("-c", "--command") and j + 1 < len(rest):
                flock_string = rest[j + 1].text
            j += 2 if (opt in value_opts or (name == "flock" and opt in ("-c", "--command"))) else 1
        if name == "env":
            while j < len(rest) and _ASSIGN.match(rest[j].text):
                j += 1
        j += positional
        inner = rest[j:] if j <= len(rest) else []
        wrapper = replace(cmd, words=words[: 1 + min(j, len(rest))])
        via = (*cmd.via, name)
        cwds = cmd.cwds + ((cwd_change,) if cwd_change else ())
        if env_string is not None or flock_string is not None:
            self.out.append(replace(wrapper, wraps=True))
            self.nested_text(env_string or flock_string or "", replace(cmd, cwds=cwds), via)
            if not inner:
                return
        if not inner:
            self.out.append(cmd)  # `sudo -i`, `xargs` alone (echo), `env` alone (prints the environment)
            return
        self.out.append(replace(wrapper, wraps=True))  # its own options are judged too (time -o FILE)
        if name == "watch" and len(inner) == 1:
            self.nested_text(inner[0].text, replace(cmd, cwds=cwds), via)
            return
        self.emit(
            replace(cmd, words=tuple(inner), via=via, cwds=cwds, stdin_args=cmd.stdin_args or name == "xargs")
        )

    def shell(self, cmd: SimpleCommand, rest: list[Word]) -> None:
        """``bash -c 'script'``, ``bash script.sh``, ``bash`` reading a here-document, a pipe, or nothing."""
        via = (*cmd.via, cmd.name)
        j = 0
        script: str | None = None
        while j < len(rest) and rest[j].text.startswith(("-", "+")) and rest[j].text not in ("-", "--"):
            opt = rest[j].text
            if opt in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                j += 2
                continue
            if not opt.startswith("--") and "c" in opt[1:]:
                script = rest[j + 1].text if j + 1 < len(rest) else ""
                if j + 1 < len(rest) and rest[j + 1].dynamic:
                    self.problem(f"{cmd.name} -c runs a script whose text is only known when it runs")
                j += 2
                break
            j += 1
        if script is not None:
            self.out.append(replace(cmd, words=cmd.words[:1] + tuple(rest[:j])))
            self.nested_text(script, cmd, via)
            return
        for red in cmd.redirects:
            if red.op in ("<<", "<<-", "<<<"):
                body = red.body if red.op != "<<<" else red.target.text
                self.out.append(cmd)
                self.nested_text(body, replace(cmd, redirects=()), via)
                return
        self.out.append(cmd)  # a script file, or a script read from its input: judged as such
        fed = fed_text(cmd.feeder) if cmd.piped_in and cmd.feeder is not None else None
        if fed is not None and not any(not w.text.startswith(("-", "+")) for w in rest[j:]):
            self.nested_text(fed, replace(cmd, redirects=(), piped_in=False, feeder=None), via)

    def git_config_code(self, cmd: SimpleCommand, rest: list[Word]) -> None:
        """``git -c alias.x='!sh …' x``, ``-c core.sshCommand=…``: the value is shell code git runs."""
        for i, w in enumerate(rest):
            if w.text == "-c" and i + 1 < len(rest):
                value = rest[i + 1]
            elif w.text.startswith("-c") and len(w.text) > 2:
                value = Word(w.text[2:], w.dynamic)
            elif w.text.startswith("-"):
                continue
            else:
                return  # the subcommand: what follows is its own
            key, _, code = value.text.partition("=")
            if _GIT_SHELL_KEYS.match(key) and code:
                if value.dynamic:
                    self.problem("git -c is given code only known when it runs")
                else:
                    self.nested_text(code.removeprefix("!"), replace(cmd, redirects=()), (*cmd.via, "git -c"))

    def deferred(self, cmd: SimpleCommand, rest: list[Word]) -> None:
        """``trap 'CODE' EXIT``, ``alias ls='CODE'``: the code runs later, and is judged now."""
        via = (*cmd.via, cmd.name)
        if cmd.name == "alias":
            codes = [w for w in rest if "=" in w.text and not w.text.startswith("-")]
            texts = [w.text.partition("=")[2] for w in codes]
        else:
            args = [w for w in rest if w.text not in ("--",)]
            if not args or (args[0].text.startswith("-") and args[0].text != "-"):
                return  # trap -p, trap -l: only print
            codes, texts = args[:1], [args[0].text]
        for word, text in zip(codes, texts, strict=True):
            if word.dynamic:
                self.problem(f"{cmd.name} is given code only known when it runs")
            elif text and text != "-":
                self.nested_text(text, cmd, via)

    def su(self, cmd: SimpleCommand, rest: list[Word]) -> None:
        self.out.append(cmd if not rest else replace(cmd, words=cmd.words[:1]))
        for j, w in enumerate(rest):
            if w.text in ("-c", "--command") and j + 1 < len(rest):
                self.nested_text(rest[j + 1].text, cmd, (*cmd.via, "su"))
            elif w.text.startswith("--command="):
                self.nested_text(w.text.partition("=")[2], cmd, (*cmd.via, "su"))

    def find(self, cmd: SimpleCommand) -> None:
        """``find ROOTS… -exec CMD {} ;``: CMD runs on files under ROOTS, so ``{}`` stands for each root."""
        self.out.append(cmd)
        words = list(cmd.words[1:])
        j = 0
        while (j < len(words) and words[j].text in ("-H", "-L", "-P")) or (
            j < len(words) and words[j].text.startswith(("-O", "-D"))
        ):
            j += 1
        roots: list[Word] = []
        while j < len(words) and not words[j].text.startswith(("-", "(", "!", ")")):
            roots.append(words[j])
            j += 1
        roots = roots or [Word(".")]
        while j < len(words):
            if words[j].text in ("-exec", "-execdir", "-ok", "-okdir"):
                end = j + 1
                while end < len(words) and words[end].text not in (";", "+"):
                    end += 1
                inner = words[j + 1 : end]
                if inner:
                    for root in roots:
                        argv = tuple(_found(w, root) for w in inner)
                        self.emit(replace(cmd, words=argv, via=(*cmd.via, "find " + words[j].text)))
                j = end + 1
                continue
            j += 1


# git settings whose value is a shell command (an alias starting with `!`, the ssh, pager and editor programs)
_GIT_SHELL_KEYS = re.compile(
    r"^(alias\..+|core\.(sshcommand|pager|editor|askpass|fsmonitor|gitproxy)|sequence\.editor|diff\.external|"
    r"credential\..*helper|(diff|merge|filter)\..+\.(textconv|command|driver|clean|smudge|process)|"
    r"pager\..+|gpg(\..+)?\.program|interactive\.difffilter)$",
    re.IGNORECASE,
)


def _reads_makefile_from_input(rest: Sequence[Word]) -> bool:
    """``make -f -``, ``make --file=/dev/stdin``, ``make -f/dev/fd/0``: the makefile is the input."""
    for i, w in enumerate(rest):
        t = w.text
        value = None
        if t in ("-f", "--file", "--makefile") and i + 1 < len(rest):
            value = rest[i + 1].text
        elif t.startswith(("--file=", "--makefile=")):
            value = t.partition("=")[2]
        elif t.startswith("-f") and len(t) > 2 and not t.startswith("--"):
            value = t[2:]
        if value is not None and (value == "-" or value in STDIN_PATHS):
            return True
    return False


STDIN_PATHS = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


def _given_text(cmd: SimpleCommand) -> str | None:
    """The text a command reads on its input, when the command itself shows it: a here-document, a
    here-string, or a pipe from ``echo``/``printf``/``cat <<EOF``."""
    for red in cmd.redirects:
        if red.op in ("<<", "<<-"):
            return red.body
        if red.op == "<<<":
            return red.target.text
    if cmd.piped_in and cmd.feeder is not None:
        return fed_text(cmd.feeder)
    return None


_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"', "a": "", "r": "", "e": "", "0": ""}


def _unescape(text: str) -> str:
    """echo -e's and printf's escapes: ``\\n``, ``\\t``, ``\\xHH``, ``\\0NNN``/``\\NNN``."""

    def one(m: re.Match[str]) -> str:
        if m.group("hex"):
            return chr(int(m.group("hex"), 16))
        if m.group("oct"):
            return chr(int(m.group("oct"), 8) % 256)
        return _ESCAPES.get(m.group("c"), "\\" + m.group("c"))

    return re.sub(
        r"\\(?:x(?P<hex>[0-9A-Fa-f]{1,2})|0?(?P<oct>[0-7]{1,3})|(?P<c>.))", one, text, flags=re.DOTALL
    )


def fed_text(feeder: SimpleCommand) -> str | None:
    """What ``feeder`` writes to the pipe, when its words show it (``echo``, ``printf``, ``cat`` or ``tee``
    of a here-document); None when only running it would tell (a download, a decoder, a file)."""
    words = list(feeder.words[1:])
    if any(w.dynamic for w in words):
        return None
    name = feeder.name
    if name == "echo":
        while words and re.fullmatch(r"-[neE]+", words[0].text):
            words = words[1:]
        return _unescape(" ".join(w.text for w in words))
    if name == "printf" and words and not words[0].text.startswith("-"):
        return _unescape(" ".join(w.text for w in words))
    if name in ("cat", "tee") and not [w for w in words if not w.text.startswith("-")]:
        return _given_text(replace(feeder, piped_in=False))
    return None


def make_recipes(text: str) -> str:
    """The shell lines of a makefile's recipes (each line after a tab, without make's ``@-+`` prefixes),
    one command line each; ``$(shell …)`` is judged as the substitution it is, other make functions too."""
    lines = []
    text = text.replace("$$", "$").replace("$(shell ", "$(")
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("\t"):
            lines.append(line[1:].lstrip("@-+ "))
        elif "$(shell" in line or "$(eval" in line or "!=" in line:
            lines.append(line.partition("=")[2] if "!=" in line else line)
    return "\n".join(lines)


FOUND = "{}"  # a word's origin when find put the files it finds there


def _found(word: Word, root: Word) -> Word:
    """``{}`` in a ``find -exec`` argument (alone, or within: ``of={}``) stands for each file found under
    ``root``: judged as the root, and marked so rules know it is every found file."""
    if FOUND not in word.text:
        return word
    text = word.text.replace(FOUND, root.text)
    return Word(text, word.dynamic or root.dynamic, word.glob or root.glob, origin=(FOUND,))


def _cd_target(words: Sequence[Word]) -> str:
    args = [w for w in words[1:] if not w.text.startswith("-") or w.text == "-"]
    if words[0].text == "popd" or (args and (args[0].dynamic or args[0].text == "-")):
        return UNKNOWN_DIR
    return args[0].text if args else "~"


def _words(tok: Tok) -> list[Word]:
    """A token's words: one, or several when an unquoted ``{a,b}`` expands."""
    texts = _expand_braces(tok.text) if tok.brace else [tok.text]
    origin = tuple(tok.sources) if tok.text in ("$(…)", "`…`") else ()
    return [Word(t, dynamic=tok.dynamic, glob=tok.glob, origin=origin) for t in texts]


def _expand_braces(text: str, limit: int = 64) -> list[str]:
    """``a{b,c}d`` → ``abd acd`` (nested too, at most ``limit`` results); ``{1..3}`` is left as it is."""
    m = re.search(r"\{([^{}]*,[^{}]*)\}", text)
    if m is None:
        return [text]
    out: list[str] = []
    for alt in m.group(1).split(","):
        for expanded in _expand_braces(text[: m.start()] + alt + text[m.end() :], limit):
            out.append(expanded)
            if len(out) >= limit:
                return out
    return out


def _split(
    text: str, depth: int, problems: list[str], cwds: tuple[str, ...], via: tuple[str, ...]
) -> list[SimpleCommand]:
    if len(text) > MAX_TEXT:
        problems.append(f"the command is longer than {MAX_TEXT} characters")
        return []
    lexer = Lexer(text, depth, problems)
    toks, _ = lexer.tokens(0, closing=False)
    if lexer.heredocs:
        lexer.read_heredocs(len(text))
    builder = _Builder(problems, depth)
    builder.run(toks, cwds, via)
    return builder.out


def split_command(text: str) -> Split:
    """Every simple command ``text`` would run, and what could not be read.  Never raises."""
    problems: list[str] = []
    try:
        commands = _split(text, 0, problems, (), ())
    except RecursionError:
        return Split((), ("the command is nested too deeply to read",))
    except Exception as exc:  # a bug here must not let a command through: report it as unreadable
        return Split((), (f"internal error while reading the command: {exc!r}",))
    return Split(tuple(commands), tuple(problems))
