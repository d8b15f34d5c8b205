"""Rules for programs that read, write, move and delete files, and the read-only builtins."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from vaultops.policy.bash import Word
from vaultops.policy.environ import risky_assignment
from vaultops.policy.judge import Handler, Judge, names, read_only, register
from vaultops.policy.options import Options, Parsed, read_options, table
from vaultops.policy.rules.scripts import awk_effects, jq_reads_environment, read_sed
from vaultops.policy.rules.tables import (
    ACK,
    AG,
    AWK,
    BASE64,
    BAT,
    CAT,
    CHATTR,
    CHMOD,
    CMP,
    COMM,
    CP,
    CUT,
    DATE,
    DELTA,
    DIFF,
    DIFF3,
    DU,
    EZA,
    FD,
    FILE,
    GETFACL,
    GREP,
    HEAD,
    HEXDUMP,
    ICDIFF,
    ICONV,
    INSTALL,
    JOIN,
    JQ,
    LESS,
    LN,
    LOOK,
    LS,
    MAN,
    MKDIR,
    MKFIFO,
    MKTEMP,
    MORE,
    MV,
    OD,
    PASTE,
    PATCH,
    PR,
    PS,
    READLINK,
    RG,
    RM,
    RMDIR,
    SDIFF,
    SED,
    SETFACL,
    SHRED,
    SORT,
    STAT,
    STRINGS,
    SUMS,
    TEE,
    TOUCH,
    TREE,
    TRUNCATE,
    UGREP,
    UNIQ,
    WC,
    WDIFF,
    WHICH,
    WRAPPERS,
    XXD,
    YQ,
    ZCAT,
)  # fmt: skip


def _opts(j: Judge, args: list[Word], opts: Options, stop_at_first: bool = False) -> Parsed:
    return read_options(j, j.cmd.name, args, opts, stop_at_first)


_COMMON_FILTER = "--help --version"


def _reads_all(opts: Options) -> Handler:
    def rule(j: Judge, args: list[Word]) -> None:
        for w in _opts(j, args, opts).positionals:
            j.read(w)
        j.add("read", "reads")

    return rule


def _pager(opts: Options) -> Handler:
    """less, more: ``+cmd`` runs a pager command first (``+!sh`` a shell); ``+N`` and ``+/re`` only move."""

    def rule(j: Judge, args: list[Word]) -> None:
        for w in args:
            if w.text.startswith("+") and not re.fullmatch(r"\+\d*|\+/[^!|]*|\+G", w.text):
                j.add("unknown", f"{w.text!r} gives the pager a command of its own to run")
        _reads_all(opts)(j, [w for w in args if not w.text.startswith("+")])

    return rule


def _reads_after_first(opts: Options, script_flags: Iterable[str] = ()) -> Handler:
    """grep PATTERN FILES…, jq FILTER FILES…: the first positional is not a path (unless -e/-f gave it)."""
    flags = tuple(script_flags)

    def rule(j: Judge, args: list[Word]) -> None:
        parsed = _opts(j, args, opts)
        pos = parsed.positionals
        given = bool(flags) and parsed.has(*flags)
        if j.cmd.name in ("jq", "yq", "gojq", "jaq"):
            programs = [parsed.values[f].text for f in flags if f in parsed.values]
            programs += [w.text for w in pos[:1]]
            if any(jq_reads_environment(p) for p in programs):
                j.add("read_secrets", "a filter that reads the environment (env, $ENV) or loads a file")
            if parsed.has("-i", "--inplace"):
                for w in pos[0 if given else 1 :]:
                    j.write(w, "edits in place")
        for w in pos[0 if given else 1 :]:
            j.read(w)
        j.add("read", "reads")

    return rule


def _writes_all(opts: Options, skip_first: bool = False) -> Handler:
    def rule(j: Judge, args: list[Word]) -> None:
        mode = None
        if skip_first:  # `chmod -x FILE`, `chattr +i FILE`: a mode that looks like an option is the mode
            mode = next((w for w in args if re.fullmatch(r"[-+=][rwxXstugoa,+=-]*|[-+][a-zA-Z]+", w.text)
                         and w.text not in opts.effects), None)  # fmt: skip
            args = [w for w in args if w is not mode]
        pos = _opts(j, args, opts).positionals
        if skip_first and mode is None and pos:  # chmod MODE FILES…, chown OWNER FILES…
            pos = pos[1:]
        for w in pos:
            j.write(w)
        if not pos:
            j.add("read", "changes nothing")

    return rule


def _rm(j: Judge, args: list[Word]) -> None:
    parsed = _opts(j, args, RM)
    recursive = parsed.has("-r", "-R", "--recursive")
    for w in parsed.positionals:
        j.delete(w, recursive)


# find's expression: the tests and actions the policy knows; those that take a value, write or run.
_FIND_FLAGS = names(
    "-print -print0 -ls -prune -quit -delete -true -false -empty -readable -writable -executable -nouser "
    "-nogroup -follow -xdev -mount -depth -daystart -noleaf -ignore_readdir_race -noignore_readdir_race "
    "-not -a -and -o -or ! ( ) , -d -s -x"
)
_FIND_VALUES = names(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -maxdepth -mindepth -mtime "
    "-mmin -atime -amin -ctime -cmin -size -perm -user -group -uid -gid -links -inum -lname -ilname -printf "
    "-regextype -fstype -used -context -samefile -newer -anewer -cnewer -files0-from -Bmin -Btime -Bnewer"
)
_FIND_WRITES = names("-fprint -fprint0 -fls")
_FIND_EXEC = names("-exec -execdir -ok -okdir")


def _find(j: Judge, args: list[Word]) -> None:
    i = 0
    while i < len(args) and (args[i].text in ("-H", "-L", "-P") or args[i].text.startswith(("-O", "-D"))):
        i += 1
    roots = []
    while i < len(args) and not args[i].text.startswith(("-", "(", "!", ")")):
        roots.append(args[i])
        i += 1
    roots = roots or [Word(".")]
    deletes = False
    while i < len(args):
        t = args[i].text
        i += 1
        if t in _FIND_EXEC:  # the command is judged on its own (the splitter found it)
            while i < len(args) and args[i].text not in (";", "+"):
                i += 1
            i += 1
        elif t in _FIND_WRITES or t == "-fprintf":
            if i < len(args):
                j.write(args[i])
            i += 2 if t == "-fprintf" else 1
        elif t in _FIND_VALUES or re.fullmatch(r"-newer[aBcmt][aBcmt]", t):
            if t in ("-samefile", "-newer", "-anewer", "-cnewer", "-files0-from") and i < len(args):
                j.read(args[i])
            i += 1
        elif t == "-delete":
            deletes = True
        elif t not in _FIND_FLAGS:
            j.add("unknown", f"{t} is not a find test or action the policy knows")
    for root in roots:
        j.read(root)
        if deletes:
            j.delete(root, recursive=True)


_PROGRAM_DIRS = (
    "/bin/",
    "/sbin/",
    "/usr/bin/",
    "/usr/sbin/",
    "/usr/local/bin/",
    "/usr/local/sbin/",
    "/usr/libexec/",
    "/opt/homebrew/bin/",
    "/snap/bin/",
    "/nix/",
)


def _is_program(path: str) -> bool:
    """A path in the system's program folders (``..`` folded first)."""
    folded = posixpath.normpath(path) + ("/" if path.endswith("/") else "")
    return folded.startswith(_PROGRAM_DIRS)


