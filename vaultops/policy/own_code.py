"""Running the job's own code: a call that runs or loads a file the job wrote (``vaultops.policy.written``).

No rule has read what the agent put in a file, so running it is running unknown code (the table's
``unknown``), whatever the command's own text looks like: directly (``./run.sh``, ``sh run.sh``, ``python
x.py``, ``source x``), by handing it to a program that may run it (``node -r ./x.js``, ``papermill x.ipynb``,
``make -f name``), or through a tool that loads files by their names: ``make`` its Makefiles, ``pytest`` its
conftest files and settings, ``npm``/``yarn``/``pnpm`` a package.json's scripts, ``pip install .`` a setup.py,
``cargo`` a build.rs, every Python a ``sitecustomize.py`` or ``.pth``, ``git commit`` the hooks a repository
keeps in its tree.  The call's own writes count too: ``curl -o x.sh … && sh x.sh`` is one call.

Inside the operating system's fence (``fenced``) the sandbox holds what such code can reach, so the memory
adds nothing there; the other rules judge the command's text all the same.  A CI workflow is different: the
fence does not hold it, a push of the branch runs it elsewhere, so writing one (and pushing after writing
one) is unknown everywhere.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from vaultops.policy.bash import SimpleCommand, Word, split_command
from vaultops.policy.judge import names, positionals, short
from vaultops.policy.paths import Place, Scope, place
from vaultops.policy.table import Action
from vaultops.policy.tools import ToolCall
from vaultops.policy.written import Recorder, Written, record, writes_of

# Programs that only read, copy or move the files they are given (a file given to them is data, not code).
_DATA = names(
    "cat tac less more head tail grep egrep fgrep rg ag ack wc ls stat file diff cmp comm sort uniq cut tr "
    "nl od xxd hexdump strings base64 md5sum sha1sum sha256sum sha512sum shasum cksum b2sum cp mv rm ln "
    "chmod chown chgrp touch mkdir rmdir realpath readlink basename dirname tee echo printf test [ [[ "
    "true false git gzip gunzip zip unzip tar bzip2 bunzip2 xz unxz zstd jq yq du find fold fmt column "
    "paste join split iconv dos2unix unix2dos truncate install rsync scp shellcheck shfmt black isort "
    "ruff flake8 mypy pyright gofmt rustfmt clang-format gcc cc clang g++ c++ tsc tree cd pushd popd "
    "export unset set shift wait sleep pwd type which whereis command exit return local declare"
)
_PYTHONS = names(
    "pytest py.test pip pip3 tox nox uv poetry pdm hatch pipenv rye mypy black isort flake8 pylint "
    "coverage jupyter ipython papermill pre-commit twine sphinx-build mkdocs django-admin manage.py"
)
_PY_STARTUP = ("sitecustomize.py", "usercustomize.py", "*.pth")
# Options whose value is a folder a tool runs in (or a file in it): its loaders are read there.
_DIR_OPTIONS = names(
    "-C --directory --dir --prefix --cwd --chdir --rootdir --project --project-dir --working-directory "
    "--manifest-path --workspace-dir"
)
_NODE_READ_ONLY = names(
    "view info show ls list outdated help search whoami ping -v --version -h --help config get"
)
_GIT_HOOKED = names(
    "commit merge am rebase cherry-pick revert pull checkout switch push worktree clone stash"
)
_PY_PROJECT_TOOLS = names("uv poetry pdm hatch pipenv rye flit pixi maturin")
_IMPORT = re.compile(r"(?:^|[;\n]|\s)(?:import|from)\s+([A-Za-z_][\w.]*)")
# CI files: a push of the branch runs them on the forge's machines, with its secrets.
_CI = (
    ".github/workflows/*",
    ".github/actions/*",
    ".gitlab-ci.yml",
    ".gitlab-ci.yaml",
    ".gitlab/*",
    ".circleci/*",
    ".travis.yml",
    "azure-pipelines.yml",
    "azure-pipelines.yaml",
    ".azure-pipelines/*",
    "Jenkinsfile",
    ".buildkite/*",
    "bitbucket-pipelines.yml",
    ".drone.yml",
    ".woodpecker.yml",
    ".woodpecker/*",
    ".gitea/workflows/*",
    ".forgejo/workflows/*",
    "appveyor.yml",
    ".appveyor.yml",
    ".cirrus.yml",
    "cloudbuild.yaml",
    "buildspec.yml",
    ".semaphore/*",
)
_CI_HINT = re.compile(
    r"\.github|\.gitlab|circleci|travis|azure-pipelines|Jenkinsfile|buildkite|bitbucket|drone|woodpecker|"
    r"\.gitea|\.forgejo|appveyor|cirrus|cloudbuild|buildspec|semaphore"
)


@dataclass(frozen=True)
class Loader:
    """What a tool reads as code: ``here`` names in the folder it runs in or any folder above it,
    ``below`` names (or relative patterns) anywhere below the worktree (or the folder, outside it)."""

    what: str  # "make reads", "pytest loads"
    here: tuple[str, ...] = ()
    below: tuple[str, ...] = ()


MAKE = Loader("make reads", ("Makefile", "makefile", "GNUmakefile"), ("*.mk",))
PYTEST = Loader(
    "pytest loads",
    ("conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"),
    ("conftest.py", "test_*.py", "*_test.py"),  # the tests it collects run as they are written too
)
TOX = Loader(
    "tox loads", ("tox.ini", "noxfile.py", "setup.py", "setup.cfg", "pyproject.toml"), ("conftest.py",)
)
NODE = Loader(
    "runs the scripts of",
    ("package.json", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".pnpmfile.mjs", "bunfig.toml"),
    ("package.json", "node_modules/*", ".yarn/*"),
)
PY_PROJECT = Loader("builds the project with", ("setup.py", "setup.cfg", "pyproject.toml"))
CARGO = Loader(
    "cargo builds with",
    (
        "Cargo.toml",
        "build.rs",
        ".cargo/config.toml",
        ".cargo/config",
        "rust-toolchain.toml",
        "rust-toolchain",
    ),
    ("build.rs", "Cargo.toml"),
)
GO = Loader("go builds and runs", (), ("*.go",))
# What build and test tools read as code in the folder they run in (or above it): whatever the tool, a
# written one of these means the tool runs the agent's code.
BUILD = Loader(
    "the build reads",
    (
        "Makefile", "makefile", "GNUmakefile", "Rakefile", "rakefile", "Gemfile", "*.gemspec",
        "CMakeLists.txt",
        "*.cmake", "meson.build", "meson_options.txt", "build.gradle", "build.gradle.kts", "settings.gradle",
        "settings.gradle.kts", "gradlew", "gradle/wrapper/gradle-wrapper.properties", "pom.xml", ".mvn/*",
        "mvnw", "build.xml", "build.sbt", "project/*.sbt", "project/*.scala", "BUILD", "BUILD.bazel",
        "WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel", "*.bzl", ".bazelrc", "Dockerfile", "Dockerfile.*",
        "Containerfile", "*.dockerfile", "justfile", "Justfile", ".justfile", "Taskfile.yml", "Taskfile.yaml",
        "Gruntfile.js", "Gruntfile.coffee", "gulpfile.js", "gulpfile.ts", "gulpfile.mjs", "*.config.js",
        "*.config.cjs", "*.config.mjs", "*.config.ts", "*.config.mts", "*.config.cts", ".*rc.js", ".*rc.cjs",
        ".*rc.mjs", ".babelrc", "package.json", "deno.json", "deno.jsonc", "Cargo.toml", "build.rs",
        ".cargo/config.toml", "go.mod", "go.work", "setup.py", "setup.cfg", "pyproject.toml", "tox.ini",
        "noxfile.py", "conftest.py", "pytest.ini", "mix.exs", "rebar.config", "dune", "dune-project",
        "stack.yaml", "*.cabal", "Package.swift", "Podfile", "composer.json", "Vagrantfile",
    ),
)  # fmt: skip
_BUILDS = frozenset({"run_build", "run_tests", "deploy"})
JUPYTER = Loader("jupyter loads", ("jupyter_*config.py", "ipython_config.py", "jupyter_*config.json"))
GIT_HOOKS = Loader(
    "git runs the hooks of",
    (),
    (
        ".githooks/*",
        ".git-hooks/*",
        "githooks/*",
        ".hooks/*",
        ".husky/*",
        ".pre-commit-config.yaml",
        ".pre-commit-hooks.yaml",
        "lefthook.yml",
        ".lefthook.yml",
        "lefthook-local.yml",
        ".lefthook/*",
        ".overcommit.yml",
    ),
)


def own_code_actions(call: ToolCall, scope: Scope, earlier: Written, fenced: bool) -> list[Action]:
    """What ``call`` does with files the job wrote (``earlier``, and its own writes): running them is
    ``unknown`` unless ``fenced``; writing a CI workflow, or pushing after writing one, always is."""
    mine = writes_of(call, scope, ran=False)
    actions = [
        Action(
            "unknown", f"{call.tool_name} writes {_shown(p, scope)}, a CI file a push of the branch would run"
        )
        for p in sorted(mine.paths)
        if is_ci(p, scope)
    ]
    command = call.tool_input.get("command")
    if call.tool_name != "Bash" or not isinstance(command, str):
        return actions
    known = earlier | mine
    if not known:
        return actions
    for cmd in split_command(command).commands:
        recorder = record(cmd, scope, call.cwd)
        found = [] if fenced else list(_runs_own(recorder, known))
        found += _pushes_ci(recorder, known)
        text = short(str(cmd))
        actions.extend(Action("unknown", f"`{text}`: {why}") for why in dict.fromkeys(found))
    return actions


def is_ci(path: str, scope: Scope) -> bool:
    if not _CI_HINT.search(path):  # most paths: no pattern to try
        return False
    rel = _rel(path, scope)
    return any(_matches(rel, pattern) for pattern in _CI)


# --- what one command runs ---------------------------------------------------------------------------------


def _runs_own(r: Recorder, known: Written) -> Iterator[str]:
    cmd = r.cmd
    ran = [places for _, places in r.runs]
    if cmd.words and "/" in cmd.words[0].text and not cmd.words[0].dynamic:
        ran.append(r.places(cmd.words[0]))
    for places in ran:
        yield from _hits(places, known, r.scope, "runs")
    if cmd.name not in _DATA and not cmd.wraps:
        seen = {p.path for places in ran for p in places} | r.wrote | r.trees  # its own output is not input
        for word in _handed(cmd):
            places = [p for p in r.places(word) if p.path not in seen]
            yield from _hits(places, known, r.scope, f"hands `{cmd.name}`", exact=True)
    for loader, dirs in _loaders(r):
        yield from _loads(loader, dirs, known, r.scope)
    if _starts_python(cmd):
        for p in sorted(known.every):
            if any(fnmatch.fnmatchcase(posixpath.basename(p), n) for n in _PY_STARTUP):
                yield f"every Python start loads {_shown(p, r.scope)}, which this job wrote"
    for module, where in _modules(r):
        for base in where:
            for candidate in (f"{module}.py", f"{module}/__init__.py", f"{module}/__main__.py", module):
                yield from _hits(
                    place(posixpath.join(base, candidate), [base], r.scope), known, r.scope, "imports"
                )


def _hits(
    places: Sequence[Place], known: Written, scope: Scope, verb: str, exact: bool = False
) -> Iterator[str]:
    """For each place the command runs: the remembered file it is, is in, or (a folder) holds."""
    for p in places:
        if p.where in ("unknown", "device"):
            continue  # a path known only when it runs is judged unknown by the rules already
        entry = known.holding(p.path)
        if entry is not None:
            yield _sentence(verb, p.path, entry, scope)
            continue
        if "*" in p.path or "?" in p.path or "[" in p.path:
            for q in sorted(known.every):
                if fnmatch.fnmatchcase(q, p.path):
                    yield _sentence(verb, q, q, scope)
                    break
            continue
        if not exact:
            inside = known.below(p.path)
            if inside:
                yield _sentence(verb, inside[0], inside[0], scope)


def _sentence(verb: str, path: str, entry: str, scope: Scope) -> str:
    what = _shown(path, scope)
    if verb.startswith("hands"):
        lead = f"{verb} {what}, which this job wrote, and it may run it"
    else:
        lead = f"{verb} {what}, which this job wrote"
    return lead if entry == path else f"{lead} (into {_shown(entry, scope)})"


def _handed(cmd: SimpleCommand) -> Iterator[Word]:
    """The arguments (and an option's ``=value``) and input files a program is given."""
    for w in cmd.words[1:]:
        if w.dynamic or not w.text:
            continue
        yield w
        if w.text.startswith("-") and "=" in w.text:
            yield Word(w.text.partition("=")[2], w.dynamic, w.glob)
        elif re.match(r"^-[A-Za-z].+", w.text) and "/" in w.text:  # -r./x.js, -I./lib
            yield Word(w.text[2:], w.dynamic, w.glob)
    for red in cmd.redirects:
        if red.reads and not red.target.dynamic:
            yield red.target


def _rel(path: str, scope: Scope) -> str:
    work = scope.real_workdir
    return posixpath.relpath(path, work) if path == work or path.startswith(work.rstrip("/") + "/") else path


def _shown(path: str, scope: Scope) -> str:
    rel = _rel(path, scope)
    return "the worktree" if rel == "." else rel


def _matches(rel: str, pattern: str) -> bool:
    """A relative path against a pattern: a name in any folder, or a path (``.github/workflows/*``) from the
    top or from any folder below (``*`` crosses ``/``)."""
    if "/" not in pattern:
        return fnmatch.fnmatchcase(posixpath.basename(rel), pattern)
    return fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, "*/" + pattern)


