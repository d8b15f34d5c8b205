"""Option tables: what each option of a program does, so that only options the policy knows are approved.

A table is written as one string, one option a word, a suffix saying what the option does:

    -l            a flag, takes no value
    -n=           takes a value (``-n 5``, ``-n5``, ``--lines=5``)
    -o=w          its value is a path the program writes
    -f=r          its value is a path the program reads
    -e=!          its value is code the program runs (escalated)
    -x!           a flag that makes the program run code (escalated)
    --arg=2       takes two values (jq ``--arg NAME VALUE``); ``=2r``: the second is a path it reads
    --color?      a long option whose value is optional (only ``--color=always``)

Short flags bundle the way getopt reads them (``-la``; ``-n5``; ``-czf FILE``).  A long option must be
spelled out: getopt accepts unambiguous abbreviations (``--checkpoint-act=…``), and a table cannot know
them all, so an abbreviation is an option the policy does not know.  What ``read_options`` does not know is
``unknown`` (escalated), never ``read``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from vaultops.policy.bash import Word

Effect = Literal["flag", "value", "write", "read", "code", "runs", "optional", "pair", "pair_read"]
_SUFFIX: dict[str, Effect] = {
    "=": "value", "=w": "write", "=r": "read", "=!": "code", "!": "runs", "?": "optional", "=2": "pair",
    "=2r": "pair_read",
}  # fmt: skip
_NUMBER = re.compile(r"^-\d+$")


@dataclass(frozen=True)
class Options:
    """One program's option table; ``numeric``: ``-5`` is a count (head, tail, grep -3)."""

    effects: dict[str, Effect]
    numeric: bool = False

    def effect(self, option: str) -> Effect | None:
        return self.effects.get(option)

    @property
    def dangerous(self) -> bool:
        """Some option runs code or writes a file: an argument that may expand to an option is not known."""
        return any(e in ("write", "code", "runs") for e in self.effects.values())


def table(text: str, numeric: bool = False) -> Options:
    """An option table from its one-string form (see the module's docstring)."""
    effects: dict[str, Effect] = {}
    for word in text.split():
        for suffix in ("=2r", "=2", "=w", "=r", "=!", "=", "!", "?"):
            if word.endswith(suffix) and len(word) > len(suffix) + 1:
                effects[word[: -len(suffix)]] = _SUFFIX[suffix]
                break
        else:
            effects[word] = "flag"
    return Options(effects, numeric)


def merge(*tables: Options) -> Options:
    effects: dict[str, Effect] = {}
    for t in tables:
        effects.update(t.effects)
    return Options(effects, any(t.numeric for t in tables))


class Sink(Protocol):
    """What ``read_options`` reports to: the ``Judge`` (kept abstract so this module stays below it)."""

    def add(self, name: str, why: str) -> None: ...

    def write(self, word: Word, verb: str = ...) -> None: ...

    def read(self, word: Word) -> None: ...


@dataclass(frozen=True)
class Parsed:
    """The arguments that are not options, and the value of each option given (the last one wins)."""

    positionals: list[Word]
    values: dict[str, Word]
    given: frozenset[str]
    pairs: tuple[tuple[str, Word], ...] = ()  # every option given a value, in order (``-d a -d @b``)

    def has(self, *options: str) -> bool:
        return any(o in self.given for o in options)

    def value(self, *options: str) -> Word | None:
        for o in options:
            if o in self.values:
                return self.values[o]
        return None


def read_options(
    sink: Sink, program: str, args: Sequence[Word], opts: Options, stop_at_first: bool = False
) -> Parsed:
    """Walk ``args`` as getopt would; report unknown options, code, writes and reads to ``sink``.

    ``stop_at_first``: options end at the first positional (POSIX order: ``xargs``, ``env``, a subcommand)."""
    positionals: list[Word] = []
    values: dict[str, Word] = {}
    given: set[str] = set()
    pairs: list[tuple[str, Word]] = []

    def apply(option: str, effect: Effect, value: Word | None) -> None:
        given.add(option)
        if value is not None:
            values[option] = value
            pairs.append((option, value))
        if effect == "runs":
            sink.add("unknown", f"{program} {option} makes it run a command")
        elif effect == "code":
            sink.add("unknown", f"{program} {option} runs {value.text if value else 'code'!r} as a command")
        elif effect == "write" and value is not None:
            sink.write(value)
        elif effect == "read" and value is not None:
            sink.read(value)

    def from_next(option: str, effect: Effect, i: int) -> int:
        """Apply ``option``, its value (or two) taken from the arguments at ``i``; the index after them."""
        if effect in ("flag", "runs", "optional"):
            apply(option, effect, None)
            return i
        if effect in ("pair", "pair_read"):
            if effect == "pair_read" and i + 1 < len(args):
                sink.read(args[i + 1])
            given.add(option)
            return i + 2
        apply(option, effect, args[i] if i < len(args) else Word("", dynamic=True))
        return i + 1

    def unknown(option: str) -> None:
        sink.add("unknown", f"{option} is an option of {program} the policy does not know")

    i = 0
    while i < len(args):
        word = args[i]
        text = word.text
        i += 1
        if text == "--":
            positionals.extend(args[i:])
            break
        if word.dynamic and not text.startswith("-") and text[:1] in "$`" and opts.dangerous:
            sink.add("unknown", f"{program} is given {text!r}, which may expand to a risky option")
        if not text.startswith("-") or text == "-":
            positionals.append(word)
            if stop_at_first:
                positionals.extend(args[i:])
                break
            continue
        if word.dynamic:
            sink.add("unknown", f"{program} is given an option only known when it runs ({text})")
            continue
        if opts.numeric and _NUMBER.match(text):
            continue
        whole = opts.effect(text) if not text.startswith("--") and len(text) > 2 else None
        if whole is not None:  # a single-dash word the table names whole: find's -name, xxd's -ps
            i = from_next(text, whole, i)
            continue
        if text.startswith("--"):
            name, eq, rest = text.partition("=")
            effect = opts.effect(name)
            if effect is None or (eq and effect in ("flag", "runs")):
                unknown(text if effect else name)
            elif eq:
                apply(name, effect, Word(rest, word.dynamic, word.glob))
            else:
                i = from_next(name, effect, i)
            continue
        # a bundle of short options: -la, -n5, -czf FILE
        j = 1
        while j < len(text):
            option = "-" + text[j]
            effect = opts.effect(option)
            if effect is None:
                if opts.numeric and text[j:].isdigit():
                    break
                unknown(option if len(text) == 2 else f"{option} (in {text})")
                break
            if effect == "optional" and text[j + 1 :].isdigit():  # make -j4: an optional value, attached
                apply(option, effect, Word(text[j + 1 :]))
                break
            if effect in ("flag", "runs", "optional"):
                apply(option, effect, None)
                j += 1
                continue
            attached = text[j + 1 :]
            if attached:
                apply(option, effect, Word(attached, word.dynamic, word.glob))
            else:
                i = from_next(option, effect, i)
            break
    return Parsed(positionals, values, frozenset(given), tuple(pairs))
