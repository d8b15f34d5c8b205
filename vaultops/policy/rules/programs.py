"""Rules for programs that run code: interpreters, shells, package managers, build tools, test runners,
containers.  A script runs like any program in the worktree; inline code is read for what it does."""

from __future__ import annotations

import re
from collections.abc import Iterable

from vaultops.policy.bash import SimpleCommand, Word
from vaultops.policy.hosts import binds_loopback
from vaultops.policy.judge import Handler, Judge, flag_value, has, names, positionals, register
from vaultops.policy.runners import runner_options
from vaultops.policy.sources import foreign_code, registry_options

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

_PY_MODULES_BUILD = names(
    "pip venv virtualenv build mypy ruff black isort flake8 pylint pyright coverage compileall "
    "py_compile ensurepip pre_commit setuptools wheel pip_audit bandit pydoc"
)

_PY_MODULES_READ = names("json.tool site sysconfig platform this tokenize pydoc timeit")

_INTERPRETER_VALUES = names("-W -X -I -M -r --require --import --loader --inspect-port -C --title --env-file")


def _interpreter(j: Judge, args: list[Word]) -> None:
    """python/node/ruby/perl/…: a script file runs like any local program; inline code (``-c``, ``-e``, a
    here-document) is read for what it does; ``-m pytest`` and friends are the tools they name."""
    name = j.cmd.name
    language = _INTERPRETERS.get(name) or _INTERPRETERS.get(re.sub(r"[\d.]+$", "", name), "script")
    if len(args) == 1 and args[0].text in ("-V", "--version", "-v"):
        j.add("read", "prints its version")
        return
    if name in ("deno", "bun") and _runtime_remote(j, args):
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
        value = t.partition("=")[2] if "=" in t else (args[i + 1].text if i + 1 < len(args) else "")
        if t.split("=", 1)[0] in _INTERPRETER_VALUES and re.match(r"^(?:https?|data|jsr|npm):", value):
            j.add(
                "unknown", f"{name} {t.split('=', 1)[0]} {value[:60]}: loads code from outside the worktree"
            )
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


_RUNTIME_SUBS_WITH_SPECS = names("run install i add cache compile info x create bundle vendor")


def _runtime_remote(j: Judge, args: list[Word]) -> bool:
    """``deno run -A https://…``, ``deno install jsr:…``, ``bun add github:…``: code from outside the
    worktree and the lock file, run or installed at once; ``-g``/``upgrade`` install for the user."""
    sub = args[0].text if args and not args[0].text.startswith("-") else ""
    if sub == "upgrade" or (sub in ("install", "i", "add") and has(args, "-g", "--global")):
        j.add("system_change", f"{j.cmd.name} {sub} installs a program for the user")
        return True
    if sub not in _RUNTIME_SUBS_WITH_SPECS and sub:
        return False
    values = [
        Word(w.text.split("=", 1)[1], w.dynamic) for w in args if w.text.startswith("-") and "=" in w.text
    ]
    words = [w for w in args[1 if sub else 0 :] if not w.text.startswith("-")] + values
    if sub == "create" and words:
        j.add("unknown", f"{j.cmd.name} create {words[0].text}: fetches and runs a template")
        return True
    return foreign_code(j, words, npm=j.cmd.name == "bun" and sub in ("add", "install", "i"))


def _runtime_subcommand(j: Judge, args: list[Word], language: str) -> bool:
    """deno/bun subcommands; False when the first word is a script (or ``run``/``task``) to run."""
    sub = args[0].text
    if sub == "test":
        j.add("run_tests", "runs the tests")
    elif sub in names("fmt lint check install add remove build compile cache info i"):
        j.add("run_build", f"{j.cmd.name} {sub}")
    elif sub == "publish":
        j.add("deploy", "publishes a package")
    elif sub == "x":
        _wrapper_inner(j, args[1:], fetched=True)
    elif sub == "eval":
        j.inline_code(args[1].text if len(args) > 1 else "", language)
    else:
        return False
    return True