def _copy(opts: Options, verb: str = "") -> Handler:
    """cp, mv, ln, install: SOURCES… TARGET, or -t TARGET SOURCES…; moving writes the sources too."""

    def rule(j: Judge, args: list[Word]) -> None:
        parsed = _opts(j, args, opts)
        pos = parsed.positionals
        name = j.cmd.name
        if name == "install" and parsed.has("-d", "--directory"):
            for w in pos:
                j.write(w)
            return
        target = parsed.value("-t", "--target-directory")
        if target is None and len(pos) >= 2:
            target, pos = pos[-1], pos[:-1]
        elif target is None and name == "ln" and pos:
            target = Word(pos[0].text.rstrip("/").rsplit("/", 1)[-1] or ".")
        if name == "ln" and not parsed.has("-s", "--symbolic"):
            # a hard link makes an outside file look like one of the worktree's, to every later read
            for source in pos:
                if any(p.where not in ("inside", "temp") for p in j.places(source)):
                    j.add("unknown", f"hard-links {source.text}, outside the worktree, into it")
        if name == "ln" and parsed.has("-s", "--symbolic"):
            # a link to outside lets a later write in the same command leave the worktree unseen
            for source in pos:
                if any(p.where not in ("inside", "temp") for p in j.places(source)):
                    j.add("unknown", f"links to {source.text}, outside the worktree")
        for source in pos:
            if _is_program(source.text) and name != "mv":
                # a copy of a system program in the worktree would run unjudged as the project's own script
                j.add(
                    "unknown",
                    f"puts the program {source.text} into the worktree, where it would run as a local one",
                )
        for w in pos:
            if name == "mv":
                j.write(w, "moves")
            elif name != "ln":
                j.read(w)
        if target is not None:
            j.write(target, verb or "writes")

    return rule


