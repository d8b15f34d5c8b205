"""Rules for archivers and compressors: tar, zip, unzip, gzip and kin.  What they put in an archive is read
(``tar -czf x.tgz ~/.ssh`` reads secrets), what they extract is written, and their options that run a program
(``--to-command``, ``--checkpoint-action``, ``-I``, ``zip -TT``) are in their option tables."""

from __future__ import annotations

import re

from vaultops.policy.bash import Word
from vaultops.policy.judge import Judge, register
from vaultops.policy.options import Options, Parsed, read_options
from vaultops.policy.rules.tables import COMPRESS, TAR, UNZIP, ZIP


def _opts(j: Judge, args: list[Word], opts: Options) -> Parsed:
    return read_options(j, j.cmd.name, args, opts)


_TAR_VALUE_LETTERS = "fCbgKLNVHTXI F"


def _tar(j: Judge, args: list[Word]) -> None:
    if args and not args[0].text.startswith("-") and re.fullmatch(r"[A-Za-z]+", args[0].text):
        # the old style, `tar czf FILE DIR`: one letter an option, the values follow in their order
        letters, rest, expanded = args[0].text, list(args[1:]), []
        for letter in letters:
            expanded.append(Word("-" + letter))
            if letter in _TAR_VALUE_LETTERS and rest:
                expanded.append(rest.pop(0))
        args = expanded + rest
    parsed = _opts(j, args, TAR)
    extract = parsed.has("-x", "--extract", "--get")
    create = parsed.has("-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate")
    archive = parsed.value("-f", "--file")
    if archive is not None and re.match(r"^[^/]*:", archive.text) and not parsed.has("--force-local"):
        j.add("unknown", f"tar reaches {archive.text} through a remote shell")
    if parsed.has("-P", "--absolute-names") and extract:
        j.add("unknown", "tar extracts with absolute names, anywhere on the machine")
    j.with_cwd(parsed.value("-C", "--directory"))
    members = parsed.positionals
    if extract:
        if not parsed.has("-O", "--to-stdout"):
            j.write(Word("."), "extracts an archive into")
        if archive is not None:
            j.read(archive)
    elif create:
        if archive is not None and archive.text != "-":
            j.write(archive)
        for w in members:
            j.read(w)
            if parsed.has("--remove-files"):
                j.delete(w, recursive=True)
    elif parsed.has("--delete") and archive is not None:
        j.write(archive)
    elif archive is not None:
        j.read(archive)
    j.add("read", "archives")


def _unzip(j: Judge, args: list[Word]) -> None:
    parsed = _opts(j, args, UNZIP)
    for w in parsed.positionals[:1]:
        j.read(w)
    if parsed.has("-l", "-t", "-v", "-Z", "-p", "-c", "-z"):
        j.add("read", "lists an archive")
        return
    j.write(parsed.value("-d") or Word("."), "extracts an archive into")


def _compress(j: Judge, args: list[Word]) -> None:
    parsed = _opts(j, args, COMPRESS)
    out = parsed.value("-o")
    if out is not None:
        j.write(out)
    if parsed.has("-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test") or out is not None:
        for w in parsed.positionals:
            j.read(w)
        j.add("read", "reads compressed data")
        return
    for w in parsed.positionals:
        j.read(w)
        j.write(w, "compresses or expands in place")


def _zip(j: Judge, args: list[Word]) -> None:
    parsed = _opts(j, args, ZIP)
    pos = parsed.positionals
    if parsed.value("-O", "--out") is None and pos:
        j.write(pos[0])
    elif pos:
        j.read(pos[0])
    for w in pos[1:]:
        j.read(w)
        if parsed.has("-m", "--move"):
            j.delete(w, recursive=parsed.has("-r", "--recurse-paths"))
    if parsed.has("-@"):
        j.add("unknown", "zip takes the files to archive from its input")


register("tar gtar bsdtar", _tar)
register("unzip", _unzip)
register("gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 compress uncompress", _compress)
register("zip", _zip)
