"""Rules for programs that read, write, move and delete files, and the read-only builtins."""

from __future__ import annotations

import re
from collections.abc import Iterable

from vaultops.policy.bash import Word
from vaultops.policy.judge import (
    Handler,
    Judge,
    action,
    flag_value,
    has,
    names,
    positionals,
    read_only,
    register,
)


def _reads_all(value_opts: Iterable[str] = ()) -> Handler:
    def rule(j: Judge, args: list[Word]) -> None:
        for w in positionals(args, value_opts):
            j.read(w)
        j.add("read", "reads")

    return rule


def _reads_after_first(value_opts: Iterable[str] = (), script_flags: Iterable[str] = ()) -> Handler:
    """grep PATTERN FILES…, jq FILTER FILES…: the first positional is not a path (unless -e/-f gave it)."""
    flags = tuple(script_flags)

    def rule(j: Judge, args: list[Word]) -> None:
        pos = positionals(args, value_opts)
        for w in pos[0 if flags and has(args, *flags) else 1 :]:
            j.read(w)
        j.add("read", "reads")

    return rule


def _writes_all(value_opts: Iterable[str] = (), skip_first: bool = False) -> Handler:
    def rule(j: Judge, args: list[Word]) -> None:
        pos = positionals(args, value_opts)
        if skip_first and pos:  # chmod MODE FILES…, chown OWNER FILES…
            pos = pos[1:]
        for w in pos:
            j.write(w)
        if not pos:
            j.add("read", "changes nothing")

    return rule


def _rm(j: Judge, args: list[Word]) -> None:
    recursive = has(args, "-r", "-R", "--recursive")
    for w in positionals(args):
        j.delete(w, recursive)


def _find(j: Judge, args: list[Word]) -> None:
    i = 0
    while i < len(args) and (args[i].text in ("-H", "-L", "-P") or args[i].text.startswith(("-O", "-D"))):
        i += 1
    roots = []
    while i < len(args) and not args[i].text.startswith(("-", "(", "!", ")")):
        roots.append(args[i])
        i += 1
    roots = roots or [Word(".")]
    for root in roots:
        j.read(root)
        if any(a.text == "-delete" for a in args):
            j.delete(root, recursive=True)
    for flag in ("-fprint", "-fprint0", "-fprintf", "-fls"):
        target = flag_value(args, flag)
        if target is not None:
            j.write(target)


def _cp(j: Judge, args: list[Word]) -> None:
    opts = ("-t", "--target-directory", "-S", "--suffix")
    pos = positionals(args, opts)
    target = flag_value(args, "-t", "--target-directory")
    if target is None and len(pos) >= 2:
        target, pos = pos[-1], pos[:-1]
    for w in pos:
        j.read(w)
    if target is not None:
        j.write(target)


def _mv(j: Judge, args: list[Word]) -> None:
    pos = positionals(args, ("-t", "--target-directory", "-S", "--suffix"))
    target = flag_value(args, "-t", "--target-directory")
    for w in pos:  # the sources disappear: moving is writing them too
        j.write(w, "moves")
    if target is not None:
        j.write(target, "moves into")


def _ln(j: Judge, args: list[Word]) -> None:
    pos = positionals(args, ("-t", "--target-directory", "-S", "--suffix"))
    target = flag_value(args, "-t", "--target-directory")
    if has(args, "-s", "--symbolic"):
        # a link to outside lets a later write in the same command leave the worktree unseen
        for source in pos if target is not None else pos[:-1] or pos:
            if any(p.where not in ("inside", "temp") for p in j.places(source)):
                j.add("unknown", f"links to {source.text}, outside the worktree")
    if target is not None:
        j.write(target)
    elif len(pos) >= 2:
        j.write(pos[-1], "creates a link at")
    elif pos:
        j.write(Word(pos[0].text.rstrip("/").rsplit("/", 1)[-1] or "."), "creates a link at")


