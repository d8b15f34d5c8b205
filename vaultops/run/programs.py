"""What env-check may say about a program without running it, and which programs it may ask for a version.

A request only names a program; it never picks what runs.  The program is found as ``which`` finds it,
then its real file (every symlink resolved) decides:

- its basename must be on SAFE_PROBES, the programs known to answer their version probe and do nothing
  else (a script that ignores its arguments would simply run: "deploy --version" deploys);
- it must lie where the person's installed programs lie: not in a temporary folder, not in the vault or an
  allowed root (where a request's job works, and where anyone who can write a request could drop a fake
  ``git``), not writable by other users, and owned by root or by the person.

Only then is the probe run: the real file, SAFE_PROBES' exact argv, no shell, a minimal environment, a
scratch folder as its working directory and a timeout.  Anything else is described instead: the path, the
package that owns it (``dpkg -S`` or ``rpm -qf``, read-only, found on the system's own PATH, never the
request's), and what kind of file it is (from its first bytes: it is read, never executed).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from vaultops.base.confine import inside
from vaultops.run.process import run_process

# The exact arguments each known program is asked with.  Each one prints its version and exits.
SAFE_PROBES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        ("python", "python3", "git", "node", "npm", "npx", "pnpm", "yarn", "deno", "bun", "docker", "psql",
         "pg_dump", "mysql", "sqlite3", "redis-server", "redis-cli", "rustc", "cargo", "ruby", "gem", "perl",
         "php", "gcc", "g++", "clang", "cmake", "curl", "wget", "jq", "yq", "rg", "gh", "glab", "stripe",
         "claude", "pip", "pip3", "uv", "pipx", "rsync", "pandoc", "terraform", "aws", "ruff", "tsc", "vim",
         "nvim", "bash", "zsh", "tar", "gzip", "zstd", "xz"),
        ("--version",),
    ),
    "ffmpeg": ("-version",),
    "ffprobe": ("-version",),
    "java": ("-version",),
    "go": ("version",),
    "openssl": ("version",),
    "nginx": ("-v",),
    "ssh": ("-V",),
    "tmux": ("-V",),
    "kubectl": ("version", "--client"),
}
# Real files that are a known program under another name (npm's entry point, say).
ALIASES = {"npm-cli.js": "npm", "npx-cli.js": "npx", "pnpm.cjs": "pnpm", "yarn.js": "yarn"}
_VERSIONED = re.compile(r"(?:[.-]?\d+)+\Z")  # python3.11 -> python3, gcc-12 -> gcc
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
QUERY_TIMEOUT = 5.0
HEAD_BYTES = 256


def known_as(real: str) -> str | None:
    """The SAFE_PROBES name of a real file, or None."""
    name = os.path.basename(real)
    if name in ALIASES:
        return ALIASES[name]
    for candidate in (name, _VERSIONED.sub("", name)):
        if candidate in SAFE_PROBES:
            return candidate
    return None


def temp_folders() -> list[str]:
    found = [tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm", os.environ.get("TMPDIR", "")]
    return [os.path.realpath(f) for f in found if f]


def untrusted(real: str, unexpected: Sequence[Path]) -> str:
    """Why the real file ``real`` is not where an installed program lies ("" when it is)."""
    if any(inside(real, os.path.realpath(r)) for r in unexpected):
        return "it lies inside the vault or a folder jobs work in"
    if any(inside(real, t) for t in temp_folders()):
        return "it lies in a temporary folder"
    me = os.getuid() if hasattr(os, "getuid") else 0
    place = real
    while True:
        try:
            st = os.stat(place)
        except OSError:
            return "it cannot be examined"
        if st.st_mode & stat.S_IWOTH and not (place != real and st.st_mode & stat.S_ISVTX):
            return f"{place} can be written by every user"
        if st.st_uid not in (0, me):
            return f"{place} belongs to another user"
        parent = os.path.dirname(place)
        if parent == place:
            return ""
        place = parent


def file_kind(path: str) -> str:
    """What the file is, from its first bytes; it is read, never executed."""
    real = os.path.realpath(path)
    prefix = f"symlink to {real}; " if os.path.islink(path) else ""
    try:
        if not stat.S_ISREG(os.stat(real).st_mode):  # a device or a pipe is never opened
            return prefix + "not a regular file"
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return prefix + "not a regular file"
            head = os.read(fd, HEAD_BYTES)
        finally:
            os.close(fd)
    except OSError as exc:
        return prefix + f"cannot be read ({exc.strerror})"
    if head.startswith(b"\x7fELF"):
        kind = "ELF executable"
    elif head[:4] in (b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe",
                      b"\xca\xfe\xba\xbe"):
        kind = "Mach-O executable"
    elif head.startswith(b"#!"):
        words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if words and os.path.basename(words[0]) == "env":
            words = [w for w in words[1:] if not w.startswith("-")]
        interpreter = words[0] if words else "nothing"
        plain = interpreter.isprintable() and len(interpreter) <= 80
        shown = interpreter if plain else repr(interpreter[:80])
        kind = f"script run by {shown}"
    else:
        kind = "file of unknown type"
    return prefix + kind


def package_owner(path: str) -> str:
    """The package that installed the file, as dpkg or rpm tells (read-only queries)."""
    real = os.path.realpath(path)
    path = os.path.abspath(path)  # never an argument that starts with "-"
    for tool, args in (("dpkg", ("-S",)), ("rpm", ("-qf",))):
        exe = shutil.which(tool, path=SYSTEM_PATH)
        if exe is None:
            continue
        # merged /usr: dpkg may know /usr/bin/ls as /bin/ls
        names = (real, path, *(p.removeprefix("/usr") for p in (real, path) if p.startswith("/usr/")))
        for candidate in dict.fromkeys(names):
            result = run_process(
                [exe, *args, candidate], cwd=Path("/"), env={"PATH": SYSTEM_PATH, "LC_ALL": "C"},
                timeout=QUERY_TIMEOUT, max_output_bytes=65536,
            )
            line = result.stdout.strip().splitlines()[0] if result.stdout.strip() else ""
            if result.exit_code == 0 and line:
                owner = line.split(":", 1)[0] if tool == "dpkg" else line
                return f"package {owner}" if owner.isprintable() and len(owner) <= 80 else "package unknown"
            if result.timed_out or result.start_error:
                return "package unknown"
        return "no package owns it"
    return "package unknown"


def probe_env(path: str, scratch: str) -> dict[str, str]:
    """The minimal environment a probe runs in: no variable of the daemon's reaches it."""
    folder = os.path.dirname(path)
    return {"PATH": f"{folder}:{SYSTEM_PATH}", "HOME": scratch, "TMPDIR": scratch, "LC_ALL": "C"}
