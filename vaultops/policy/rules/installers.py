"""Installers of programs and toolchains that fetch code and run it: cargo, go, gem, composer.

``cargo install --git …``, ``go run example.com/x@latest``, ``go install …@…`` and ``gem install`` bring code
from outside the worktree and run it (a build script, a native extension, the program itself): ``unknown``.
A program installed for the user (``cargo install``, ``go install``) lands outside the worktree:
``system_change``.  Everything else of these tools is judged as before (``programs._subcommand_tool``).
"""

from __future__ import annotations

import re

from vaultops.policy.bash import Word
from vaultops.policy.judge import Judge, flag_value, has, names, positionals, register
from vaultops.policy.rules.programs import _build_tool, _bundle, _subcommand_tool
from vaultops.policy.sources import foreign_code, registry_options

# cargo's own subcommands and the common plugins; any other `cargo X` runs the program cargo-X from PATH
_CARGO_SUBS = names(
    "build b check c clean doc d new init add remove rm run r test t bench update search publish install "
    "uninstall fmt clippy tree vendor fetch fix generate-lockfile locate-project metadata pkgid "
    "verify-project version yank owner login logout package help report rustc rustdoc config info nextest "
    "llvm-cov audit deny machete udeps outdated expand watch binstall --version -V --help -h --list"
)
_cargo_rest = _subcommand_tool(("test", "nextest", "bench"), ("publish", "yank", "owner", "login"), ("run",))
_go_rest = _subcommand_tool(("test",), (), ("run",), ("version", "env", "list", "doc"))
_CARGO_SOURCES = ("--git", "--registry", "--index", "--branch", "--tag", "--rev")
# a Go package path that names a module elsewhere: a host with a dot first (example.com/x, golang.org/x/…)
_GO_REMOTE = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)+(/|@|$)", re.IGNORECASE)


_CARGO_VALUES = names(
    "-C --manifest-path -p --package --config -Z --git --registry --index --branch --tag --rev --path --root "
    "--target-dir --features -F -j"
)


def _cargo(j: Judge, args: list[Word]) -> None:
    pos = positionals(args, _CARGO_VALUES)
    sub = pos[0].text if pos else ""
    if flag_value(args, "--config") is not None or any(w.text.startswith("--config=") for w in args):
        j.add("unknown", "cargo --config sets options that may name programs to run")
    if sub == "install":
        if not registry_options(j, args, _CARGO_SOURCES):
            path = flag_value(args, "--path")
            if path is not None:
                foreign_code(j, [path])
        root = flag_value(args, "--root")
        if root is not None:
            j.write(root, "installs into")
        else:
            j.add("system_change", "cargo install puts a program into ~/.cargo/bin, for the user")
        return
    if sub and sub not in _CARGO_SUBS:
        j.add("unknown", f"`cargo {sub}` runs the program cargo-{sub}, which the policy does not know")
        return
    if sub == "binstall":
        j.add("unknown", "cargo binstall downloads a prebuilt program and installs it for the user")
        return
    if sub == "add":
        registry_options(j, args, _CARGO_SOURCES)
        foreign_code(j, pos[1:])
    _cargo_rest(j, args)


def _go(j: Judge, args: list[Word]) -> None:
    pos = positionals(args, names("-C -o -modfile -tags -ldflags -gcflags -p -exec -toolexec -overlay -pgo"))
    sub = pos[0].text if pos else ""
    for flag in ("-exec", "-toolexec"):
        if flag_value(args, flag, "-" + flag) is not None or any(w.text.startswith(f"{flag}=") for w in args):
            j.add("unknown", f"go {flag} runs a program of its own")
    j.with_cwd(flag_value(args, "-C"))
    packages = [w for w in pos[1:] if not w.text.endswith(".go")]
    remote = [
        w for w in packages if "@" in w.text or (_GO_REMOTE.match(w.text) and sub in ("run", "install"))
    ]
    if sub in ("run", "install", "generate", "tool") and remote:
        for w in remote:
            j.add(
                "unknown",
                f"go {sub} {w.text}: fetches a module from outside the worktree and runs or builds it",
            )
        if sub == "install":
            j.add("system_change", "go install puts a program into GOBIN, for the user")
        return
    if sub == "install":
        j.add("system_change", "go install puts a program into GOBIN, for the user")
        return
    if sub == "env" and has(args, "-w", "-u"):
        j.add("modify_outside_worktree", "go env -w writes Go's user settings (a proxy, flags, a toolchain)")
        return
    _go_rest(j, args)


