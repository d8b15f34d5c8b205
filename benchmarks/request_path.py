"""One request's path through vaultops's code: how many modules and packages it passes, and how often it
crosses from one package into another, from the pass that notices the request to the pushed result.

    .venv/bin/python benchmarks/request_path.py [--driver-package vaultops.engine] [--no-daemon]

A temporary vault is made from ``vault-template/`` with a bare repository as its remote, and a clone of
it is the vault vaultops works in.  One light, read-only request (``env-check``: ``which git``, run by
vaultops itself) is saved into the clone's inbox and committed there (obsidian-git's commit; with a remote
only committed requests are claimed).  Then one whole pass runs in this process, as ``vaultops tick`` runs
it (``Pass(...).run()`` of the driver package), under ``sys.setprofile`` (and ``threading.setprofile``
for the job's thread).  Every vaultops module is imported before, so the figures are about calls made on
the path, not imports.  The daemon's path is measured the same way on a fresh vault: its ``run_pass``,
the job's end, and its ``record`` of the result (after the ``warm()`` its start does).  Each path is
measured in a fresh process, cold as ``vaultops tick`` is.

From the 'call' and 'return' events of frames whose module is inside ``vaultops``:

- modules: distinct vaultops modules with code executed;
- packages: distinct packages, the first name under ``vaultops`` (``vaultops.sync``); a top-level module
  (``vaultops.vault``) is its own package;
- crossings: calls whose caller (the frame below, also in vaultops) is in another package than the callee;
- returns into the driver: returns from a frame of another package to a caller in the driver package.

Each is also given distinct: crossings as distinct (caller function, callee function) pairs and as distinct
(caller module, callee module) pairs; returns as distinct (function returning, function returned to) pairs.

The figures are printed, then one JSON line with all of them.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import pkgutil
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

import vaultops  # noqa: E402

INBOX = "_System/COO-Inbox.md"
REQUEST = (
    "\n## REQ-path-which-git Is git installed?\n"
    "- type: env-check\n- ready: yes\nIs git installed? `which git`\n"
)
LOCAL = '[agent]\nname = "path-bench"\nhost = "path-host"\n\n[inbox]\nsettle = 0\n'
DRIVERS = ("vaultops.engine", "vaultops.pipeline")  # the package of ``Pass``: after the rename, before
DAEMONS = ("vaultops.daemon", "vaultops.daemon")  # the package of the daemon: after the rename, before
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def package_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def in_vaultops(module: str) -> bool:
    return module == "vaultops" or module.startswith("vaultops.")


def module_of(frame: FrameType | None) -> str:
    if frame is None:
        return ""
    name = frame.f_globals.get("__name__", "")
    return name if isinstance(name, str) else ""


@dataclass
class Trace:
    """The events of vaultops frames: (event, the frame's module, its caller's module)."""

    events: list[tuple[str, str, str, str, str]] = field(default_factory=list)

    def hook(self, frame: FrameType, event: str, arg: object) -> None:
        if event not in ("call", "return"):
            return
        module = module_of(frame)
        if in_vaultops(module):
            back = frame.f_back
            caller = back.f_code.co_qualname if back is not None else ""
            self.events.append((event, module, frame.f_code.co_qualname, module_of(back), caller))

    def figures(self, driver: str, also: str = "") -> dict[str, Any]:
        modules = {m for event, m, _, _, _ in self.events if event == "call"}
        crossings = 0
        edges: set[tuple[str, str, str, str]] = set()
        returns: dict[str, int] = {driver: 0, **({also: 0} if also else {})}
        distinct_returns: dict[str, set[tuple[str, str, str, str]]] = {p: set() for p in returns}
        for event, module, function, caller, calling in self.events:
            if not in_vaultops(caller) or package_of(caller) == package_of(module):
                continue
            if event == "call":
                crossings += 1
                edges.add((caller, calling, module, function))
            elif package_of(caller) in returns:
                returns[package_of(caller)] += 1
                distinct_returns[package_of(caller)].add((module, function, caller, calling))
        return {
            "modules": len(modules),
            "packages": len({package_of(m) for m in modules}),
            "crossings": crossings,
            "returns_into": returns,
            "distinct": {
                "crossings": len(edges),
                "module_crossings": len({(a, c) for a, _, c, _ in edges}),
                "returns_into": {p: len(r) for p, r in distinct_returns.items()},
            },
            "calls": sum(event == "call" for event, *_ in self.events),
            "package_list": sorted({package_of(m) for m in modules}),
        }


class profiled:
    """``sys.setprofile`` for this thread and ``threading.setprofile`` for threads started meanwhile."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def __enter__(self) -> Trace:
        threading.setprofile(self.trace.hook)
        sys.setprofile(self.trace.hook)
        return self.trace

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)


