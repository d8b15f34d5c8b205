"""``vaultops submit``: append a new request block to the inbox, safely."""

from __future__ import annotations

import re
from datetime import datetime

from vaultops import lines as fmt
from vaultops.base.errors import VaultopsError
from vaultops.classifier.rules import TYPES
from vaultops.commands.output import Output
from vaultops.scan.note import ParsedNote, parse_note
from vaultops.scan.requests import FIELDS
from vaultops.store.notes import NoteWriter
from vaultops.store.placement import Edit, at_note_end
from vaultops.vault import Vault

_ID = re.compile(r"^REQ-[A-Za-z0-9._-]+$")
_CYRILLIC_LATIN = "a b v g d e e zh z i y k l m n o p r s t u f h ts ch sh sch - y - e yu ya"
_CYRILLIC = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюя", _CYRILLIC_LATIN.split(" "), strict=True))
# Lines of the text that would change the structure of the inbox, and get a backslash in front.
_STRUCTURAL = re.compile(r"^( {0,3})(#{1,6}(?:[ \t]|$)|=+[ \t]*$|-+[ \t]*$)")
_KEYS = FIELDS | {"status", "locked-by", "outcome", "worktree", *fmt.SLOT_KEYS, *fmt.ANSWER_KEYS}


def slug(text: str, words: int = 4) -> str:
    out = []
    for word in re.findall(r"\w+", text.lower())[: words * 2]:
        ascii_word = "".join(_CYRILLIC.get(c, c) for c in word).replace("-", "")
        ascii_word = re.sub(r"[^a-z0-9]", "", ascii_word)
        if ascii_word:
            out.append(ascii_word)
        if len(out) == words:
            break
    return "-".join(out) or "request"


def _escape(line: str) -> str:
    m = _STRUCTURAL.match(line)
    if m:
        return m.group(1) + "\\" + line[len(m.group(1)) :]
    item = fmt.item_field(line)
    if item and item[0] in _KEYS:
        stripped = line.lstrip()
        return line[: len(line) - len(stripped)] + "\\" + stripped
    return line


def build_block(ident: str, text: str, type_: str | None) -> list[str]:
    body = [_escape(line) for line in text.strip("\n").replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    fields = [f"- type: {type_}"] if type_ else []
    return [f"## {ident}", *fields, "- ready: yes", *body]


def check_block(ident: str, block: list[str]) -> None:
    note = parse_note("submit", "\n".join(block).encode() + b"\n")
    found = note.requests
    if len(found) != 1 or found[0].id != ident or found[0].statuses or found[0].locks or found[0].answers:
        raise VaultopsError("the text would change the structure of the inbox; remove heading-like lines")
    if note.outline.closer_after(len(note.lines) - 1) is not None:
        raise VaultopsError(
            "the text opens a code fence or HTML block it never closes; close it and try again"
        )


def submit(
    vault: Vault, text: str, type_: str | None = None, ident: str | None = None, now: datetime | None = None
) -> str:
    """Append a request block to the inbox; returns its id (``ident``, else one made from the time and
    the text)."""
    if type_ and type_ not in TYPES:
        raise VaultopsError(f"unknown type {type_!r}; use one of: {', '.join(TYPES)}")
    if not text.strip():
        raise VaultopsError("the request has no text; say what you want done")
    writer = NoteWriter(vault)
    when = now or datetime.now().astimezone()
    if ident is not None and not _ID.match(ident):
        raise VaultopsError(
            f"{ident!r} is not a request id; use REQ- followed by letters, digits, '.', '_' or '-'"
        )
    chosen: dict[str, str] = {}

    def plan(note: ParsedNote) -> list[Edit]:
        taken = {r.id for r in note.requests}
        if ident is not None:
            if ident in taken:
                raise VaultopsError(f"{ident} is already in {vault.inbox_rel}; choose another id")
            new_id = ident
        else:
            base = f"REQ-{when.strftime('%Y-%m-%d-%H%M')}-{slug(text)}"
            new_id, n = base, 2
            while new_id in taken:
                new_id, n = f"{base}-{n}", n + 1
        block = build_block(new_id, text, type_)
        check_block(new_id, block)
        chosen["id"] = new_id
        return [at_note_end(note, block)]

    writer.apply(vault.inbox_rel, plan, create=True)
    return chosen["id"]


def submit_request(vault: Vault, text: str, type_: str | None = None, ident: str | None = None) -> Output:
    """``vaultops submit``: the new request's id, as a line."""
    new_id = submit(vault, text, type_, ident)
    return Output([new_id], {"id": new_id})
