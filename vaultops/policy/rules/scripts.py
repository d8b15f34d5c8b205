"""The little languages of sed, awk and jq, read for what runs a command, writes or reads a file.

sed's ``e`` command and the ``e`` flag of ``s`` run the pattern space as a shell command; ``w``, ``W`` and the
``w`` flag write files; ``r`` and ``R`` read them.  awk's ``system()``, ``| getline``, ``print | "cmd"`` run
commands and ``print > file`` writes; ``ENVIRON`` holds every variable.  jq's ``env`` and ``$ENV`` too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class SedScript:
    """What a sed script does besides filtering: commands it runs, files it writes and reads."""

    runs: bool = False
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    unreadable: str = ""


_SIMPLE = set("=dDgGhHlnNpPqQxzFlL")


def _delimited(s: str, i: int, delim: str) -> int:
    """Index after the closing ``delim`` of a part that starts at ``i``; -1 when not closed."""
    while i < len(s):
        if s[i] == "\\":
            i += 2
            continue
        if s[i] == "\n" and delim != "\n":
            return -1
        if s[i] == delim:
            return i + 1
        i += 1
    return -1


def _address(s: str, i: int) -> int:
    """Past one address: a line number, ``$``, ``/re/``, ``\\cREc``, ``first~step``."""
    if i < len(s) and s[i].isdigit():
        while i < len(s) and (s[i].isdigit() or s[i] == "~"):
            i += 1
    elif i < len(s) and s[i] == "$":
        i += 1
    elif i < len(s) and s[i] in "/\\":
        delim = s[i + 1] if s[i] == "\\" and i + 1 < len(s) else "/"
        end = _delimited(s, i + (2 if s[i] == "\\" else 1), delim)
        i = len(s) if end < 0 else end
        while i < len(s) and s[i] in "IM":
            i += 1
    return i


def _to_line_end(s: str, i: int) -> tuple[str, int]:
    end = s.find("\n", i)
    end = len(s) if end < 0 else end
    return s[i:end].strip(), end


def read_sed(script: str) -> SedScript:
    """Every command of a sed script, the way GNU sed reads it."""
    out = SedScript()
    s = script
    i = 0
    while i < len(s):
        if s[i] in " \t\n;}{!":
            i += 1
            continue
        start = i
        i = _address(s, i)
        if i < len(s) and s[i] == ",":
            i = _address(s, i + 1)
            if i < len(s) and s[i] in "+~":  # addr1,+N  addr1,~N
                i += 1
                while i < len(s) and s[i].isdigit():
                    i += 1
        while i < len(s) and s[i] in " \t!":
            i += 1
        if i >= len(s):
            break
        c = s[i]
        i += 1
        if c == "#":
            _, i = _to_line_end(s, i)
        elif c in "{}":
            continue
        elif c in _SIMPLE:
            while i < len(s) and s[i].isdigit():  # q5, l 40
                i += 1
        elif c in ":btTv":
            while i < len(s) and s[i] not in ";\n}":
                i += 1
        elif c in "aic":
            _, i = _to_line_end(s, i)
        elif c in "rRwW":
            name, i = _to_line_end(s, i)
            (out.reads if c in "rR" else out.writes).append(name)
        elif c == "e":
            out.runs = True
            _, i = _to_line_end(s, i)
        elif c in "sy" and i < len(s):
            delim = s[i]
            if delim in "\n\\":
                out.unreadable = f"a {c} command with the delimiter {delim!r}"
                return out
            mid = _delimited(s, i + 1, delim)
            end = _delimited(s, mid, delim) if mid > 0 else -1
            if end < 0:
                out.unreadable = f"an unfinished {c} command ({s[start:][:40]!r})"
                return out
            i = end
            while c == "s" and i < len(s) and s[i] in "gpiImMe0123456789w":
                if s[i] == "e":
                    out.runs = True
                if s[i] == "w":
                    name, i = _to_line_end(s, i + 1)
                    out.writes.append(name)
                    break
                i += 1
            while c == "s" and i < len(s) and s[i] in " \t":
                i += 1
            if c == "s" and i < len(s) and s[i] not in "\n;}#":
                out.unreadable = f"the s command is followed by {s[i]!r}, which sed does not accept"
                return out
        else:
            out.unreadable = f"the sed command {c!r} is not one the policy knows"
            return out
    return out


# awk: a command run, a pipe to or from one, output redirected to a file, the whole environment.
_AWK_RUNS = re.compile(
    r"\bsystem\s*\(|\|\s*&?\s*getline|\|&|\bprintf?\b[^;{}\n]*\||@load|@include|\bgetline\b[^;{}\n|]*<|"
    r"@\w+\s*\("  # gawk's indirect call: @name() calls the function whose name the variable holds
)
_AWK_WRITES = re.compile(r"\bprintf?\b[^;{}\n]*>|\bfflush\b")
_AWK_ENV = re.compile(r"\bENVIRON\b|\bPROCINFO\b")

# jq/yq: `env`, `$ENV`, `strenv(…)` print variables; `load(…)` reads a file.
_JQ_ENV = re.compile(
    r"(?<![.\w$])env\b|\$ENV\b|\bstrenv\b|\$__prog_args|\bload(_str|_props|_xml|_base64)?\s*\("
)


def awk_effects(program: str) -> list[tuple[str, str]]:
    """(action, why) for what an awk program does beyond computing."""
    out: list[tuple[str, str]] = []
    if _AWK_RUNS.search(program):
        out.append(("unknown", "awk code that runs a command (system, getline, a pipe, @load)"))
    if _AWK_WRITES.search(program):
        out.append(("unknown", "awk code that writes to a file"))
    if _AWK_ENV.search(program):
        out.append(("read_secrets", "awk code that reads the environment, tokens included"))
    return out


def jq_reads_environment(program: str) -> bool:
    return bool(_JQ_ENV.search(program))