def import_all() -> None:
    """Every vaultops module, so that an import on the path is not counted as code of the path."""
    for info in pkgutil.walk_packages(vaultops.__path__, "vaultops."):
        if info.name.rsplit(".", 1)[-1] != "__main__":
            importlib.import_module(info.name)


def modules_under(package: str) -> Iterator[ModuleType]:
    root = importlib.import_module(package)
    yield root
    for info in pkgutil.walk_packages(getattr(root, "__path__", []), package + "."):
        yield importlib.import_module(info.name)


def find_class(packages: tuple[str, ...], name: str) -> tuple[str, Any]:
    """(package, class) of the class ``name`` defined in the first of ``packages`` that exists in the
    vaultops imported (only there: an installed vaultops elsewhere may have the other names)."""
    here = {f"vaultops.{info.name}" for info in pkgutil.iter_modules(vaultops.__path__)}
    for package in packages:
        if package not in here:
            continue
        modules = list(modules_under(package))
        for module in modules:
            found = getattr(module, name, None)
            if isinstance(found, type) and found.__module__ == module.__name__:
                return package, found
    raise SystemExit(f"no class {name} in any of {', '.join(packages)}")


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def vault_with_remote(root: Path) -> Path:
    """A clone of a bare remote seeded from vault-template/, with the request saved and committed."""
    seed = root / "seed"
    shutil.copytree(REPO / "vault-template", seed)
    (seed / INBOX).write_text("# COO Inbox\n", encoding="utf-8")  # not the template's example requests
    git(seed, "init", "-q")
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "start")
    branch = git(seed, "symbolic-ref", "--short", "HEAD").strip()
    remote = root / "remote.git"
    git(root, "init", "-q", "--bare", str(remote))
    git(remote, "symbolic-ref", "HEAD", f"refs/heads/{branch}")
    git(seed, "push", "-q", str(remote), f"HEAD:refs/heads/{branch}")
    clone = root / "machine"
    git(root, "clone", "-q", str(remote), str(clone))
    (clone / ".vaultops" / "local.toml").write_text(LOCAL)  # git-ignored, as in every vault
    with (clone / INBOX).open("a", encoding="utf-8") as fh:
        fh.write(REQUEST)
    git(clone, "commit", "-qam", "vault backup")  # obsidian-git's commit of the saved request
    return clone


def check_done(clone: Path, said: str = "") -> None:
    """The request's result is in the clone's inbox and on the remote: the path measured is the whole one."""
    remote = git(clone, "show", f"origin/{git(clone, 'symbolic-ref', '--short', 'HEAD').strip()}:{INBOX}")
    for text, where in (((clone / INBOX).read_text(), "the vault"), (remote, "the remote")):
        if "### Result" not in text:
            raise SystemExit(f"the request has no result in {where}:\n{text}\n{said}")


def tick_path(driver: str, pass_class: Any) -> dict[str, Any]:
    from vaultops.store.lock import vault_lock
    from vaultops.store.state import StateDB
    from vaultops.vault import Vault

    with tempfile.TemporaryDirectory() as tmp:
        clone = vault_with_remote(Path(tmp))
        vault = Vault.open(clone)
        with vault_lock(vault.state_dir, wait=vault.config.limits.lock_wait, command="vaultops tick"):
            state = StateDB(vault.state_dir / "state.db")
            try:
                with profiled(Trace()) as trace:
                    pass_class(vault, state).run(False)
            finally:
                state.close()
        git(clone, "fetch", "-q")
        check_done(clone)
    return trace.figures(driver)