def _dd(j: Judge, args: list[Word]) -> None:
    for w in args:
        key, eq, value = w.text.partition("=")
        if eq and key == "of":
            j.write(Word(value, w.dynamic, w.glob))
        elif eq and key == "if":
            j.read(Word(value, w.dynamic, w.glob))
        elif not eq and w.text not in ("--help", "--version"):
            j.add("unknown", f"{w.text!r} is not a dd operand the policy knows")
    j.add("read", "copies data")


def _tee(j: Judge, args: list[Word]) -> None:
    for w in _opts(j, args, TEE).positionals:
        j.write(w)
    j.add("read", "copies its input")


def _second_writes(opts: Options) -> Handler:
    """uniq IN OUT, xxd IN OUT: a second file named is the output."""

    def rule(j: Judge, args: list[Word]) -> None:
        pos = _opts(j, args, opts).positionals
        for w in pos[:1]:
            j.read(w)
        for w in pos[1:2]:
            j.write(w)
        for w in pos[2:]:
            j.add("unknown", f"{j.cmd.name} is given an extra argument {w.text!r}")
        j.add("read", "reads")

    return rule


def _sed(j: Judge, args: list[Word]) -> None:
    in_place = [w for w in args if re.fullmatch(r"-[nEsuzr]*i\S*|--in-place(=.*)?", w.text)]
    rest = [w for w in args if w not in in_place]
    parsed = _opts(j, [Word("-s") if w in in_place else w for w in rest], SED)
    pos = parsed.positionals
    given = parsed.has("-e", "--expression", "-f", "--file")
    texts = [v.text for k, v in parsed.values.items() if k in ("-e", "--expression")]
    if not given and pos:
        texts.append(pos[0].text)
        pos = pos[1:]
    if not parsed.has("--sandbox"):
        for text in texts:
            script = read_sed(text)
            if script.unreadable:
                j.add("unknown", f"sed script: {script.unreadable}")
            if script.runs:
                j.add("unknown", "the sed script runs a command (the e command or flag)")
            for name in script.writes:
                j.write(Word(name), "the sed script writes")
            for name in script.reads:
                j.read(Word(name))
    for w in pos:
        if in_place:
            j.write(w, "edits in place")
        else:
            j.read(w)
    j.add("read", "filters text")


def _awk(j: Judge, args: list[Word]) -> None:
    parsed = _opts(j, args, AWK)
    pos = parsed.positionals
    programs = [v.text for k, v in parsed.values.items() if k in ("-e", "--source")]
    if not parsed.has("-f", "--file", "-e", "--source", "-E", "--exec") and pos:
        programs.append(pos[0].text)
        pos = pos[1:]
    if parsed.has("-l", "--load"):
        j.add("unknown", "awk loads an extension (compiled code)")
    if not parsed.has("--sandbox", "-S"):
        for program in programs:
            for name, why in awk_effects(program):
                j.add(name, why)
    include = parsed.value("-i", "--include")
    for w in pos:
        if re.match(r"^[A-Za-z_]\w*=", w.text):
            continue  # var=value between files
        if include is not None and include.text == "inplace":
            j.write(w, "edits in place")
        else:
            j.read(w)
    j.add("read", "runs awk")


def _sort(j: Judge, args: list[Word]) -> None:
    for w in _opts(j, args, SORT).positionals:
        j.read(w)
    j.add("read", "sorts")


