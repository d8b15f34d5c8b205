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
from vaultops.policy.rules.programs import _subcommand_tool
from vaultops.policy.sources import foreign_code, registry_options

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


register("cargo", _cargo)
register("go", _go)
register("gem", _gem)
register("composer", _composer)