def _python_module(j: Judge, module: str, rest: list[Word]) -> None:
    top = module.split(".")[0]
    if top in _PY_MODULES_TESTS:
        runner_options(j, rest, pytest=top == "pytest")
        j.add("run_tests", f"runs the tests ({module})")
    elif module == "pip" or top == "pip":
        _pip(j, rest)
    elif top == "twine" and rest and rest[0].text == "upload":
        j.add("deploy", "uploads a package to a registry")
    elif top in _PY_MODULES_BUILD:
        j.add("run_build", f"python -m {module}")
    elif module in _PY_MODULES_READ:
        j.add("read", f"python -m {module}")
    elif module in ("http.server", "SimpleHTTPServer", "CGIHTTPServer", "http"):
        _http_server(j, rest)
    elif top in ("smtplib", "smtpd"):
        j.add("message_external", "sends mail")
    else:
        j.add("run_local", f"runs the module {module}")


def _http_server(j: Judge, rest: list[Word]) -> None:
    """``python -m http.server`` binds every interface unless ``--bind`` says otherwise, and serves its
    ``--directory`` (the worktree by default) to whoever connects."""
    folder = flag_value(rest, "-d", "--directory")
    if folder is not None:
        j.read(folder)
    bind = flag_value(rest, "-b", "--bind")
    if not binds_loopback(bind.text if bind is not None else None):
        shown = bind.text if bind is not None else "every interface"
        j.add("network_write", f"serves files to the network ({shown}), not only to this machine")
    else:
        j.add("run_local", "serves files over HTTP to this machine")


def _django(j: Judge, rest: list[str]) -> None:
    sub = rest[0] if rest else ""
    if sub == "test":
        j.add("run_tests", "runs the tests")
    elif sub in ("migrate", "flush", "sqlflush", "dbshell", "loaddata", "createsuperuser", "changepassword"):
        j.add("database", f"manage.py {sub} changes the database")


def _manage_py(j: Judge, args: list[Word]) -> None:
    _django(j, [w.text for w in args])
    j.run_file(j.cmd.words[0])


# What a package fetched and run at once (npx, uvx, pnpm dlx) may be: a known build or test tool.
_FETCHED_TOOLS = frozenset({"run_build", "run_tests"})


def _wrapper_inner(j: Judge, inner: list[Word], fetched: bool = False) -> None:
    """npx X, uvx X, poetry run X, bundle exec X: judge X as the command.

    ``fetched``: X is a package fetched from a registry and run (npx, bunx, dlx, uvx, pipx run), whatever
    a program of that name would do here: only a build or test tool the policy knows may run so; a
    specifier naming a repository, a URL or a file is code from outside."""
    if not inner:
        j.add("read", "runs nothing")
        return
    if any(c.isspace() for c in inner[0].text):  # a command string, not a program: a shell runs it
        j.add("unknown", f"runs the command string {inner[0].text!r}, which a shell would read")
        return
    if fetched and foreign_code(j, inner[:1], npm=True):
        return
    first = inner[0]
    if fetched and re.match(r"^@?[^@]+@", first.text):  # eslint@8, @scope/pkg@1: the package's own name
        first = Word(re.sub(r"^(@?[^@]+)@.*$", r"\1", first.text), first.dynamic)
        inner = [first, *inner[1:]]
    sub = SimpleCommand(tuple(inner), (), (), j.cmd.cwds, j.cmd.via, j.cmd.piped_in, j.cmd.stdin_args)
    inner_judge = Judge(sub, j.scope, "/")
    inner_judge.cwds = j.cwds
    actions = inner_judge.judge()
    if fetched and not all(a.name in _FETCHED_TOOLS for a in actions):
        j.add(
            "unknown",
            f"fetches and runs the package `{inner[0].text}`, code from a registry, not a tool here",
        )
        return
    if all(a.name == "unknown" for a in actions) and "/" not in inner[0].text:
        j.add("unknown", f"fetches and runs the package `{inner[0].text}`, which the policy does not know")
        return
    j.actions.extend(actions)