_GEM_READS = names("list search query contents dependency environment help info outdated specification "
                   "which open lock check --version -v")  # fmt: skip


def _gem(j: Judge, args: list[Word]) -> None:
    pos = positionals(args, names("-v --version -s --source -i --install-dir -n --bindir -P --trust-policy"))
    sub = pos[0].text if pos else ""
    if sub in _GEM_READS or not sub:
        j.add("read", f"gem {sub}".strip())
    elif sub == "build":
        j.add("run_build", "gem build")
    elif sub in ("sources", "source"):
        if has(args, "-a", "--add", "-r", "--remove", "-c", "--clear-all"):
            j.add("unknown", "gem sources changes where gems come from")
        else:
            j.add("read", "gem sources")
    elif sub in ("push", "yank", "owner", "signin", "signout"):
        j.add("deploy", f"gem {sub} changes a package registry")
    else:
        j.add(
            "unknown", f"gem {sub}: installs gems from a registry, whose native extensions build and run code"
        )


def _composer(j: Judge, args: list[Word]) -> None:
    pos = positionals(args, names("-d --working-dir --repository --repository-url"))
    sub = pos[0].text if pos else ""
    j.with_cwd(flag_value(args, "-d", "--working-dir"))
    registry_options(j, args, ("--repository", "--repository-url"))
    if sub == "global":
        j.add("system_change", "composer global installs for the user")
    elif sub in ("create-project", "exec") or (sub == "config" and len(pos) > 2):
        j.add("unknown", f"composer {sub} runs code or changes where packages come from")
    else:
        foreign_code(j, pos[1:])
        j.add("run_build", f"composer {sub}".strip())


def _dotnet(j: Judge, args: list[Word]) -> None:
    """dotnet: a package source given on the command line, a tool installed for the user."""
    pos = positionals(
        args, names("-s --source --add-source -c --configuration -f --framework -o --output -v")
    )
    words = [w.text for w in pos]
    registry_options(j, args, ("-s", "--source", "--add-source", "--configfile"))
    if words[:2] == ["tool", "install"] or words[:2] == ["tool", "update"]:
        j.add(
            "system_change" if has(args, "-g", "--global", "--tool-path") else "run_build",
            f"dotnet {' '.join(words[:2])}",
        )
        if has(args, "-g", "--global", "--tool-path"):
            return
    if words[:3] == ["nuget", "add", "source"] or words[:2] == ["new", "install"]:
        j.add("unknown", f"dotnet {' '.join(words[:3])} adds where packages or templates come from")
        return
    _dotnet_rest(j, args)


_dotnet_rest = _subcommand_tool(("test",), ("nuget",), ("run",))
_JVM_CODE = names(
    "-I --init-script -s --settings -gs --global-settings -c --build-file --settings-file -t --toolchains"
)


def _jvm_build(j: Judge, args: list[Word]) -> None:
    """gradle/mvn: an init script or settings file names code and repositories; one from outside the
    worktree (or a URL) is unknown."""
    for i, w in enumerate(args):
        option, eq, value = w.text.partition("=")
        if option in _JVM_CODE:
            target = Word(value, w.dynamic) if eq else (args[i + 1] if i + 1 < len(args) else None)
            if target is not None and (
                "://" in target.text or any(p.where != "inside" for p in j.places(target))
            ):
                j.add(
                    "unknown", f"{j.cmd.name} {option} {target.text}: build code or repositories from outside"
                )
        elif option.startswith(("-Dmaven.repo", "-DaltDeploymentRepository", "-Dgradle.user.home")):
            j.add("unknown", f"{j.cmd.name} {option}: a repository the person did not choose")
    _build_tool(j, args)


def _bundler(j: Judge, args: list[Word]) -> None:
    """bundle config set (a mirror, a source), bundle add --git/--source: where gems come from."""
    pos = positionals(args)
    sub = pos[0].text if pos else ""
    if sub == "config" and len(pos) > 1 and pos[1].text in ("set", "unset"):
        if has(args, "--global"):
            j.add("modify_outside_worktree", "bundle config --global writes the user's ~/.bundle/config")
        j.add("unknown", "bundle config set changes where gems come from or how they build")
        return
    if sub in ("add", "install", "update"):
        registry_options(j, args, ("--git", "--github", "--source", "--path"))
    _bundle(j, args)


register("cargo", _cargo)
register("dotnet", _dotnet)
register("mvn mvnw gradle gradlew", _jvm_build)
register("bundle", _bundler)
register("go", _go)
register("gem", _gem)
register("composer", _composer)