def _environment(j: Judge, args: list[Word]) -> None:
    """``env`` or ``printenv`` alone prints every variable, tokens included; one named variable is fine.
    ``env`` wrapping a command is only its options and assignments here (the command is judged apart)."""
    parsed = _opts(j, args, WRAPPERS["env"], stop_at_first=True)
    named = [w for w in parsed.positionals if "=" not in w.text]
    for w in parsed.positionals:
        variable = risky_assignment(w.text)
        if variable is not None:
            j.add("unknown", f"sets {variable}, which changes what runs or what it loads")
    if j.cmd.wraps:
        j.add("read", "sets the environment of the command it runs")
    elif named:
        j.add("read", "prints a variable")
    else:
        j.add("read_secrets", "prints the whole environment, tokens included")


def _ps(j: Judge, args: list[Word]) -> None:
    """ps: BSD-style ``e`` (``ps auxe``, ``ps eww``) and ``-E`` print every process's environment."""
    bsd = [w for w in args if not w.text.startswith("-")]
    if any("e" in w.text for w in bsd if re.fullmatch(r"[A-Za-z]+", w.text)):
        j.add("read_secrets", "prints the environment of processes, tokens included")
    _opts(j, [w for w in args if w.text.startswith("-")], PS)
    j.add("read", "lists processes")


def _getent(j: Judge, args: list[Word]) -> None:
    pos = [w.text for w in _opts(j, args, table("-s= -i --service= --no-idn --help")).positionals]
    if pos[:1] in (["shadow"], ["gshadow"]):
        j.add("read_secrets", "reads password hashes")
    else:
        j.add("read", "looks up a system database")


def _mktemp(j: Judge, args: list[Word]) -> None:
    parsed = _opts(j, args, MKTEMP)
    folder = parsed.value("-p", "--tmpdir")
    if folder is not None:
        j.write(folder, "makes a temporary file in")
    j.add("temp_write", "makes a temporary file")


def _patch(j: Judge, args: list[Word]) -> None:
    """patch [FILE [PATCHFILE]]: the files the patch names are changed (GNU patch keeps them below here)."""
    pos = _opts(j, args, PATCH).positionals
    for w in pos[:1]:
        j.write(w, "patches")
    for w in pos[1:2]:
        j.read(w)
    j.add("edit_worktree", "applies a patch in the worktree")


def _opt_read(opts: Options) -> Handler:
    """A program that only prints: its options must be known, its arguments are data."""

    def rule(j: Judge, args: list[Word]) -> None:
        _opts(j, args, opts)
        j.add("read", "prints")

    return rule