TEST_WORDS = re.compile(r"^(test|tests|check|spec|specs|unit|e2e|integration|test[:_-].*|.*[:_-]test)$")

DEPLOY_WORDS = re.compile(r"^(deploy|release|publish|upload|ship|push)([:_-].*)?$")


_NPM_VALUES = names(
    "--prefix -C --dir --filter -w --workspace --registry -p --package --location -L --cwd --tag --otp"
)
# npm options that name a program to run, settings to load, or where a package's scripts run
_NPM_CODE_OPTIONS = names(
    "--script-shell --shell --node-options --userconfig --globalconfig --init-module --onload-script "
    "--editor --browser --viewer --git --node-gyp --npm-path --rcfile --config --use-yarnrc --yarn-path"
)
_NPM_INSTALLS = names(
    "install i in ins inst insta instal isnt isnta isntal isntall add update up upgrade udpate "
    "install-test it install-ci-test link ln"
)
_NPM_CONFIG_WRITES = names("set delete rm unset edit fix")
_NPM_CODE_KEYS = re.compile(
    r"registry|shell|node-options|prefix|git|userconfig|globalconfig|onload|ca\b|cafile|strict-ssl|proxy|"
    r"init-module|script|ignore-scripts|npm-path|yarn-path|plugin",
    re.IGNORECASE,
)


def _npm_options(j: Judge, args: list[Word]) -> None:
    """Options of npm, yarn, pnpm and bun that run a program, load settings, change the registry or the
    folder the scripts run in."""
    for w in args:
        option = w.text.split("=", 1)[0]
        if option in _NPM_CODE_OPTIONS:
            j.add("unknown", f"{j.cmd.name} {option} names a program or settings of its own")
        elif option.startswith("--@") and option.endswith(":registry"):
            j.add("unknown", f"{j.cmd.name} {option}: packages from a registry the person did not choose")
    registry_options(j, args, ("--registry",))
    j.with_cwd(flag_value(args, "--prefix", "-C", "--dir", "--cwd"))


def _npm_config(j: Judge, action: str, keys: list[Word], args: list[Word]) -> None:
    """``npm config set registry …``: the user's ~/.npmrc (or the project's) now sends every install there."""
    project = (
        any(w.text in ("--location=project", "--project") for w in args)
        or (flag_value(args, "--location", "-L") or Word("")).text == "project"
    )
    if action not in _NPM_CONFIG_WRITES:
        j.add("read", f"{j.cmd.name} config {action}".strip())
        return
    if project:
        j.write(Word(".npmrc"), f"{j.cmd.name} config {action} writes")
    else:
        j.add(
            "modify_outside_worktree", f"{j.cmd.name} config {action} writes the user's settings (~/.npmrc)"
        )
    if action in ("edit", "fix") or any(_NPM_CODE_KEYS.search(k.text) for k in keys[:1]) or not keys:
        j.add("unknown", f"{j.cmd.name} config {action} changes where packages come from or what runs them")


