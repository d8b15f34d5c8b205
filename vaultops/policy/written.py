"""What a tool call writes: the files (and folders) it creates or changes, as real paths.

The gate remembers these for the job (``vaultops.hook.server``): a file the agent wrote is its own code, and
running it later is running code no rule has read (``vaultops.policy.own_code``).  The writes are the ones
the policy's rules already see (every ``Judge.write`` of a redirection, ``tee``, ``cp``/``mv``/``install``
targets, ``sed -i``, ``chmod``, downloads, clones, archives extracted) plus what only this module needs:
the file ``curl -O``/``wget`` name after their URL, ``git apply``/``patch``/``git mv`` targets.  Where the
text cannot say which files change (inline code that writes, a path known only when it runs, a patch read
from a file) the worktree and the folders the command runs in count as written, whole.

Each remembered path stands for itself and everything below it: a folder an archive was extracted into is
written, all of it.  Paths are resolved against the call's cwd with the scope's resolver (symlinks resolved
where they exist), so ``./a/../run.sh``, a link to it and ``$PWD/run.sh`` are one file.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from vaultops.policy.bash import SimpleCommand, Word, split_command
from vaultops.policy.commands import RULES
from vaultops.policy.judge import Judge, positionals
from vaultops.policy.paths import Place, Scope
from vaultops.policy.table import Action
from vaultops.policy.tools import WRITE_TOOLS, ToolCall

_RULES = RULES  # the rules registered themselves with the judge on import
# Judge.write verbs that change no file's content: a lock, a temp name, a repository's own files, a move's
# source (its target is noted on its own)
_NOT_WRITES = frozenset({"locks", "makes a temporary file in", "creates a repository in", "moves"})
# Inline code that may write files (or start what does): which files it names cannot be read from the text.
_CODE_WRITES = re.compile(
    r"open|write|print\s*\(.*file|rename|replace|copy|move|link|symlink|chmod|mkdir|dump|save|spit|subprocess|"
    r"system|popen|exec|spawn|shutil|pathlib|Path\b|fs\.|File\.|IO\.|Deno\.|Bun\.|>|tee|eval|__import__|"
    r"importlib|ctypes"
)
_COMPRESSED = (".gz", ".tgz", ".bz2", ".xz", ".zst", ".lz4", ".Z", ".lzma", ".zip")
_COMPILERS = frozenset({"gcc", "cc", "clang", "g++", "c++", "clang++", "tcc", "rustc", "javac"})
_PATCH_TARGET = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?([^\t\n]+)|^(?:rename|copy) to (.+)$", re.M)


@dataclass(frozen=True)
class Written:
    """The paths a job wrote.  ``paths`` stand for themselves and anything below them (a file moved into a
    folder); ``trees`` are folders written whole, whose files no text named (an archive extracted, a clone,
    the worktree after inline code wrote to it)."""

    paths: frozenset[str] = frozenset()
    trees: frozenset[str] = frozenset()

    def __or__(self, other: Written) -> Written:
        return Written(self.paths | other.paths, self.trees | other.trees)

    def __bool__(self) -> bool:
        return bool(self.paths or self.trees)

    @cached_property
    def every(self) -> frozenset[str]:
        return self.paths | self.trees

    @cached_property
    def _sorted(self) -> tuple[str, ...]:
        return tuple(sorted(self.every))

    @cached_property
    def _by_folder(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for p in self._sorted:
            out.setdefault(posixpath.dirname(p), []).append(p)
        return out

    def holding(self, path: str) -> str | None:
        """The remembered path that ``path`` is or lies below, if any (the nearest one)."""
        while True:
            if path in self.every:
                return path
            parent = posixpath.dirname(path)
            if parent == path:
                return None
            path = parent

    def below(self, folder: str) -> list[str]:
        """The remembered paths below ``folder`` (the folder itself included), in order."""
        start = bisect.bisect_left(self._sorted, folder)
        out = []
        for p in self._sorted[start:]:
            if not p.startswith(folder):
                break
            if _under(p, folder):
                out.append(p)
        return out

    def in_folder(self, folder: str) -> list[str]:
        """The remembered paths right in ``folder``, in order."""
        return self._by_folder.get(folder, [])


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


# Judge.write verbs whose target is a folder filled with files no text names
_INTO = frozenset({"downloads into", "extracts an archive into", "clones into", "creates a worktree in"})
_RECURSIVE = re.compile(r"^(-[A-Za-z]*[rRa][A-Za-z]*|--recursive|--archive)$")


class Recorder(Judge):
    """A judge that also notes every path the command writes (``wrote``, ``trees``) and every file it runs
    (``runs``: the word and where it points).  ``ran``: the command was let through, so one the policy
    does not know (the person approved it) may have written anything."""

    def __init__(self, cmd: SimpleCommand, scope: Scope, base_cwd: str, ran: bool = False) -> None:
        super().__init__(cmd, scope, base_cwd)
        self.ran = ran
        self.wrote: set[str] = set()
        self.trees: set[str] = set()
        self.runs: list[tuple[Word, list[Place]]] = []
        self.verdicts: list[Action] = []

    @property
    def written(self) -> Written:
        return Written(frozenset(self.wrote), frozenset(self.trees))

    def _touched(self) -> None:
        """Writes no text names: the worktree and every folder the command may run in."""
        self.trees.add(self.scope.real_workdir)
        self.trees.update(self.scope.real(c) for c in self.cwds if c is not None)

    def _note(self, places: Iterable[Place], whole: bool = False) -> None:
        for p in places:
            if p.where == "unknown":
                self._touched()
            elif p.where != "device":
                (self.trees if whole else self.wrote).add(p.path)

    def _whole(self, verb: str, word: Word) -> bool:
        """Whether the target receives files no text names: a folder filled by an archive or a clone, a
        recursive copy, a move of what may be a folder (no suffix)."""
        if verb in _INTO:
            return True
        name = self.cmd.name
        if name in ("cp", "rsync", "scp", "ditto", "gcp") and (
            name in ("rsync", "ditto") or any(_RECURSIVE.match(w.text) for w in self.cmd.words[1:])
        ):
            return True
        if name == "mv":
            sources = [w for w in positionals(self.cmd.words[1:]) if w is not word]
            return any(w.text.endswith("/") or "." not in w.text.rsplit("/", 1)[-1] for w in sources)
        return False

    def write(self, word: Word, verb: str = "writes") -> None:
        super().write(word, verb)
        if verb.startswith("deletes") or verb in _NOT_WRITES:
            return
        if verb == "downloads into" and self.cmd.name in ("curl", "wget", "wget2"):
            self._download(word)
            return
        self._note(self.places(word), self._whole(verb, word))
        if verb == "compresses or expands in place":
            for suffix in _COMPRESSED:
                if word.text.endswith(suffix) and len(word.text) > len(suffix):
                    self._note(self.places(Word(word.text[: -len(suffix)], word.dynamic, word.glob)))

    def run_file(self, word: Word) -> None:
        super().run_file(word)
        self.runs.append((word, self.places(word)))

    def _download(self, folder: Word) -> None:
        """``curl -O URL``, ``wget URL``: a file named after the URL's path; the whole folder when the name
        comes from the server (``-J``, ``--content-disposition``) or the download is recursive."""
        args = [w.text for w in self.cmd.words[1:]]
        urls = [w for w in self.cmd.words[1:] if "://" in w.text]
        server_named = any(
            a
            in ("-J", "--remote-header-name", "--content-disposition", "-r", "--recursive", "-m", "--mirror")
            or re.fullmatch(r"-[A-Za-z]*[Jrm][A-Za-z]*", a) is not None
            or a.startswith(("--content-disposition", "--recursive", "--mirror"))
            for a in args
        )
        names = [_url_name(u.text, self.cmd.name) for u in urls]
        if server_named or not urls or any(u.dynamic for u in urls) or not all(names):
            self._note(self.places(folder), whole=True)
            return
        for name in names:
            self._note(self.places(Word(posixpath.join(folder.text, name), folder.dynamic)))

    def inline_code(self, code: str, language: str) -> None:
        super().inline_code(code, language)
        if _CODE_WRITES.search(code):
            self._touched()

    def judge(self) -> list[Action]:
        actions = super().judge()
        args = list(self.cmd.words[1:])
        if self.cmd.name == "git":
            self._git(args)
        elif self.cmd.name == "patch":
            self._patch(args)
        elif self.cmd.name in _COMPILERS:
            self._compiled(args)
        elif self.cmd.name in ("npm", "yarn", "pnpm", "bun"):
            self._packages(args)
        elif re.fullmatch(r"(python|pypy)[\d.]*", self.cmd.name):
            self._unpacks(args)
        if self.ran and any(a.name == "unknown" for a in actions):  # let through by the person: it may
            self._touched()  # have written anything
        self.verdicts = actions
        return actions

    def _packages(self, args: list[Word]) -> None:
        """``npm install left-pad``: a package the agent chose, downloaded into node_modules, is its own code
        (installing what the project's manifest lists is not)."""
        pos = positionals(args, ("--prefix", "-C", "--dir", "--cwd", "--filter", "-w", "--workspace"))
        if len(pos) >= 2 and pos[0].text in ("install", "i", "add", "in", "isntall", "update", "up"):
            self._note(self.places(Word("node_modules")), whole=True)

    def _unpacks(self, args: list[Word]) -> None:
        """``python -m zipfile -e x.zip out``, ``python -m tarfile -e x.tar out``: an archive extracted."""
        texts = [w.text for w in args]
        for module in ("zipfile", "tarfile"):
            if ["-m", module] == texts[:2] and ("-e" in texts or "--extract" in texts):
                rest = positionals(args[2:])
                self._note(self.places(rest[1] if len(rest) > 1 else Word(".")), whole=True)

    def _compiled(self, args: list[Word]) -> None:
        """A compiler with no ``-o`` names its program itself: ``a.out``, or after the source."""
        if any(w.text == "-o" or (w.text.startswith("-o") and len(w.text) > 2) for w in args):
            return
        sources = [w for w in positionals(args) if "." in w.text.rsplit("/", 1)[-1]]
        if self.cmd.name in ("rustc", "javac"):
            for w in sources:
                stem = w.text.rsplit(".", 1)[0]
                self._note(
                    self.places(Word(stem + (".class" if self.cmd.name == "javac" else ""), w.dynamic))
                )
        elif sources:
            self._note(self.places(Word("a.out")))

    def _patch_body(self, base: Word | None) -> None:
        """The files a patch given in a here-document names; when the patch comes from a file, all of them."""
        bodies = [r.body or r.target.text for r in self.cmd.redirects if r.op in ("<<", "<<-", "<<<")]
        targets = [m.group(1) or m.group(2) for body in bodies for m in _PATCH_TARGET.finditer(body)]
        targets = [t.strip() for t in targets if t.strip() and t.strip() != "/dev/null"]
        if not targets:
            self._touched()
            return
        for target in targets:
            text = posixpath.join(base.text, target) if base is not None else target
            self._note(self.places(Word(text, base.dynamic if base else False)))

    def _patch(self, args: list[Word]) -> None:
        directory = next(
            (args[i + 1] for i, w in enumerate(args[:-1]) if w.text in ("-d", "--directory")), None
        )
        self.with_cwd(directory)
        files = positionals(
            args, ("-i", "--input", "-p", "-d", "--directory", "-o", "--output", "-r", "-B", "-z")
        )
        if not files:
            self._patch_body(None)

    def _git(self, args: list[Word]) -> None:
        pos = positionals(args, ("-C", "-c", "--git-dir", "--work-tree", "--namespace"))
        sub = pos[0].text if pos else ""
        rest = args[args.index(pos[0]) + 1 :] if pos else []
        if sub in ("apply", "am"):
            directory = next(
                (w.text.partition("=")[2] for w in rest if w.text.startswith("--directory=")), ""
            )
            self._patch_body(Word(directory) if directory else None)
        elif sub == "mv":
            moved = positionals(rest)
            if len(moved) >= 2:
                self._note(self.places(moved[-1]), whole=not moved[0].text.rsplit("/", 1)[-1].count("."))


def _url_name(url: str, program: str) -> str:
    """The file name curl -O or wget gives a download: the last part of the URL's path."""
    path = url.split("://", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    _, _, path = path.partition("/")
    name = path.rsplit("/", 1)[-1]
    if not name and program.startswith("wget"):
        return "index.html"
    return name


def record(cmd: SimpleCommand, scope: Scope, cwd: str, ran: bool = False) -> Recorder:
    """One simple command, run from ``cwd``, judged with its writes and runs noted."""
    recorder = Recorder(cmd, scope, cwd, ran)
    recorder.judge()
    return recorder


def writes_of(call: ToolCall, scope: Scope, ran: bool = True) -> Written:
    """Every path ``call`` creates or changes, as real paths.  ``ran``: it was let through (the gate
    remembers what it wrote); False: what it would write, judged before it runs."""
    name = call.tool_name
    if name in WRITE_TOOLS:
        value = call.tool_input.get(WRITE_TOOLS[name])
        if not isinstance(value, str) or not value:
            return Written()
        # a file tool's path is literal: no variable, glob or quote in it is the shell's
        return Written(frozenset({scope.real(posixpath.join(call.cwd, value))}))
    if name != "Bash":
        return Written()
    command = call.tool_input.get("command")
    if not isinstance(command, str):
        return Written()
    split = split_command(command)
    out = (
        Written(trees=frozenset({scope.real_workdir, scope.real(call.cwd)})) if split.problems else Written()
    )
    for cmd in split.commands:
        out |= record(cmd, scope, call.cwd, ran).written
    return out
