"""Code that arrives through a file in the same Bash call, then runs: ``cat > run.sh <<EOF … EOF; sh run.sh``,
``echo … > x.py && python x.py``, ``curl -o i.sh … && sh i.sh``, ``git clone … && cd x && make``.

Each command of the call is judged on its own text, where ``sh run.sh`` is only a local script.  So the
commands are walked in order, remembering what each writes (a path, with its text when the command shows it:
a here-document, ``echo``, ``printf``; or nothing readable: a download, a copy, a decoder's output, an
unpacked archive, a clone); and what a later command runs is judged as the code it is: a shell script as
the commands it holds (as for ``sh -c``), a Python or JavaScript file as inline code, a makefile by its
recipes, ``package.json`` by its scripts; a file the policy cannot read is ``unknown``.  Project runners
(``make``, ``pytest``, ``npm test``, ``pip install .``, ``cargo``, ``go``) run the code files written before
them.  Files written by earlier calls are remembered elsewhere (``policy/decide.py``).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from vaultops.policy.bash import STDIN_PATHS, SimpleCommand, Word, fed_text, make_recipes, split_command
from vaultops.policy.commands import command_actions
from vaultops.policy.judge import Judge, flag_value, names, positionals
from vaultops.policy.paths import Scope
from vaultops.policy.table import Action

MAX_DEPTH = 3  # a script that writes a script that writes a script: deeper is judged unknown

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "source", "."})
_LANGUAGES = {
    "python": "python", "python2": "python", "python3": "python", "pypy": "python", "pypy3": "python",
    "node": "JavaScript", "nodejs": "JavaScript", "deno": "JavaScript", "bun": "JavaScript",
    "ts-node": "JavaScript", "tsx": "JavaScript", "ruby": "Ruby", "perl": "Perl", "php": "PHP", "lua": "Lua",
    "Rscript": "R",
}  # fmt: skip
_EXTENSIONS = {
    ".py": "python", ".sh": "sh", ".bash": "sh", ".zsh": "sh", ".js": "JavaScript", ".mjs": "JavaScript",
    ".cjs": "JavaScript", ".ts": "JavaScript", ".rb": "Ruby", ".pl": "Perl", ".php": "PHP", ".mk": "make",
    ".pth": "python",
}  # fmt: skip
_MAKEFILES = frozenset({"Makefile", "makefile", "GNUmakefile"})
# Files a project runner reads as code or as settings naming code, besides the code files themselves.
_PROJECT_FILES = frozenset(
    {"package.json", ".npmrc", ".yarnrc", ".yarnrc.yml", "setup.py", "setup.cfg", "pyproject.toml", "tox.ini",
     "pytest.ini", "noxfile.py", "conftest.py", "Cargo.toml", "build.rs", "go.mod", "Rakefile", "Gemfile",
     "sitecustomize.py", "usercustomize.py", "requirements.txt", ".pre-commit-config.yaml", "Makefile",
     "makefile", "GNUmakefile", "CMakeLists.txt", "build.gradle", "pom.xml", "justfile", "Taskfile.yml"}
)  # fmt: skip
_PROJECT_RUNNERS = names(
    "make gmake pytest py.test tox nox npm yarn pnpm bun npx cargo go pip pip3 uv poetry pdm hatch rake "
    "bundle gradle gradlew mvn mvnw ant cmake ctest jest vitest mocha just task pre-commit rspec"
)
_DOWNLOADERS = frozenset({"curl", "wget", "wget2", "aria2c", "http", "https", "xh", "axel", "scp", "sftp"})
_COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync"})
_UNPACKERS = frozenset({"tar", "bsdtar", "unzip", "7z", "7za", "cpio", "gunzip", "unxz", "bunzip2", "ar"})
_CLONERS = frozenset({"git", "gh", "glab", "svn", "hg"})
_CODE_WRITES = re.compile(r"\bopen\s*\(|write|writeFile|File\.(?:write|open)|copy|urlretrieve|download", re.I)
_FILE_LITERAL = re.compile(r"""["']([\w./~-]+\.\w{1,5}|[\w./~-]*(?:Makefile|makefile))["']""")


@dataclass
class _Files:
    """What the call wrote so far: path → its text (None: unreadable), and folders anything may be in."""

    texts: dict[str, str | None] = field(default_factory=dict)
    wild: list[str] = field(default_factory=list)

    def find(self, path: str) -> tuple[bool, str | None]:
        if path in self.texts:
            return True, self.texts[path]
        if any(path == d or path.startswith(d.rstrip("/") + "/") for d in self.wild):
            return True, None
        return False, None


def same_call_actions(
    commands: Sequence[SimpleCommand], scope: Scope, cwd: str, depth: int = 0
) -> list[Action]:
    """The actions of running, later in the same call, what earlier commands of it wrote."""
    files = _Files()
    out: list[Action] = []
    for cmd in commands:
        if not cmd.words or cmd.words[0].dynamic:
            continue
        judge = Judge(cmd, scope, cwd)
        for word, language in _runs(cmd):
            for place in judge.places(word):
                found, text = files.find(place.path)
                if found:
                    out.extend(_content(judge, word.text, text, language, scope, cwd, depth))
        if cmd.name in _PROJECT_RUNNERS and not cmd.wraps:
            out.extend(_project(judge, files, scope, cwd, depth))
        _record(judge, files)
    return out


# --- what a command runs ----------------------------------------------------------------------------------


def _runs(cmd: SimpleCommand) -> list[tuple[Word, str | None]]:
    """The files ``cmd`` runs, each with the language it reads them as (None: by the file's own marks)."""
    name, args = cmd.name, list(cmd.words[1:])
    out: list[tuple[Word, str | None]] = []
    for red in cmd.redirects:  # `sh < x.sh`, `python < x.py`
        if red.op == "<" and (name in _SHELLS or name in _LANGUAGES):
            out.append((red.target, "sh" if name in _SHELLS else _LANGUAGES[name]))
    if "/" in cmd.words[0].text:
        out.append((cmd.words[0], None))
    elif name in _SHELLS:
        if not any(re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", w.text) for w in args):
            script = next((w for w in args if not w.text.startswith(("-", "+"))), None)
            if script is not None:
                out.append((script, "sh"))
    elif name in _LANGUAGES:
        out.extend(_interpreter_runs(name, args))
    elif name in ("make", "gmake"):
        makefile = flag_value(args, "-f", "--file", "--makefile")
        if makefile is not None and makefile.text != "-" and makefile.text not in STDIN_PATHS:
            out.append((makefile, "make"))
    return out


# interpreter options that take a value (so the value is not the script)
_VALUE_OPTIONS = {
    "python": frozenset({"-X", "-W", "--check-hash-based-pycs"}),
    "JavaScript": frozenset({"-r", "--require", "--import", "--loader", "-C", "--conditions", "--title",
                             "--env-file", "--inspect-port", "--input-type"}),
    "Ruby": frozenset({"-I", "-r", "-C", "-E", "-F"}),
    "Perl": frozenset({"-I", "-M", "-m", "-C"}),
}  # fmt: skip


def _interpreter_runs(name: str, args: list[Word]) -> list[tuple[Word, str | None]]:
    language = _LANGUAGES[name]
    takes = _VALUE_OPTIONS.get(language, frozenset())
    if name in ("deno", "bun") and args and args[0].text in ("run", "test", "task"):
        args = args[1:]
    i = 0
    while i < len(args):
        t = args[i].text
        if t in ("-c", "-e", "-E", "-r", "--eval", "-p", "--print"):
            return []  # inline code: judged as such already
        if t == "-m" and language == "python" and i + 1 < len(args):
            module = args[i + 1].text.replace(".", "/")
            return [(Word(module + ".py"), language), (Word(module + "/__main__.py"), language)]
        if not t.startswith("-") or t == "-":
            return [(args[i], language)] if t != "-" else []
        i += 2 if t in takes else 1
    return []


def _project(judge: Judge, files: _Files, scope: Scope, cwd: str, depth: int) -> list[Action]:
    """A project runner (make, pytest, npm, pip install .) runs the code files and settings written before."""
    out: list[Action] = []
    here = [c for c in judge.cwds if c is not None]
    for d in files.wild:
        if any(c == d or c.startswith(d.rstrip("/") + "/") for c in here):
            judge.add("unknown", f"runs the project in {d}, which this command downloaded or unpacked")
            out.extend(judge.actions[-1:])
    for path, text in files.texts.items():
        base = posixpath.basename(path)
        language = _EXTENSIONS.get(posixpath.splitext(base)[1]) or ("make" if base in _MAKEFILES else None)
        if base == "package.json" and text is not None:
            out.extend(_package_scripts(judge, path, text, scope, cwd, depth))
        elif base in _PROJECT_FILES or language is not None:
            if judge.cmd.name in ("make", "gmake") and language not in ("make", None) and base != "Makefile":
                continue  # make runs its makefile; the makefile's recipes run the rest, judged by name
            out.extend(_content(judge, path, text, language, scope, cwd, depth, base in _PROJECT_FILES))
    return out


def _package_scripts(judge: Judge, path: str, text: str, scope: Scope, cwd: str, depth: int) -> list[Action]:
    try:
        scripts = json.loads(text).get("scripts", {})
    except (ValueError, AttributeError):
        return _content(judge, path, None, None, scope, cwd, depth)
    if not isinstance(scripts, dict):
        return _content(judge, path, None, None, scope, cwd, depth)
    body = "\n".join(v for v in scripts.values() if isinstance(v, str))
    return _content(judge, path, body, "sh", scope, cwd, depth)


# --- judging what runs -------------------------------------------------------------------------------------


def _language_of(shown: str, text: str, language: str | None) -> str | None:
    if language is not None:
        return language
    first = text.split("\n", 1)[0]
    if first.startswith("#!"):
        for key, lang in (("python", "python"), ("node", "JavaScript"), ("ruby", "Ruby"), ("perl", "Perl"),
                          ("php", "PHP"), ("sh", "sh"), ("make", "make")):  # fmt: skip
            if key in first:
                return lang
        return None
    return _EXTENSIONS.get(posixpath.splitext(shown)[1], "sh")


def _content(
    judge: Judge,
    shown: str,
    text: str | None,
    language: str | None,
    scope: Scope,
    cwd: str,
    depth: int,
    settings: bool = False,
) -> list[Action]:
    """The actions of running ``text`` (what was written to ``shown``) as ``language``."""
    lead = f"`{judge.text}`: runs {shown}, which this same command wrote"
    language = _language_of(shown, text, language) if text is not None else language
    if text is None or depth >= MAX_DEPTH or (language is None and settings):
        why = "from something the policy cannot read (a download, a copy, a decoder, an archive)"
        if text is not None:
            why = "and which names code to run the policy does not read"
        return [Action("unknown", f"{lead} {why}")]
    if language in ("sh", "make"):
        script = make_recipes(text) if language == "make" else text
        split = split_command(script)
        actions = [Action("unparsable", f"{lead}: {problem}") for problem in split.problems]
        for cmd in split.commands:
            actions.extend(command_actions(cmd, scope, cwd))
        actions.extend(same_call_actions(split.commands, scope, cwd, depth + 1))
        return [Action(a.name, f"{lead}: {a.detail}") for a in actions]
    if language is None:
        return [Action("unknown", f"{lead}, a program the policy cannot read")]
    inner = Judge(SimpleCommand((Word(language), Word("-c"), Word(text))), scope, cwd)
    inner.text = judge.text
    inner.inline_code(text, language)
    return [Action(a.name, f"{lead}: {a.detail}") for a in inner.actions]


# --- what a command writes ---------------------------------------------------------------------------------


def _record(judge: Judge, files: _Files) -> None:
    cmd = judge.cmd
    name, args = cmd.name, list(cmd.words[1:])

    def put(word: Word, text: str | None, append: bool = False) -> None:
        for place in judge.places(word):
            if append and place.path in files.texts:
                before = files.texts[place.path]
                files.texts[place.path] = None if before is None or text is None else before + "\n" + text
            else:
                files.texts[place.path] = text

    shown = fed_text(cmd) if name in ("echo", "printf", "cat", "tee") else None
    for red in cmd.redirects:
        if red.writes and not red.target.text.startswith("/dev/"):
            text = shown if name != "tee" else None
            if name == "cat" and shown is None:
                text = _copied(judge, files, args)
            put(red.target, text, red.op in (">>", "&>>"))
    if name == "tee":
        given = fed_text(cmd.feeder) if cmd.piped_in and cmd.feeder is not None else shown
        for w in positionals(args):
            put(w, given, any(a.text in ("-a", "--append") for a in args))
    elif name in _DOWNLOADERS:
        for w in _downloads(name, args):
            put(w, None)
        if _fills_folder(name, args):  # scp host:… ., wget -i list: files no word names
            folder = flag_value(args, "-P", "--directory-prefix") or (
                args[-1] if name in ("scp", "sftp") else None
            )
            files.wild.extend(p.path for p in judge.places(folder or Word(".")))
    elif name == "rsync" and any(_REMOTE_SOURCE.match(w.text) for w in positionals(args)[:-1]):
        files.wild.extend(p.path for p in judge.places(positionals(args)[-1]))
    elif name in ("git", "patch") and (
        (name == "patch" or any(w.text in ("apply", "am") for w in args[:3]))
        and _patch_from_outside(judge, files)
    ):
        files.wild.extend(c for c in judge.cwds if c is not None)  # a downloaded patch changes any file
    elif name in _COPIERS:
        targets = positionals(
            args, ("-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "-g")
        )
        into = flag_value(args, "-t", "--target-directory")
        sources = targets if into is not None else targets[:-1]
        dest = into or (targets[-1] if targets else None)
        text = _copied(judge, files, sources)
        if dest is not None:
            put(dest, text if len(sources) == 1 else None)
            for s in sources:
                put(
                    Word(posixpath.join(dest.text, posixpath.basename(s.text.rstrip("/"))), dest.dynamic),
                    text,
                )
    elif name in _UNPACKERS or (name in _CLONERS and any(w.text == "clone" for w in args[:2])):
        _unpacked(judge, files, name, args)
    elif name in ("sed", "perl") and any(re.match(r"-[a-zA-Z]*i", w.text) for w in args):
        for w in args:
            for place in judge.places(w):
                if place.path in files.texts:
                    files.texts[place.path] = None
    elif name in _LANGUAGES:
        code = " ".join(w.text for w in args)
        if _CODE_WRITES.search(code):
            for literal in _FILE_LITERAL.findall(code):
                put(Word(literal), None)
    elif name == "dd":
        for w in args:
            if w.text.startswith("of="):
                put(Word(w.text[3:], w.dynamic), None)


_REMOTE_SOURCE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[^/\s:=]+:(?!//))")


def _fills_folder(name: str, args: list[Word]) -> bool:
    if name in ("scp", "sftp"):
        return bool(args) and not posixpath.splitext(args[-1].text.rstrip("/"))[1]
    if name in ("wget", "wget2", "aria2c"):
        return any(w.text in ("-i", "--input-file", "-r", "--recursive", "-m", "--mirror") for w in args)
    return False


def _patch_from_outside(judge: Judge, files: _Files) -> bool:
    """A patch read from a pipe whose text the policy cannot see, or from a file this call downloaded."""
    cmd = judge.cmd
    if cmd.piped_in and (cmd.feeder is None or fed_text(cmd.feeder) is None):
        return True
    named = [red.target for red in cmd.redirects if red.op == "<"] + [
        w for w in cmd.words[1:] if "." in w.text
    ]
    return any(files.find(p.path) == (True, None) for w in named for p in judge.places(w))


def _copied(judge: Judge, files: _Files, sources: Sequence[Word]) -> str | None:
    """The text of a copy: its one source's, when the call wrote that source and the policy read it."""
    for s in sources[:1]:
        for place in judge.places(s):
            return files.texts.get(place.path)
    return None


def _downloads(name: str, args: list[Word]) -> list[Word]:
    """Where a download lands: ``-o``/``-O FILE``/``--output`` (``-sSLo FILE`` too), else the URL's last
    part (``curl -O``, ``wget``), under ``--output-dir``/``-P``."""
    out = [w for w in (flag_value(args, "-o", "--output", "--output-document", "--out", "--download"),) if w]
    letters = "oO" if name.startswith("wget") else "o"
    for i, w in enumerate(args[:-1]):  # bundled short options ending in the one that takes the file
        if re.fullmatch(rf"-[A-Za-z]+[{letters}]", w.text) and len(w.text) > 2 and args[i + 1].text != "-":
            out.append(args[i + 1])
    if name in ("wget", "wget2"):
        out += [w for w in (flag_value(args, "-O"),) if w and w.text != "-"]
    folder = flag_value(args, "--output-dir", "-P", "--directory-prefix", "-d", "--dir")
    named = name in ("wget", "wget2", "aria2c", "axel") or any(
        w.text in ("-O", "--remote-name", "--remote-name-all")
        or re.fullmatch(r"-[a-zA-Z]*O[a-zA-Z]*", w.text)
        for w in args
    )
    if named and not (name in ("wget", "wget2") and flag_value(args, "-O") is not None):
        for w in args:
            if "://" in w.text:
                base = w.text.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] or "index.html"
                out.append(Word(posixpath.join(folder.text, base) if folder else base, w.dynamic))
    if name in ("scp", "sftp") and args:
        out.append(args[-1])
    return out


def _unpacked(judge: Judge, files: _Files, name: str, args: list[Word]) -> None:
    """An archive that came down in this call, or from a pipe, and a clone: anything may be in the folder."""
    archive = next(
        (w for w in args if re.search(r"\.(tar|tgz|gz|xz|bz2|zst|zip|7z|cpio|deb|a)$", w.text)), None
    )
    clone = name in _CLONERS
    from_download = judge.cmd.piped_in or (
        archive is not None and any(files.find(p.path)[0] for p in judge.places(archive))
    )
    if not (clone or from_download):
        return
    if clone:
        pos = positionals(args, ("-b", "--branch", "-o", "--origin", "--depth", "-c", "--config", "-j"))
        pos = [w for w in pos if w.text not in ("clone", "repo")]
        named = (
            [Word(pos[0].text.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git"), pos[0].dynamic)]
            if pos
            else []
        )
        target = pos[1] if len(pos) > 1 else (named[0] if named else None)
    else:
        target = flag_value(args, "-C", "--directory", "-d", "-o") or Word(".")
    if target is not None:
        files.wild.extend(p.path for p in judge.places(target))
