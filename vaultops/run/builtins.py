"""The built-in checks for light, read-only requests: env-check, service-status, filesystem-check.

They answer without an agent, so they must be harmless whatever the request says: every name is checked
against a safe pattern before use, the only commands run are the version probes of known programs (see
``run.programs``), ``dpkg -S``/``rpm -qf``, ``systemctl is-active``, ``launchctl list`` and ``pgrep``; no
file is opened but a program's first bytes (to tell its kind), and no environment value is ever shown.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from vaultops.base.confine import inside
from vaultops.base.redact import redact, secret_values
from vaultops.run import programs
from vaultops.run.process import ProcessResult, run_process


@dataclass(frozen=True, slots=True)
class HandlerResult:
    ok: bool  # False when the check could not be done at all (nothing valid to check)
    output: str  # the lines to show in the note
    summary: str  # one short line


_COMMAND = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*\Z")
_ENV_VAR = re.compile(r"[A-Z_][A-Z0-9_]*\Z")
_SERVICE = re.compile(r"[A-Za-z0-9@._][A-Za-z0-9@._-]*\Z")  # never "-x": it would be read as an option
VERSION_TIMEOUT = 5.0
QUERY_TIMEOUT = 5.0
SUMMARY_MAX = 160
LIST_MAX = 50
WALK_MAX = 20_000

_versions: dict[tuple[str, int, int], str] = {}
_versions_lock = threading.Lock()


def _shown(name: str) -> str:
    """A refused name, quoted and cut, so that it cannot reshape the note."""
    return repr(name[:60] + ("…" if len(name) > 60 else ""))


def _label(path: str) -> str:
    """A path as it is, unless it holds a line break or another control character."""
    return path if path.isprintable() and len(path) <= 300 else _shown(path)


def _first_line(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= 120 else line[:119] + "…"


def _summary(lines: list[str], counts: str) -> str:
    joined = "; ".join(lines)
    return joined if len(joined) <= SUMMARY_MAX else counts


def _nothing(lines: list[str], why: str) -> HandlerResult:
    reason = f"nothing to check: {why}"
    return HandlerResult(False, "\n".join([*lines, reason]), reason)


def _version(path: str, probe: tuple[str, ...], environ: Mapping[str, str]) -> str:
    """The first line a known program's probe prints: ``path`` is its real file, run with ``probe``, no
    shell, a minimal environment and a timeout.  Cached per file, so an upgraded binary is asked again."""
    try:
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size)
    except OSError:
        key = (path, 0, 0)
    with _versions_lock:
        if key in _versions:
            return _versions[key]
    shown = " ".join(probe)
    with tempfile.TemporaryDirectory(prefix="vaultops-version-") as scratch:
        result = run_process(
            [path, *probe],
            cwd=Path(scratch),
            env=programs.probe_env(path, scratch),
            timeout=VERSION_TIMEOUT,
            max_output_bytes=65536,
            extra_secrets=secret_values(environ),
        )
    if result.start_error:
        version = f"version unknown: {result.start_error}"
    elif result.timed_out:
        version = f"version unknown: {shown} did not finish"
    elif result.exit_code != 0:
        version = f"version unknown: {shown} exited with {result.exit_code}"
    else:
        version = _first_line(result.stdout) or _first_line(result.stderr) or "version unknown: no output"
    version = redact(version, result.secrets)  # the output is raw
    if not result.timed_out:  # a slow first start (cold disk, a shim) deserves another try
        with _versions_lock:
            _versions[key] = version
    return version


def _program(path: str, environ: Mapping[str, str], unexpected: Sequence[Path]) -> str:
    """The version of a known program where installed programs lie; else what the file is, unrun."""
    real = os.path.realpath(path)
    known = programs.known_as(real)
    why = programs.untrusted(real, unexpected) if known else ""
    if known and not why:
        return _version(real, programs.SAFE_PROBES[known], environ)
    if not known:
        why = "vaultops asks only programs it knows for their version"
    return f"{programs.file_kind(path)}; {programs.package_owner(path)}; not run: {why}"


def env_check(
    commands: Sequence[str],
    env_vars: Sequence[str],
    *,
    environ: Mapping[str, str],
    unexpected: Sequence[Path] = (),
) -> HandlerResult:
    """Which commands are on PATH and which variables are set (never their value).  A program's version
    is asked only of programs vaultops knows, where installed programs lie (see run.programs); never of
    one in ``unexpected`` folders (the vault, where jobs work).  The rest are described, never run."""
    lines: list[str] = []
    found = missing = refused = 0
    search_path = environ.get("PATH", os.defpath)
    for command in commands:
        if not _COMMAND.match(command):
            lines.append(f"{_shown(command)}: refused: not a plain command name (letters, digits, . _ + -)")
            refused += 1
            continue
        path = shutil.which(command, path=search_path)
        if path is None:
            lines.append(f"{command}: not found on PATH")
            missing += 1
            continue
        found += 1
        lines.append(f"{command}: {_label(path)} ({_program(path, environ, unexpected)})")
    for name in env_vars:
        if not _ENV_VAR.match(name):
            lines.append(f"{_shown(name)}: refused: not an environment variable name (A-Z, 0-9, _)")
            refused += 1
        elif name not in environ:
            lines.append(f"{name}: not set")
        else:
            lines.append(f"{name}: set" + ("" if environ[name] else " (empty)"))
    if len(lines) == refused:
        return _nothing(lines, "no valid command or variable name was given")
    variables = len(lines) - refused - found - missing
    counts = f"{found} of {found + missing} commands found, {variables} variables, {refused} refused"
    return HandlerResult(True, "\n".join(lines), _summary(lines, counts))


def _query(argv: list[str]) -> ProcessResult:
    return run_process(argv, cwd=Path("/"), timeout=QUERY_TIMEOUT, max_output_bytes=1_000_000)


def _systemd(systemctl: str, scope: list[str], name: str) -> str:
    result = _query([systemctl, *scope, "is-active", "--", name])
    state = _first_line(result.stdout)
    if state:
        return state  # active, inactive, failed, activating, unknown, …
    why = result.start_error or _first_line(result.stderr) or f"exit {result.exit_code}"
    return f"unavailable ({why})"


def _launchd(listing: str, name: str) -> list[str]:
    lines = []
    for row in listing.splitlines()[1:]:  # "PID\tStatus\tLabel"
        pid, status, label = [*row.split("\t"), "", "", ""][:3]
        if label == name or label.endswith("." + name):
            state = f"running (pid {pid})" if pid.strip().isdigit() else f"not running (last exit {status})"
            lines.append(f"launchd {label}: {state}")
    return lines or [f"launchd: no job labelled {name}"]


def _pgrep(pgrep: str, name: str) -> tuple[list[int], str]:
    # Linux matches -x against the kernel's process name, which is cut at 15 characters.
    pattern = name[:15] if sys.platform.startswith("linux") else name
    result = _query([pgrep, "-x", "--", pattern])
    if result.exit_code not in (0, 1):
        return [], f"processes: pgrep failed ({result.start_error or _first_line(result.stderr)})"
    pids = [int(p) for p in result.stdout.split() if p.isdigit()]
    cut = " (matched on its first 15 characters)" if pattern != name else ""
    if not pids:
        return pids, f"processes: none named {pattern}{cut}"
    shown = ", ".join(map(str, pids[:5])) + (", …" if len(pids) > 5 else "")
    return pids, f"processes: {len(pids)} running (pids {shown}){cut}"


def service_status(services: Sequence[str]) -> HandlerResult:
    """Whether each service runs: systemd (system and user) or launchd, and pgrep.  Never starts or stops."""
    systemctl = shutil.which("systemctl") if sys.platform.startswith("linux") else None
    launchctl = shutil.which("launchctl") if sys.platform == "darwin" else None
    pgrep = shutil.which("pgrep")
    listing: str | None = None
    lines: list[str] = []
    verdicts: list[str] = []
    for name in services:
        if not _SERVICE.match(name):
            lines.append(f"{_shown(name)}: refused: not a service name (letters, digits, @ . _ -)")
            continue
        details: list[str] = []
        running = False
        if systemctl:
            for scope, flags in (("system", []), ("user", ["--user"])):
                state = _systemd(systemctl, flags, name)
                details.append(f"systemd ({scope}): {state}")
                running |= state in ("active", "activating", "reloading")
        if launchctl:
            if listing is None:
                listing = _query([launchctl, "list"]).stdout
            launchd = _launchd(listing, name)
            details += launchd
            running |= any(": running" in line for line in launchd)
        if pgrep:
            pids, line = _pgrep(pgrep, name)
            details.append(line)
            running |= bool(pids)
        else:
            details.append("processes: unknown (pgrep is not installed)")
        verdict = f"{name}: {'running' if running else 'not running or not found'}"
        verdicts.append(verdict)
        lines += [verdict, *(f"  {d}" for d in details)]
    if not verdicts:
        return _nothing(lines, "no valid service name was given")
    up = sum(v.endswith(": running") for v in verdicts)
    counts = f"{up} of {len(verdicts)} services running, {len(services) - len(verdicts)} refused"
    return HandlerResult(True, "\n".join(lines), _summary(verdicts, counts))


def _inside(real: str, roots: Sequence[str]) -> bool:
    return any(inside(real, root) for root in roots)


def _walk(top: str) -> tuple[int, int, int, int, bool]:
    """Files, folders, other entries (symlinks, unreadable, …) and bytes in files under ``top``, and
    whether WALK_MAX cut the walk short.  No symlink is followed: the walk never leaves its tree."""
    files = folders = others = size = 0
    stack = [top]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if files + folders + others >= WALK_MAX:
                        return files, folders, others, size, True
                    if entry.is_dir(follow_symlinks=False):
                        folders += 1
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        files += 1
                        size += entry.stat(follow_symlinks=False).st_size
                    else:
                        others += 1
        except OSError:
            others += 1  # a folder that cannot be read, or a file gone while walking
    return files, folders, others, size, False


def _mark(entry: os.DirEntry[str]) -> str:
    return "/" if entry.is_dir(follow_symlinks=False) else "@" if entry.is_symlink() else ""


_KINDS = {
    stat.S_IFREG: "file",
    stat.S_IFDIR: "directory",
    stat.S_IFLNK: "symlink",
    stat.S_IFSOCK: "socket",
    stat.S_IFIFO: "named pipe",
    stat.S_IFBLK: "block device",
    stat.S_IFCHR: "character device",
}


def _describe(shown: str, real: str) -> tuple[list[str], str]:
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return [f"{shown}: does not exist ({_label(real)})"], f"{shown}: does not exist"
    except OSError as exc:
        return [f"{shown}: cannot be examined: {exc.strerror}"], f"{shown}: cannot be examined"
    kind = _KINDS.get(stat.S_IFMT(st.st_mode), "other")
    modified = datetime.fromtimestamp(st.st_mtime).astimezone().isoformat(timespec="seconds")
    lines = [f"{shown}: {kind} ({_label(real)})", f"  modified: {modified}"]
    lines.append(f"  mode: {stat.filemode(st.st_mode)}")
    if kind != "directory":
        lines.append(f"  size: {st.st_size:,} bytes")
        return lines, f"{shown}: {kind}, {st.st_size:,} bytes"
    try:
        with os.scandir(real) as it:
            entries = sorted(_label(e.name) + _mark(e) for e in it)
    except OSError as exc:
        lines.append(f"  entries: cannot be listed: {exc.strerror}")
        return lines, f"{shown}: directory, not readable"
    files, folders, others, size, capped = _walk(real)
    lines.append(f"  entries: {len(entries):,}")
    lines.append(
        f"  total: {'at least ' if capped else ''}{size:,} bytes in {files:,} files;"
        f" also {folders:,} folders, {others:,} symlinks or other entries"
        + (f" (stopped after {WALK_MAX:,} entries)" if capped else "")
    )
    lines.append(f"  first {min(len(entries), LIST_MAX)} entries (sorted; / folder, @ symlink):")
    lines += [f"    {name}" for name in entries[:LIST_MAX]]
    return lines, f"{shown}: directory, {len(entries):,} entries"


def filesystem_check(paths: Sequence[str], *, allowed_roots: Sequence[Path], base: Path) -> HandlerResult:
    """Stat, list and size each path inside the allowed roots; never reads a file's contents.

    Paths may be absolute, ``~``-relative or relative to ``base``.  A path whose real location (every
    symlink and ``..`` resolved) is outside every allowed root is refused, without saying where it leads.
    """
    roots = [os.path.realpath(os.path.expanduser(os.fspath(root))) for root in allowed_roots]
    lines: list[str] = []
    summaries: list[str] = []
    for raw in paths:
        if not raw.strip() or "\0" in raw:
            lines.append(f"{_shown(raw)}: refused: not a path")
            continue
        # Joining an absolute path to base gives the absolute path itself.
        real = os.path.realpath(os.path.join(os.fspath(base), os.path.expanduser(raw)))
        if not _inside(real, roots):
            lines.append(f"{_label(raw)}: refused: outside the allowed roots")
            continue
        described, summary = _describe(_label(raw), real)
        lines += described
        summaries.append(summary)
    if not summaries:
        return _nothing(lines, "no path inside the allowed roots was given")
    counts = f"{len(summaries)} paths checked, {len(paths) - len(summaries)} refused"
    return HandlerResult(True, "\n".join(lines), _summary(summaries, counts))