# --- tools that load files by their names ------------------------------------------------------------------


def _sub(cmd: SimpleCommand) -> tuple[str, list[Word]]:
    args = list(cmd.words[1:])
    pos = positionals(
        args, ("-C", "-c", "--prefix", "--cwd", "--dir", "--directory", "--manifest-path", "-p")
    )
    return (pos[0].text, pos[1:]) if pos else ("", [])


def _python_module(cmd: SimpleCommand) -> str:
    words = [w.text for w in cmd.words[1:]]
    for i, t in enumerate(words):
        if t == "-m" and i + 1 < len(words):
            return words[i + 1]
        if t.startswith("-m") and len(t) > 2:
            return t[2:]
        if not t.startswith("-"):
            return ""
    return ""


def _is_python(name: str) -> bool:
    return re.fullmatch(r"(python|pypy)[\d.]*", name) is not None


def _starts_python(cmd: SimpleCommand) -> bool:
    return _is_python(cmd.name) or cmd.name in _PYTHONS or cmd.name.endswith(".py")


def _loaders(r: Recorder) -> Iterator[tuple[Loader, list[str]]]:
    cmd = r.cmd
    name = cmd.name
    sub, _ = _sub(cmd)
    module = _python_module(cmd) if _is_python(name) else ""
    dirs = _run_dirs(r)
    if name in ("make", "gmake", "bmake"):
        yield MAKE, dirs
    if name in ("pytest", "py.test") or module in ("pytest", "py.test"):
        yield PYTEST, dirs
    if name in ("tox", "nox") or module in ("tox", "nox"):
        yield TOX, dirs
    if (
        name in ("npm", "yarn", "pnpm", "bun", "npx", "pnpx", "bunx", "corepack")
        and sub not in _NODE_READ_ONLY
    ):
        yield NODE, dirs
    if name in ("pip", "pip3") or module == "pip" or (name in ("uv", "rye") and sub == "pip"):
        args = list(cmd.words[1:])
        local = [w for w in positionals(args, ("-r", "-c", "-i", "-t", "--target")) if w.text not in ("pip",)]
        edits = [args[i + 1] for i, w in enumerate(args[:-1]) if w.text in ("-e", "--editable")]
        projects = [
            p.path for w in local + edits for p in r.places(Word(w.text.removeprefix("file:"))) if p.path
        ]
        yield PY_PROJECT, projects
    if module == "build" or (name in _PY_PROJECT_TOOLS and sub not in ("--version", "version", "help", "")):
        yield PY_PROJECT, dirs
    if name == "cargo" and sub not in ("--version", "-V", "version", "search", "help", "login", "fmt", ""):
        yield CARGO, dirs
    if name == "go" and sub in ("run", "test", "generate", "build", "install", "vet"):
        yield GO, dirs + _go_packages(r)
    if any(a.name in _BUILDS for a in r.verdicts):
        yield BUILD, dirs
    if name in ("jupyter", "ipython", "papermill", "voila") or module in (
        "jupyter",
        "nbconvert",
        "papermill",
    ):
        yield JUPYTER, dirs
    if (name == "git" and sub in _GIT_HOOKED) or name in ("pre-commit", "lefthook", "husky", "overcommit"):
        yield GIT_HOOKS, dirs


