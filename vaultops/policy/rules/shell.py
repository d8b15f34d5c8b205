"""Rules for the shell's builtins and the wrappers that run another command.

The command a wrapper runs (``timeout 10 CMD``, ``xargs CMD``) and the code ``trap`` and ``alias`` are given
are found and judged by the splitter; here are judged the wrappers' own options (``time -o FILE`` writes,
``xargs -a FILE`` reads), the builtins that print every variable (``set``, ``declare -p``, ``export -p``,
``compgen -v``), the ones that set a variable that changes what runs (``export PATH=…``, ``read IFS``,
``printf -v BASH_ENV``), and those that make a name run something else (``hash -p``, ``enable -f``,
``alias``) or run code of their own (``bind -x``, ``complete -C``, ``mapfile -C``, ``fc``).
"""

from __future__ import annotations

import re

from vaultops.policy.bash import Word
from vaultops.policy.environ import changes_what_runs
from vaultops.policy.judge import Handler, Judge, register
from vaultops.policy.options import read_options, table
from vaultops.policy.rules.tables import WRAPPERS


def _risky_names(j: Judge, words: list[str]) -> None:
    for text in words:
        name = text.partition("=")[0].split("[", 1)[0]
        value = text.partition("=")[2] if "=" in text else None
        if re.fullmatch(r"[A-Za-z_]\w*", name) and changes_what_runs(name, value):
            j.add("unknown", f"sets {name}, which changes what runs or what it loads")


def _wrapper(j: Judge, args: list[Word]) -> None:
    name = j.cmd.name
    parsed = read_options(j, name, args, WRAPPERS[name], stop_at_first=True)
    if name == "flock" and parsed.positionals:
        j.write(parsed.positionals[0], "locks")
    j.add("read", f"{name} runs the command judged on its own" if j.cmd.wraps else name)


_DECLARE = table("-a -A -f -F -g -i -I -l -n -r -t -u -x -p +a +A +f +F +g +i +l -n +r +t +u +x +n")
_PRINTS_VALUES = frozenset({"declare", "typeset", "export", "readonly", "local"})


def _declare(j: Judge, args: list[Word]) -> None:
    """declare/typeset/export/readonly/local: with no names (or -p) they print variables, values and all."""
    flags = {c for w in args if re.fullmatch(r"[-+][a-zA-Z]+", w.text) for c in w.text[1:]}
    names = [w for w in args if not re.fullmatch(r"[-+][a-zA-Z]+", w.text) and w.text != "--"]
    unknown = flags - set("aAfFgiIlnrtuxp")
    for c in sorted(unknown):
        j.add("unknown", f"-{c} is an option of {j.cmd.name} the policy does not know")
    for w in names:
        if w.dynamic and "=" not in w.text:
            j.add("unknown", f"{j.cmd.name} is given {w.text!r}, a name only known when it runs")
    _risky_names(j, [w.text for w in names])
    if "n" in flags:  # a nameref: assigning the name later sets the variable it refers to
        for w in names:
            target = w.text.partition("=")[2]
            if w.dynamic or (target and changes_what_runs(target.split("[", 1)[0])):
                j.add("unknown", f"{j.cmd.name} -n {w.text}: a name for a variable that changes what runs")
    functions = flags & set("fF")
    if (not names or "p" in flags) and not functions:
        j.add("read_secrets", f"{j.cmd.name} prints variables, tokens included")
    j.add("read", j.cmd.name)


def _set(j: Judge, args: list[Word]) -> None:
    if not args:
        j.add("read_secrets", "set prints every variable, tokens included")
        return
    j.add("read", "set")


def _compgen(j: Judge, args: list[Word]) -> None:
    texts = [w.text for w in args]
    if any(re.fullmatch(r"-[a-zA-Z]*[CF][a-zA-Z]*", t) for t in texts):
        j.add("unknown", f"{j.cmd.name} -C/-F runs a command or function of its own")
    listing = any(re.fullmatch(r"-[a-zA-Z]*[ve][a-zA-Z]*", t) for t in texts)
    actions = [texts[i + 1] for i, t in enumerate(texts[:-1]) if t == "-A"]
    if j.cmd.name == "compgen" and (listing or any(a in ("variable", "export") for a in actions)):
        j.add("read_secrets", "lists the variables")
    j.add("read", j.cmd.name)


def _printf(j: Judge, args: list[Word]) -> None:
    if args and args[0].text.startswith("-v"):
        target = args[0].text[2:] or (args[1].text if len(args) > 1 else "")
        _risky_names(j, [target])
    j.add("read", "prints")


def _read(j: Judge, args: list[Word]) -> None:
    """read/mapfile/readarray/getopts NAME…: they set the variables named."""
    values = {"read": "-a -d -i -n -N -p -t -u", "mapfile": "-d -n -O -s -u -c -C", "getopts": ""}
    takes = set(values.get(j.cmd.name, values["mapfile"]).split())
    pos: list[str] = []
    i = 0
    while i < len(args):
        t = args[i].text
        if t in ("-C",) and j.cmd.name in ("mapfile", "readarray"):
            j.add("unknown", f"{j.cmd.name} -C runs a callback")
        if t in takes:
            if t == "-a" and i + 1 < len(args):
                pos.append(args[i + 1].text)
            i += 2
            continue
        if not t.startswith("-") or j.cmd.name == "getopts":
            pos.append(t)
        i += 1
    if j.cmd.name == "getopts":
        pos = pos[1:2]
    given = [red.body or red.target.text for red in j.cmd.redirects if red.op in ("<<", "<<-", "<<<")]
    if any(changes_what_runs("REPLY", text) for text in given):  # code kept for arithmetic to run later
        j.add("unknown", f"{j.cmd.name} keeps shell code in a variable, which arithmetic would run")
    _risky_names(j, pos or ["REPLY"])
    j.add("read", j.cmd.name)