# Programs whose arguments are all data: no option of theirs reads or writes a file or runs anything.
register(
    "echo true false : pwd whoami id groups uname cal uptime nproc arch lscpu free vmstat df pgrep pidof "
    "jobs sleep wait test [ [[ seq yes expr factor getconf locale tput clear reset unalias unset shift "
    "return exit break continue umask ulimit cd pushd popd dirs help tty logname users who w last lsblk "
    "lsusb lspci netstat ss lsof sw_vers system_profiler dmesg mdfind mdls basename dirname times caller "
    "disown suspend dircolors notify-send "
    "say htop top iostat mpstat sar nvidia-smi type whereis",
    read_only,
)
register("which", _opt_read(WHICH))
# tr reads only its input (a redirection, judged on its own); its arguments are character sets
register("tr", _opt_read(table("-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1")))
register("date", _opt_read(DATE))
register("man", _reads_all(MAN))
register("info whatis apropos", _opt_read(table("-s= -r -w -e -l -a -L= -k --apropos --where -w")))
register("ps", _ps)
register("getent", _getent)
register("cat", _reads_all(CAT))
# text filters: their file arguments are read like cat's, and an option outside their tables is unknown
register("tac", _reads_all(table(f"-b -r -s= --before --regex --separator= {_COMMON_FILTER}")))
register("rev fmt fold expand unexpand tsort", _reads_all(table(
    f"-b -s -w= -t= -i -c= -p= -u --width= --tabs= --initial --spaces --bytes --uniform-spacing "
    f"--split-only {_COMMON_FILTER}"
)))  # fmt: skip
register("column", _reads_all(table(
    f"-t -s= -o= -c= -x -n -e -J -l= --table --separator= --output-separator= {_COMMON_FILTER}"
)))  # fmt: skip
register("nl", _reads_all(table(
    f"-b= -d= -f= -h= -i= -l= -n= -p -s= -v= -w= --body-numbering= --section-delimiter= "
    f"--number-format= --number-width= --number-separator= --starting-line-number= {_COMMON_FILTER}"
)))  # fmt: skip
register(
    "shuf",
    _reads_all(table(f"-e -i= -n= -r -z --echo --input-range= --head-count= --repeat {_COMMON_FILTER}")),
)
register("numfmt", _reads_all(table(
    f"-d= -z --from= --to= --field= --format= --padding= --round= --suffix= --header --invalid= "
    f"--from-unit= --to-unit= --grouping {_COMMON_FILTER}"
)))  # fmt: skip
register("less zless", _pager(LESS))
register("more", _pager(MORE))
register("wc", _reads_all(WC))
register("stat", _reads_all(STAT))
register("file", _reads_all(FILE))
register("tree", _reads_all(TREE))
register("od", _reads_all(OD))
register("xxd", _second_writes(XXD))
register("uniq", _second_writes(UNIQ))
register("hexdump", _reads_all(HEXDUMP))
register("strings", _reads_all(STRINGS))
register("sha1sum sha256sum sha512sum md5sum md5 shasum cksum b2sum sha224sum sha384sum", _reads_all(SUMS))
register("readlink realpath", _reads_all(READLINK))
register("diff colordiff", _reads_all(DIFF))
register("diff3", _reads_all(DIFF3))
register("sdiff", _reads_all(SDIFF))
register("cmp", _reads_all(CMP))
register("comm", _reads_all(COMM))
register("paste", _reads_all(PASTE))
register("join", _reads_all(JOIN))
register("zcat bzcat xzcat gzcat", _reads_all(ZCAT))
register("getfacl", _reads_all(GETFACL))
register("pr", _reads_all(PR))
register("iconv", _reads_all(ICONV))
register("base64 base32", _reads_all(BASE64))
register("bat", _reads_all(BAT))
register("delta", _reads_all(DELTA))
register("exa eza lsd", _reads_all(EZA))
register("fd fdfind", _reads_after_first(FD))
register("look", _reads_after_first(LOOK))
register("wdiff", _reads_all(WDIFF))
register("icdiff", _reads_all(ICDIFF))
register("head tail", _reads_all(HEAD))
register("du", _reads_all(DU))
register("ls ll la vdir", _reads_all(LS))
register("cut", _reads_all(CUT))
register("env printenv", _environment)
register("grep egrep fgrep zgrep", _reads_after_first(GREP, ("-e", "-f", "--regexp", "--file")))
register("rg", _reads_after_first(RG, ("-e", "-f", "--regexp", "--file")))
register("ag", _reads_after_first(AG, ("-e", "-f", "--regexp", "--file")))
register("ack", _reads_after_first(ACK, ("-e", "-f", "--regexp", "--file")))
register("ugrep", _reads_after_first(UGREP, ("-e", "-f", "--regexp", "--file")))
register("jq gojq jaq", _reads_after_first(JQ, ("-f", "--from-file")))
register("yq", _reads_after_first(YQ, ("--from-file", "--expression")))
register("touch", _writes_all(TOUCH))
register("mkdir", _writes_all(MKDIR))
register("rmdir", _writes_all(RMDIR))
register("truncate", _writes_all(TRUNCATE))
register("mkfifo mknod", _writes_all(MKFIFO))
register("chmod chown chgrp", _writes_all(CHMOD, skip_first=True))
register("chattr", _writes_all(CHATTR, skip_first=True))
register("setfacl", _writes_all(SETFACL))
register("rm", _rm)
register("unlink shred srm", _writes_all(SHRED))
register("cp", _copy(CP))
register("mv", _copy(MV, "moves into"))
register("ln", _copy(LN, "creates a link at"))
register("install", _copy(INSTALL))
register("dd", _dd)
register("tee", _tee)
register("sed gsed", _sed)
register("awk gawk mawk nawk", _awk)
register("sort", _sort)
register("find", _find)
register("patch", _patch)
register("mktemp", _mktemp)