def _npm(j: Judge, args: list[Word]) -> None:
    name = j.cmd.name
    _npm_options(j, args)
    pos = positionals(args, _NPM_VALUES)
    sub = pos[0].text if pos else ""
    rest = pos[1:]
    if has(args, "-g", "--global") or any(a.text == "--location=global" for a in args) or sub == "global":
        j.add("system_change", "installs or removes packages globally")
        return
    if sub in ("config", "c") or (sub in ("set", "get") and name in ("npm", "pnpm")):
        action, keys = (rest[0].text, rest[1:]) if sub in ("config", "c") and rest else (sub, rest)
        _npm_config(j, action, keys, args)
        return
    if sub in ("init", "create", "innit") and (rest or sub == "create"):
        j.add(
            "unknown", f"{name} {sub} {rest[0].text if rest else ''}: fetches and runs an initializer package"
        )
        return
    if sub in _NPM_INSTALLS:
        foreign_code(j, rest, npm=True)
    if sub == "pkg" and rest and rest[0].text == "set":
        for w in rest[1:]:
            if w.text.startswith(("scripts", "bin", "config", "gypfile")) or w.dynamic:
                j.add("unknown", f"{name} pkg set {w.text.partition('=')[0]}: a script npm runs later")
    for value in (flag_value(args, "-p", "--package"),):
        if value is not None:
            foreign_code(j, [value], npm=True)
    if sub in ("test", "t", "tst") or (
        sub in ("run", "run-script") and rest and TEST_WORDS.match(rest[0].text)
    ):
        j.add("run_tests", "runs the tests")
    elif sub in ("publish", "unpublish", "deprecate", "dist-tag", "owner", "access", "team"):
        j.add("deploy", f"{name} {sub} changes a package registry")
    elif sub in ("login", "adduser", "logout", "token"):
        j.add("key_rotation", f"{name} {sub}")
    elif sub in ("run", "run-script") and rest and DEPLOY_WORDS.match(rest[0].text):
        j.add("deploy", f"runs the script {rest[0].text!r}")
    elif sub in ("exec", "x", "dlx") and (
        has(args, "-c", "--call", "--shell-mode") or any(a.text.startswith(("--call=", "-c=")) for a in args)
    ):
        j.add("unknown", f"runs a command string through {name} {sub} -c")
    elif sub in ("exec", "x", "dlx"):
        _wrapper_inner(j, rest, fetched=True)
    elif sub == "" and name in ("yarn", "pnpm", "bun"):
        j.add("run_build", "installs the dependencies")
    elif name in ("yarn", "pnpm") and sub and sub not in _NPM_SUBS and not sub.startswith("-"):
        # `yarn build`, `pnpm lint`: a script from package.json
        if TEST_WORDS.match(sub):
            j.add("run_tests", "runs the tests")
        elif DEPLOY_WORDS.match(sub):
            j.add("deploy", f"runs the script {sub!r}")
        else:
            j.add("run_build", f"runs the script {sub!r}")
    else:
        j.add("run_build", f"{name} {sub}".strip())


_NPM_SUBS = names(
    "install i ci add remove rm uninstall update upgrade up run run-script exec build start ls list "
    "outdated audit why init create pack version view info link unlink dedupe prune config cache help "
    "doctor fund explain query rebuild restart stop prefix root bin search set get install-test it "
    "workspaces workspace import patch store env node dev format lint"
)


def _npx(j: Judge, args: list[Word]) -> None:
    pos = positionals(args, ("-p", "--package", "-c", "--call"))
    call = flag_value(args, "-c", "--call")
    if call is not None:
        j.add("unknown", "runs a command string through npx -c")
        return
    _npm_options(j, args)
    package = flag_value(args, "-p", "--package")
    if package is not None and foreign_code(j, [package], npm=True):
        return
    _wrapper_inner(j, args[args.index(pos[0]) :] if pos else [], fetched=True)


_PIP_SOURCES = frozenset(
    {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "--proxy"}
)


def _pip(j: Judge, args: list[Word]) -> None:
    pos = positionals(
        args,
        names(
            "-r --requirement -c --constraint -t --target -i --index-url --extra-index-url "
            "--prefix --root -e --editable -f --find-links --trusted-host --proxy --python"
        ),
    )
    sub = pos[0].text if pos else ""
    if sub == "config":
        _pip_config(j, [w.text for w in pos[1:]], args)
        return
    if has(args, "--break-system-packages") or flag_value(args, "--prefix", "--root") is not None:
        j.add("system_change", "installs packages into the system's Python")
        return
    target = flag_value(args, "-t", "--target")
    if target is not None:
        j.write(target, "installs into")
    source = next((a.text for a in args if a.text.split("=", 1)[0] in _PIP_SOURCES), None)
    if source is not None:
        j.add("unknown", f"installs code from a source the person did not choose ({source})")
    elif sub in ("install", "download", "wheel"):
        editable = [w for w in (flag_value(args, "-e", "--editable"),) if w is not None]
        foreign_code(j, [*pos[1:], *editable])
        for req in (flag_value(args, "-r", "--requirement"), flag_value(args, "-c", "--constraint")):
            if req is not None and foreign_code(j, [req]) is False:
                j.read(req)
    j.add("run_build", f"pip {sub}".strip())