def _hash(j: Judge, args: list[Word]) -> None:
    if any(re.fullmatch(r"-[a-zA-Z]*p[a-zA-Z]*", w.text) for w in args):
        j.add("unknown", "hash -p makes a name run another program")
    j.add("read", "hash")


def _enable(j: Judge, args: list[Word]) -> None:
    if [w for w in args if w.text not in ("-a", "-p", "-s", "-n")] or "-n" in (w.text for w in args):
        j.add("unknown", "enable loads or switches off builtins (which changes what a name runs)")
    j.add("read", "enable")


def _code_flags(flags: str, why: str) -> Handler:
    def rule(j: Judge, args: list[Word]) -> None:
        if any(w.text.startswith("-") and set(w.text[1:]) & set(flags) for w in args):
            j.add("unknown", why)
        j.add("read", j.cmd.name)

    return rule


def _fc(j: Judge, args: list[Word]) -> None:
    if not any(re.fullmatch(r"-[lnr]+", w.text) for w in args) or any(w.text in ("-e", "-s") for w in args):
        j.add("unknown", "fc runs commands again or opens an editor")
    j.add("read", "fc")


def _let(j: Judge, args: list[Word]) -> None:
    if any(re.search(r"\$\(|`", w.text) for w in args):  # `let 'a[$(cmd)]'`: a subscript runs a command
        j.add("unknown", "arithmetic with a command substitution in it")
    j.add("read", "arithmetic")


def _alias(j: Judge, args: list[Word]) -> None:
    if any("=" in w.text for w in args):
        j.add("unknown", "alias makes a name run other code (the code is judged too)")
    j.add("read", "alias")


def _history(j: Judge, args: list[Word]) -> None:
    texts = [w.text for w in args]
    if any(re.fullmatch(r"-[a-zA-Z]*[rwan][a-zA-Z]*", t) for t in texts):
        files = [w for w in args if not w.text.startswith("-")]
        writes = any("w" in t or "a" in t for t in texts if t.startswith("-"))
        for w in files:
            if writes:
                j.write(w)
            else:
                j.read(w)
        if not files:
            j.add("unknown", "history reads or writes the history file")
    if any(re.fullmatch(r"-[a-zA-Z]*[ps][a-zA-Z]*", t) for t in texts):
        j.add("unknown", "history -s/-p adds commands to be run again")
    j.add("read", "history")


def _calculator(j: Judge, args: list[Word]) -> None:
    """bc, dc: a file argument is a program read in full (its text in the errors)."""
    for w in args:
        if w.text.startswith("-"):
            if w.text in ("-e", "--expression"):
                continue
            if w.text not in ("-l", "-q", "-s", "-w", "-i", "--mathlib", "--quiet", "-x"):
                j.add("unknown", f"{w.text} is an option of {j.cmd.name} the policy does not know")
        elif not re.fullmatch(r"[\d\s+*/^%().-]*", w.text):
            j.read(w)
    j.add("read", "calculates")


def _shopt(j: Judge, args: list[Word]) -> None:
    j.add("read", "shopt")


def _eval(j: Judge, args: list[Word]) -> None:
    j.add("read", "eval: the code it runs is judged on its own")


def _journalctl(j: Judge, args: list[Word]) -> None:
    if any(w.text.startswith(("--vacuum", "--rotate", "--flush", "--sync", "--relinquish", "--setup-keys"))
           for w in args):  # fmt: skip
        j.add("system_change", "changes the journal")
    j.add("read", "reads the journal")


def _ldd(j: Judge, args: list[Word]) -> None:
    """ldd may run the program it inspects: a system program is fine, others are judged as run."""
    for w in args:
        if w.text.startswith("-"):
            continue
        if all(p.where == "system" for p in j.places(w)):
            j.read(w)
        else:
            j.run_file(w)
    j.add("read", "lists libraries")


def _inspects(j: Judge, args: list[Word]) -> None:
    """nm, objdump, readelf: they print what is in the files named (``objdump -s`` all of it)."""
    for w in args:
        if not w.text.startswith("-"):
            j.read(w)
    j.add("read", "inspects files")


register(" ".join(name for name in WRAPPERS if name != "env"), _wrapper)
register("declare typeset export readonly local", _declare)
register("set", _set)
register("compgen complete", _compgen)
register("printf", _printf)
register("read mapfile readarray getopts", _read)
register("hash", _hash)
register("enable", _enable)
register("bind", _code_flags("xf", "bind -x runs a command on a key, -f reads a file"))
register("fc", _fc)
register("let", _let)
register("alias", _alias)
register("trap", lambda j, a: j.add("read", "trap: the code it sets is judged on its own"))
register("history", _history)
register("bc dc", _calculator)
register("shopt stty", _shopt)
register("eval", _eval)
register("journalctl", _journalctl)
register("ldd", _ldd)
register("torsocks proxychains proxychains4", lambda j, a: j.add("read", "routes the command it runs"))
register("nm objdump readelf otool lsattr", _inspects)