def daemon_path(driver: str, daemons: tuple[str, ...]) -> dict[str, Any]:
    """The daemon's ``run_pass`` (a save's pass: the claim, the job handed to its pool), the job's end, and
    its ``record`` (the result written, committed and pushed); the set-up of ``Daemon.run`` done here."""
    from vaultops.vault import Vault

    package, daemon_class = find_class(daemons, "Daemon")
    home = sys.modules[daemon_class.__module__]
    with tempfile.TemporaryDirectory() as tmp:
        clone = vault_with_remote(Path(tmp))
        vault = Vault.open(clone)
        said = io.StringIO()  # the daemon's log lines on stderr: shown only if the path fails
        with contextlib.redirect_stderr(said):
            d = daemon_class(vault, home.DaemonLog(vault.state_dir / "logs" / "daemon.jsonl"))
        with home.vault_lock(vault.state_dir, wait=vault.config.limits.lock_wait, command="vaultops run"):
            d.state = home.StateDB(vault.state_dir / "state.db")
            d.writer = home.NoteWriter(vault)
            d.publisher = home.Publisher.open(vault)
            d.jobs = home.ThreadPoolExecutor(max_workers=vault.config.limits.max_concurrent)
            warm = getattr(home, "warm", None)
            if callable(warm):  # as the daemon's start does, before its first pass
                warm()
            try:
                with profiled(Trace()) as trace:
                    d.run_pass("save")
                    done = d.inbox.get(timeout=120)
                    d.record([done])
            except queue.Empty:
                raise SystemExit(
                    f"the daemon's job did not finish within 120 s:\n{said.getvalue()}"
                ) from None
            finally:
                d.jobs.shutdown(wait=True)
                d.state.close()
        git(clone, "fetch", "-q")
        check_done(clone, said.getvalue())
    return trace.figures(driver, also=package)


def show(name: str, figures: dict[str, Any], driver: str) -> None:
    print(f"{name}:")
    print(f"  {'vaultops modules executed':<34} {figures['modules']:6d}")
    print(f"  {'packages':<34} {figures['packages']:6d}")
    print(f"  {'crossings between packages':<34} {figures['crossings']:6d}")
    for package, n in figures["returns_into"].items():
        print(f"  {'returns into ' + package.removeprefix('vaultops.'):<34} {n:6d}")
    distinct = figures["distinct"]
    print(f"  {'distinct crossings (function pairs)':<34} {distinct['crossings']:6d}")
    print(f"  {'distinct crossings (module pairs)':<34} {distinct['module_crossings']:6d}")
    for package, n in distinct["returns_into"].items():
        print(f"  {'distinct returns into ' + package.removeprefix('vaultops.'):<34} {n:6d}")
    print(f"  {'calls (all, vaultops)':<34} {figures['calls']:6d}")
    print(f"  packages: {' '.join(p.removeprefix('vaultops.') for p in figures['package_list'])}")


def measured(name: str, driver: str) -> dict[str, Any]:
    """One path's figures, measured in a fresh process: caches filled by one path never shorten another's."""
    argv = [sys.executable, __file__, "--driver-package", driver, "--only", name]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the {name} path failed:\n{proc.stdout}{proc.stderr}")
    figures: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--driver-package", help="the package of Pass (default: the first that exists of "
                        + ", ".join(DRIVERS) + ")")  # fmt: skip
    parser.add_argument("--no-daemon", action="store_true", help="the tick's path only")
    parser.add_argument("--only", choices=["tick", "daemon"], help=argparse.SUPPRESS)  # one, in this process
    args = parser.parse_args()
    import_all()
    driver, pass_class = find_class((args.driver_package,) if args.driver_package else DRIVERS, "Pass")
    if args.only:
        one = tick_path(driver, pass_class) if args.only == "tick" else daemon_path(driver, DAEMONS)
        print(json.dumps(one, sort_keys=True))
        return 0
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    out: dict[str, Any] = {"commit": head.stdout.strip(), "driver": driver}
    print(f"one env-check request, one pass; driver package {driver}; commit {out['commit'] or '?'}")
    for name in ("tick",) if args.no_daemon else ("tick", "daemon"):
        out[name] = measured(name, driver)
        show(f"{name} path", out[name], driver)
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