def _install(j: Judge, args: list[Word]) -> None:
    pos = positionals(args, ("-m", "--mode", "-o", "--owner", "-g", "--group", "-t", "--target-directory"))
    if has(args, "-d", "--directory"):
        for w in pos:
            j.write(w)
        return
    _cp(j, [a for a in args if a.text not in ("-m", "-o", "-g")])


def _dd(j: Judge, args: list[Word]) -> None:
    for w in args:
        key, eq, value = w.text.partition("=")
        if eq and key == "of":
            j.write(Word(value, w.dynamic, w.glob))
        elif eq and key == "if":
            j.read(Word(value, w.dynamic, w.glob))
    j.add("read", "copies data")


def _tee(j: Judge, args: list[Word]) -> None:
    for w in positionals(args):
        j.write(w)
    j.add("read", "copies its input")


def _sed(j: Judge, args: list[Word]) -> None:
    in_place = has(args, "--in-place") or any(re.fullmatch(r"-[a-zA-Z]*i.*", a.text) for a in args)
    pos = positionals(args, ("-e", "--expression", "-f", "--file", "-l", "--line-length"))
    files = pos if has(args, "-e", "--expression", "-f", "--file") else pos[1:]
    for w in files:
        if in_place:
            j.write(w, "edits in place")
        else:
            j.read(w)
    j.add("read", "filters text")


def _awk(j: Judge, args: list[Word]) -> None:
    pos = positionals(args, ("-f", "-v", "-F", "--file", "--assign", "--field-separator", "-i", "--include"))
    if not has(args, "-f", "--file") and pos:
        j.inline_code(pos[0].text, "awk")
        pos = pos[1:]
    include = flag_value(args, "-i", "--include")
    for w in pos:
        if "=" in w.text:
            continue  # var=value between files
        if include is not None and include.text == "inplace":
            j.write(w, "edits in place")
        else:
            j.read(w)


def _sort(j: Judge, args: list[Word]) -> None:
    out = flag_value(args, "-o", "--output")
    if out is not None:
        j.write(out)
    for w in positionals(args, ("-o", "--output", "-k", "--key", "-t", "--field-separator", "-S", "-T")):
        j.read(w)
    j.add("read", "sorts")


def _tar(j: Judge, args: list[Word]) -> None:
    first = args[0].text if args else ""
    bundle = first if first and not first.startswith("-") else ""
    extract = "x" in bundle or has(args, "-x", "--extract", "--get")
    create = "c" in bundle or "r" in bundle or "u" in bundle or has(args, "-c", "--create", "-r", "--append")
    archive = flag_value(args, "-f", "--file")
    if archive is None and bundle and "f" in bundle and len(args) > 1:
        archive = args[1]
    j.with_cwd(flag_value(args, "-C", "--directory"))
    if extract:
        j.write(Word("."), "extracts an archive into")
        if archive is not None:
            j.read(archive)
    elif create and archive is not None:
        j.write(archive)
    elif archive is not None:
        j.read(archive)
    j.add("read", "archives")


def _unzip(j: Judge, args: list[Word]) -> None:
    if has(args, "-l", "-t", "-v", "-Z"):
        j.add("read", "lists an archive")
        return
    target = flag_value(args, "-d")
    j.write(target or Word("."), "extracts an archive into")


def _compress(j: Judge, args: list[Word]) -> None:
    if has(args, "-c", "--stdout", "-l", "--list", "-t", "--test"):
        for w in positionals(args):
            j.read(w)
        j.add("read", "reads compressed data")
        return
    for w in positionals(args, ("-S", "--suffix")):
        j.write(w, "compresses or expands in place")


def _zip(j: Judge, args: list[Word]) -> None:
    pos = positionals(args, ("-x", "-i", "-b", "-n", "-t", "-tt"))
    if pos:
        j.write(pos[0])
    for w in pos[1:]:
        j.read(w)