def _pip_config(j: Judge, rest: list[str], args: list[Word]) -> None:
    """``pip config set global.index-url …`` writes pip's user settings: later installs come from there."""
    action = rest[0] if rest else ""
    if action not in ("set", "unset", "edit"):
        j.add("read", f"pip config {action}".strip())
        return
    if has(args, "--site"):
        j.add("unknown", f"pip config {action} --site changes where this environment's packages come from")
    else:
        j.add("modify_outside_worktree", f"pip config {action} writes pip's user or global settings")


# Options of uv, poetry, pdm, hatch, … that point installs at another index or at code outside it.
_PY_TOOL_SOURCES = names(
    "--index --index-url --extra-index-url --default-index --find-links -f -i --trusted-host --source "
    "--extra-index --index-strategy --keyring-provider --config-file --config-setting"
)
_PY_TOOL_GLOBAL = names("self")


def _python_tool(j: Judge, args: list[Word]) -> None:
    """uv, poetry, pdm, hatch, pipenv, conda, rye: package managers with a `run X` that runs X."""
    pos = positionals(
        args,
        names(
            "-p --python --directory -C --project -n --name --with --from -e --env --index --index-url "
            "--extra-index-url --default-index --find-links -f -i -c --channel"
        ),
    )
    sub = pos[0].text if pos else ""
    name = j.cmd.name
    j.with_cwd(flag_value(args, "--directory", "--project", "-C"))
    if sub != "pip":
        registry_options(j, args, _PY_TOOL_SOURCES)
    if name in ("conda", "mamba", "micromamba", "pixi"):  # a channel given by URL or path is not a registry
        channels = [args[i + 1] for i, w in enumerate(args[:-1]) if w.text in ("-c", "--channel")]
        channels += [Word(w.text.partition("=")[2]) for w in args if w.text.startswith("--channel=")]
        foreign_code(j, channels)
    for value in (flag_value(args, "--with", "--from", "--with-editable"),):
        if value is not None:
            foreign_code(j, [value])
    if sub == "run":
        idx = args.index(pos[0])
        inner = positionals(
            args[idx + 1 :], ("--with", "--from", "-p", "--python", "-e", "--env", "-n", "--name")
        )
        start = args[idx + 1 :].index(inner[0]) if inner else 0
        _wrapper_inner(j, args[idx + 1 :][start:] if inner else [])
    elif sub == "pip":
        _pip(j, args[args.index(pos[0]) + 1 :])
    elif sub in ("publish", "upload"):
        j.add("deploy", f"{name} {sub} uploads a package")
    elif sub == "tool" and len(pos) > 1 and pos[1].text in ("run", "uvx"):
        _wrapper_inner(j, args[args.index(pos[1]) + 1 :], fetched=True)
    elif (sub == "tool" and len(pos) > 1 and pos[1].text in ("install", "upgrade")) or sub in _PY_TOOL_GLOBAL:
        j.add("system_change", f"{name} {' '.join(w.text for w in pos[:2])} installs a program for the user")
    elif sub in ("add", "install", "sync", "lock", "update", "remove") and name in (
        "uv",
        "poetry",
        "pdm",
        "rye",
        "pipenv",
        "pixi",
    ):
        foreign_code(j, pos[1:])
        j.add("run_build", f"{name} {sub}")
    elif sub in ("source", "config") and name == "poetry":
        j.add("unknown", f"poetry {sub} changes where packages come from")
    elif sub == "test":
        j.add("run_tests", "runs the tests")
    else:
        j.add("run_build", f"{name} {sub}".strip())


