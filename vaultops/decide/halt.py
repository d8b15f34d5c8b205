"""The fleet's kill switch, as the person writes it: a ``halt`` property in the dashboard note.  Pure.

The dashboard note (``_System/vaultops.md``) is in every clone, and the phone edits it like any note, so a
property there reaches every machine with its next fetch.  vaultops redraws that note whole, so the
person's halt lines are kept verbatim (``HaltMark.kept``), at the end of the frontmatter, where Obsidian's
properties view adds a new property; kept verbatim, ``git blame`` still names the commit that set them.

Read forgivingly, as a person on a phone types it: the key in any case and spelling (``halt``, ``Halt``,
``HALT``), the value ``yes``/``true``/``on``/``stop``… or ``no``/``false``/``off``/``resume``…, with or
without quotes, with a reason after the word (``halt: yes, it is deleting files``) or in ``halt_reason``.
The lines are read one by one rather than as YAML, so that a typo elsewhere in the frontmatter (or in the
halt line itself) never hides a halt.  A value that is neither yes nor no halts: a kill switch fails
closed.  An empty value (Obsidian adds the property before its value is typed) is no halt yet.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

HALT_KEY = "halt"
REASON_KEYS = frozenset({"haltreason", "haltwhy", "haltedbecause", "reasonforhalt"})
BY_KEYS = frozenset({"haltedby", "haltby"})  # who halted, when vaultops wrote it for a chat's user
PERSON_KEYS = frozenset({HALT_KEY}) | REASON_KEYS | BY_KEYS  # the lines of the person's, kept verbatim
ON = frozenset({"yes", "y", "true", "on", "1", "halt", "halted", "stop", "stopped", "now", "x", "checked"})
OFF = frozenset(
    {"no", "n", "false", "off", "0", "resume", "resumed", "go", "run", "none", "null", "unchecked"}
)
_DELIMITER = frozenset({"---", "..."})
_KEY = re.compile(r"""^(?P<key>["']?[^\s#:'"-][^:]*?["']?)\s*:(?:\s+(?P<value>.*?))?\s*$""")
_ITEM = re.compile(r"^\s*-\s+(?P<value>.*?)\s*$")
_WORD = re.compile(r"[^\W_]+")
_LEAD = " \t,;:.-–—()[]"


@dataclass(frozen=True, slots=True)
class HaltMark:
    """What the note says.  ``line``: the first ``halt`` line's index in the note (for ``git blame``);
    ``kept``: every halt line of the person, verbatim, in their order."""

    halted: bool
    reason: str = ""
    line: int | None = None
    kept: tuple[str, ...] = ()
    by: str = ""  # a ``halted_by`` line's value: who, when no commit can say it (a chat's user)


def key_of(raw: str) -> str:
    """A property's name as compared: lower case, without quotes, spaces, ``_`` or ``-``."""
    return "".join(_WORD.findall(raw.lower()))


def frontmatter_lines(lines: list[str]) -> range:
    """The indexes of the frontmatter's lines (between its ``---`` lines); empty when it has none or it is
    never closed."""
    if not lines or lines[0].lstrip("\ufeff").strip() != "---":
        return range(0)
    for end in range(1, len(lines)):
        if lines[end].strip() in _DELIMITER:
            return range(1, end)
    return range(0)


def scalar(value: str) -> str:
    """A YAML scalar as a person means it: its comment and quotes gone."""
    value = value.strip()
    if value[:1] in {'"', "'"} and value.endswith(value[0]) and len(value) > 1:
        return value[1:-1].strip()
    return re.sub(r"\s+#.*$", "", value).strip()


def switch(value: str) -> tuple[bool, str]:
    """(halted, the reason given with it) for a ``halt`` value."""
    words = _WORD.findall(value.lower())
    if not words or " ".join(words) in OFF or words[0] in OFF:
        return False, ""
    if words[0] in ON:
        first = re.search(r"[^\W_]+", value)
        rest = value[first.end() :] if first is not None else ""
        return True, rest.strip(_LEAD)
    return True, value.strip()  # neither yes nor no: a kill switch fails closed, and says what it read


def _entries(lines: list[str]) -> list[tuple[int, str, str, tuple[str, ...]]]:
    """The frontmatter's top-level properties: (line index, key as compared, value, its lines verbatim).
    A list's first item is its value (``halt:`` then ``  - yes``)."""
    out: list[tuple[int, str, str, list[str]]] = []
    for i in frontmatter_lines(lines):
        line = lines[i]
        if line[:1] in {" ", "\t", "-"} and out:  # a continuation of the property above
            out[-1][3].append(line)
            item = _ITEM.match(line)
            if item and not out[-1][2]:
                out[-1] = (out[-1][0], out[-1][1], item["value"], out[-1][3])
            continue
        found = _KEY.match(line)
        if found is None:
            out.append((i, "", "", [line]))
            continue
        out.append((i, key_of(found["key"]), found["value"] or "", [line]))
    return [(i, key, scalar(value), tuple(verbatim)) for i, key, value, verbatim in out]


def read_halt(text: str) -> HaltMark:
    """The halt the note's frontmatter says; never raises, whatever the text."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]  # as git numbers them, for blame
    halted, line, said, reason, by = False, None, "", "", ""
    kept: list[str] = []
    for i, key, value, verbatim in _entries(lines):
        if key == HALT_KEY:
            on, given = switch(value)
            if on and not halted:  # any halt line that says yes halts: the switch fails closed
                halted, said, line = True, given, i
            line = i if line is None else line
            kept += verbatim
        elif key in REASON_KEYS:
            reason = reason or value
            kept += verbatim
        elif key in BY_KEYS:
            by = by or value
            kept += verbatim
    if not halted:
        return HaltMark(False, "", line, tuple(kept))
    return HaltMark(True, reason or said, line, tuple(kept), by)


@dataclass(frozen=True, slots=True)
class Halted:
    """The fleet's halt as a machine shows it: why, and who set it (a commit's author, a chat's user)."""

    reason: str
    by: str

    def sentence(self) -> str:
        why = self.reason or "no reason given"
        return f"HALTED by {self.by}: {why}"


def note_text(raw: bytes | None) -> str:
    """A note's bytes as text that encodes back to the very same bytes (``surrogateescape``)."""
    return raw.decode("utf-8", "surrogateescape") if raw else ""


def marked(raw: bytes | None) -> HaltMark:
    """``read_halt`` of a note's bytes (None: no such note)."""
    return read_halt(note_text(raw))


def person_changed(committed: bytes | None, now: bytes | None) -> bool:
    """Whether the halt lines differ between two versions of the dashboard: the person's change, which
    a redraw or a sync must never drop (every other line of the note is vaultops's)."""
    return marked(committed).kept != marked(now).kept


def carry_halt(before: bytes | None, after: bytes | None, now: bytes) -> bytes | None:
    """``now`` (the remote's rendering of the dashboard) with the halt lines of ``after`` in place of its
    own, when this clone's commit changed them since ``before``; None when it did not (the remote's
    rendering stands as it is)."""
    if after is None or not person_changed(before, after):
        return None
    return with_lines(note_text(now), marked(after).kept).encode("utf-8", "surrogateescape")


def with_lines(text: str, kept: Sequence[str]) -> str:
    """``text`` with its halt lines replaced by ``kept``, at the end of its frontmatter (one is made when
    it has none)."""
    lines = text.split("\n")
    inside = frontmatter_lines(lines)
    if not inside and not (lines and lines[0].strip() == "---"):
        lines = ["---", "---", *lines]
    drop = {
        i + k for i, key, _, verbatim in _entries(lines) if key in PERSON_KEYS for k in range(len(verbatim))
    }
    end = inside.stop if inside else 1
    return "\n".join([ln for i, ln in enumerate(lines[:end]) if i not in drop] + list(kept) + lines[end:])


def chat_lines(halt: bool, reason: str, who: str) -> tuple[str, ...]:
    """The halt lines vaultops writes for ``/halt <reason>`` or ``/resume`` from chat: one line each,
    quoted so that no reason can end the frontmatter or start another property."""
    if not halt:
        return ("halt: no",)

    def quoted(text: str) -> str:
        clean = " ".join(text.replace("\\", "/").replace('"', "'").split())
        return f'"{clean}"'

    return ("halt: yes", f"halt_reason: {quoted(reason)}", f"halted_by: {quoted(who)}")