def _environment(j: Judge, args: list[Word]) -> None:
    """``env`` or ``printenv`` alone prints every variable, tokens included; one named variable is fine."""
    if [w for w in positionals(args, ("-u", "--unset")) if "=" not in w.text]:
        j.add("read", "prints a variable")
    else:
        j.add("read_secrets", "prints the whole environment, tokens included")


register(
    "echo printf true false : pwd whoami id groups uname date cal uptime which whereis type "
    "hash nproc arch lscpu free vmstat df ps pgrep pidof jobs sleep wait test [ [[ seq yes expr bc dc "
    "factor getconf locale tput stty clear reset history alias unalias set unset export declare typeset "
    "local readonly shift read return exit break continue trap umask ulimit cd pushd popd dirs man help "
    "info whatis apropos tty logname users who w last lsblk lsusb lspci netstat ss lsof sw_vers "
    "system_profiler journalctl dmesg getent mdfind mdls basename dirname eval watch "
    "command builtin shopt complete compgen fc bind let disown suspend times enable caller mapfile "
    "readarray nohup time nice timeout stdbuf ionice setsid exec xargs flock caffeinate unbuffer chronic "
    "column rev fold fmt expand unexpand nl tac seq shuf numfmt tsort printf vdir dircolors tput "
    "notify-send say true htop top iostat mpstat sar nvidia-smi ulimit sha1sum lsattr ldd nm objdump "
    "readelf otool",
    read_only,
)
register(
    "cat less more wc stat file tree od xxd hexdump strings sha256sum sha512sum md5sum md5 shasum "
    "cksum b2sum readlink realpath diff cmp comm uniq paste join zcat bzcat xzcat gzcat zless getfacl pr "
    "iconv base64 base32 diff3 colordiff delta bat exa eza lsd fd fdfind look wdiff sdiff icdiff",
    _reads_all(),
)
register("head tail", _reads_all(("-n", "-c", "--lines", "--bytes")))
register("du", _reads_all(("-d", "--max-depth", "--exclude", "-t", "--threshold", "-B", "--block-size")))
register("ls ll la", _reads_all(("-I", "--ignore", "-w", "--width", "-T", "--tabsize", "--hide")))
register("cut", _reads_all(("-d", "-f", "-c", "-b", "--delimiter", "--fields")))
register("env printenv", _environment)
register(
    "grep egrep fgrep rg ag ack zgrep ugrep",
    _reads_after_first(
        names(
            "-e -f -m -A -B -C --include --exclude --exclude-dir -g --glob -t --type --max-count -d -D "
            "--context --after-context --before-context --color --colour -T --type-add -j --threads -M "
            "--max-columns --regexp --file"
        ),
        ("-e", "-f", "--regexp", "--file"),
    ),
)
register(
    "jq yq gojq jaq",
    _reads_after_first(
        ("--arg", "--argjson", "--slurpfile", "--rawfile", "-f", "--from-file", "--indent", "--tab"),
        ("-f", "--from-file"),
    ),
)
register(
    "touch mkdir rmdir truncate mkfifo mknod",
    _writes_all(("-m", "--mode", "-d", "--date", "-r", "--reference", "-s", "--size", "-t")),
)
register("chmod chown chgrp chattr setfacl", _writes_all(("--reference",), skip_first=True))
register("rm", _rm)
register("unlink shred srm", _writes_all(("-n", "--iterations", "-s", "--size")))
register("cp", _cp)
register("mv", _mv)
register("ln", _ln)
register("install", _install)
register("dd", _dd)
register("tee", _tee)
register("sed gsed", _sed)
register("awk gawk mawk nawk", _awk)
register("sort", _sort)
register("find", _find)
register("tar gtar bsdtar", _tar)
register("unzip", _unzip)
register("gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 compress uncompress", _compress)
register("zip 7z", _zip)
register("patch", action("edit_worktree", "applies a patch in the worktree"))
register("mktemp", action("temp_write", "makes a temporary file"))