def _uvx(j: Judge, args: list[Word]) -> None:
    registry_options(j, args, _PY_TOOL_SOURCES)
    inner = positionals(args, _PY_TOOL_SOURCES | names("--with --from -p --python"))
    source = flag_value(args, "--from", "--with")
    if source is not None and foreign_code(j, [source]):
        return
    _wrapper_inner(j, args[args.index(inner[0]) :] if inner else [], fetched=True)


def _pipx(j: Judge, args: list[Word]) -> None:
    pos = positionals(args, ("--spec", "--python", "--index-url", "-i", "--pip-args", "--suffix"))
    sub = pos[0].text if pos else ""
    registry_options(j, args, _PY_TOOL_SOURCES | {"--pip-args"})
    spec = flag_value(args, "--spec")
    if spec is not None and foreign_code(j, [spec]):
        return
    if sub == "run":
        _wrapper_inner(j, args[args.index(pos[0]) + 1 :] if len(pos) > 1 else [], fetched=True)
    elif sub in ("list", "environment", "--version"):
        j.add("read", f"pipx {sub}")
    else:
        foreign_code(j, pos[1:])
        j.add("system_change", f"pipx {sub} installs or removes a program for the user")


def _subcommand_tool(
    tests: Iterable[str], deploys: Iterable[str] = (), runs: Iterable[str] = (), reads: Iterable[str] = ()
) -> Handler:
    tests, deploys, runs, reads = frozenset(tests), frozenset(deploys), frozenset(runs), frozenset(reads)

    def rule(j: Judge, args: list[Word]) -> None:
        pos = positionals(args, ("-C", "--manifest-path", "-p", "--package", "--project", "-f", "--file"))
        sub = pos[0].text if pos else ""
        if sub in tests:
            j.add("run_tests", "runs the tests")
        elif sub in deploys:
            j.add("deploy", f"{j.cmd.name} {sub} publishes or deploys")
        elif sub in runs:
            j.add("run_local", f"{j.cmd.name} {sub}")
        elif sub in reads or (has(args, "--version", "-V") and not sub):
            j.add("read", f"{j.cmd.name} {sub}".strip())
        else:
            j.add("run_build", f"{j.cmd.name} {sub}".strip())

    return rule


def _build_tool(j: Judge, args: list[Word]) -> None:
    goals = [
        w.text for w in positionals(args, ("-p", "-f", "--file", "-D", "-P", "-pl", "-x", "--exclude-task"))
    ]
    if any(DEPLOY_WORDS.match(g) or g.startswith(("publish", "deploy")) for g in goals):
        j.add("deploy", f"{j.cmd.name} {' '.join(goals)}")
    elif any(TEST_WORDS.match(g) or g in ("verify", "connectedCheck") for g in goals):
        j.add("run_tests", "runs the tests")
    else:
        j.add("run_build", f"{j.cmd.name} {' '.join(goals)}".strip())


def _compiler(j: Judge, args: list[Word]) -> None:
    out = flag_value(args, "-o")
    if out is not None:
        j.write(out)
    j.add("run_build", "compiles")


def _run_build(j: Judge, args: list[Word]) -> None:
    j.add("run_build", j.cmd.name)


def _bundle(j: Judge, args: list[Word]) -> None:
    pos = positionals(args)
    if pos and pos[0].text == "exec":
        _wrapper_inner(j, args[args.index(pos[0]) + 1 :])
    else:
        j.add("run_build", "bundle")