def _go_packages(r: Recorder) -> list[str]:
    """``go run .``, ``go test ./...``, ``go run x.go``: the folders of the packages named."""
    out: list[str] = []
    for w in positionals(list(r.cmd.words[2:])):
        text = w.text.removesuffix("/...")
        if text.endswith(".go"):
            text = posixpath.dirname(text) or "."
        if text.startswith((".", "/")):
            out.extend(p.path for p in r.places(Word(text, w.dynamic)) if p.path)
    return out


def _run_dirs(r: Recorder) -> list[str]:
    """The folders a tool may run in: its cwds (after ``-C``), and those its options name."""
    out = [r.scope.real(c) for c in r.cwds if c is not None]
    args = list(r.cmd.words[1:])
    for i, w in enumerate(args):
        option, eq, value = w.text.partition("=")
        if option not in _DIR_OPTIONS:
            continue
        target = Word(value, w.dynamic) if eq else (args[i + 1] if i + 1 < len(args) else None)
        if target is None:
            continue
        for p in r.places(target):
            if p.path:
                out.append(posixpath.dirname(p.path) if option == "--manifest-path" else p.path)
    return list(dict.fromkeys(out))


def _ancestors(path: str) -> Iterator[str]:
    while True:
        yield path
        parent = posixpath.dirname(path)
        if parent == path:
            return
        path = parent