def _rake(j: Judge, args: list[Word]) -> None:
    tasks = [w.text for w in positionals(args)]
    if any(t.startswith("db:") for t in tasks):
        j.add("database", f"{j.cmd.name} {' '.join(tasks)} changes the database")
    elif any(TEST_WORDS.match(t) for t in tasks):
        j.add("run_tests", "runs the tests")
    elif j.cmd.name == "rails" and tasks and tasks[0] in ("server", "s", "console", "c", "runner", "r"):
        j.add("run_local", f"rails {tasks[0]}")
    elif any(DEPLOY_WORDS.match(t) for t in tasks):
        j.add("deploy", f"{j.cmd.name} {' '.join(tasks)}")
    else:
        j.add("run_build", f"{j.cmd.name} {' '.join(tasks)}".strip())


def _docker(j: Judge, args: list[Word]) -> None:
    pos = positionals(
        args,
        names("-H --host --context -c --config -f --file -p --project-name --log-level --env-file"),
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
    elif sub in names(
        "ps images image logs inspect version info history top stats search events port diff ls"
    ):
        j.add("read", f"{j.cmd.name} {sub}")
    elif sub in ("push",):
        j.add("deploy", "pushes an image to a registry")
    elif sub in ("login", "logout"):
        j.add("key_rotation", f"{j.cmd.name} {sub}")
    else:
        j.add("system_change", f"{j.cmd.name} {sub} runs or changes containers (they can reach the host)")


def _shell(j: Judge, args: list[Word]) -> None:
    """A shell left after the splitter took `-c '…'` and here-documents: the wrapper, or a script it runs."""
    if (
        any(red.op in ("<<", "<<-", "<<<") for red in j.cmd.redirects)
        or has(args, "-c")
        or any(re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", a.text) for a in args)
    ):
        j.add("read", "a shell running the commands judged on their own")
        return
    if has(args, "--version") and len(args) == 1:
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
        j.read(args[0])  # `set -a; source .env`: its values land in the environment, secrets included
        j.run_file(args[0])
    else:
        j.add("read", "source")


register(
    " ".join(_INTERPRETERS) + " python3.8 python3.9 python3.10 python3.11 python3.12 python3.13 "
    "python3.14 python2.7",
    _interpreter,
)
register("sh bash zsh dash ksh mksh ash fish", _shell)
register("source .", _source)
register("manage.py", _manage_py)
register("npm yarn pnpm", _npm)
register("npx pnpx bunx", _npx)
register("pip pip3 pip2", _pip)
register("uv poetry pdm hatch pipenv conda mamba micromamba rye pixi", _python_tool)
register("uvx", _uvx)
register("pipx", _pipx)
register(
    "cargo", _subcommand_tool(("test", "nextest", "bench"), ("publish", "yank", "owner", "login"), ("run",))
)
register("go", _subcommand_tool(("test",), (), ("run",), ("version", "env", "list", "doc")))
register("dotnet", _subcommand_tool(("test",), ("nuget",), ("run",)))
register("swift", _subcommand_tool(("test",), (), ("run",)))
register("mix", _subcommand_tool(("test",), ("hex.publish",), ("run",)))
register("stack cabal", _subcommand_tool(("test",), ("upload",), ("run", "exec")))
register(
    "xcodebuild",
    lambda j, a: j.add("run_tests" if any(w.text == "test" for w in a) else "run_build", "xcodebuild"),
)
register("mvn mvnw gradle gradlew ant sbt lein bazel bazelisk buck", _build_tool)
register("gcc g++ cc c++ clang clang++ rustc javac kotlinc swiftc zig tcc ld as nasm ar", _compiler)
register(
    "cmake ninja meson scons tsc ruff black isort mypy pyright flake8 pylint bandit eslint prettier "
    "stylelint rustfmt gofmt goimports golangci-lint clang-format clang-tidy shellcheck shfmt hadolint "
    "yamllint markdownlint rubocop swiftlint swiftformat ktlint pre-commit biome vite webpack rollup "
    "esbuild parcel turbo nx lerna composer gem opam dune rebar3 pod carthage flutter dart "
    "protoc buf sqlc air nodemon tailwindcss postcss sass",
    _run_build,
)
register("bundle", _bundle)
register("rake rails", _rake)
register("docker podman nerdctl docker-compose podman-compose", _docker)