def _loads(loader: Loader, dirs: Sequence[str], known: Written, scope: Scope) -> Iterator[str]:
    work = scope.real_workdir
    for folder in dirs:
        for above in _ancestors(folder):
            entry = known.holding(above)
            if entry is not None:
                yield f"{loader.what} files in {_shown(entry, scope)}, which this job wrote whole"
                continue
            for name in loader.here:
                inner, _, base = name.rpartition("/")
                for q in known.in_folder(posixpath.join(above, inner) if inner else above):
                    if fnmatch.fnmatchcase(posixpath.basename(q), base):
                        yield f"{loader.what} {_shown(q, scope)}, which this job wrote"
        if not loader.below:
            continue
        root = work if folder == work or folder.startswith(work.rstrip("/") + "/") else folder
        if known.holding(root) is not None:
            continue  # said above
        for q in known.below(root):
            rel = posixpath.relpath(q, root)
            if any(_matches(rel, n) for n in loader.below):
                yield f"{loader.what} {_shown(q, scope)}, which this job wrote"
            elif q in known.trees:
                yield f"{loader.what} what {_shown(q, scope)} holds, which this job wrote whole"


def _modules(r: Recorder) -> Iterator[tuple[str, list[str]]]:
    """Python modules a command imports by name from the folder it runs in: ``python -m mod``, the imports
    of ``python -c``, ``pytest -p plugin``."""
    cmd = r.cmd
    where = [c for c in r.cwds if c is not None]
    names: list[str] = []
    if _is_python(cmd.name):
        module = _python_module(cmd)
        if module:
            names.append(module)
        words = [w.text for w in cmd.words[1:]]
        for i, t in enumerate(words):
            if t == "-c" and i + 1 < len(words):
                names.extend(_IMPORT.findall(words[i + 1]))
            elif t.startswith("-c") and len(t) > 2:
                names.extend(_IMPORT.findall(t[2:]))
        for red in cmd.redirects:
            if red.op in ("<<", "<<-", "<<<"):
                names.extend(_IMPORT.findall(red.body or red.target.text))
    if cmd.name in ("pytest", "py.test") or _python_module(cmd) in ("pytest", "py.test"):
        args = [w.text for w in cmd.words[1:]]
        for i, t in enumerate(args):
            if t == "-p" and i + 1 < len(args):
                names.append(args[i + 1])
            elif t.startswith("-p") and len(t) > 2:
                names.append(t[2:])
    for name in names:
        if name and not name.startswith("no:"):
            yield name.replace(".", "/"), where


def _pushes_ci(r: Recorder, known: Written) -> list[str]:
    """``git push`` after the job wrote a CI file (or wrote its folder whole): the forge would run it."""
    if r.cmd.name != "git" or _sub(r.cmd)[0] != "push":
        return []
    work = r.scope.real_workdir
    named = [p for p in sorted(known.every) if is_ci(p, r.scope)]
    whole = known.holding(posixpath.join(work, ".github/workflows/ci.yml"))
    if whole is not None and whole not in named:
        named.append(whole)
    return [
        f"pushes the branch with {_shown(p, r.scope)}, a CI file this job wrote, which the forge runs"
        for p in named
    ]
