"""The daily-note entries of a pass, written in one batch to the note Obsidian's Daily notes plugin
would open today (created from its template when it does not exist yet)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from vaultops.base.errors import VaultopsError
from vaultops.base.visible import visible_line
from vaultops.model import Request
from vaultops.render import daily
from vaultops.render.results import DailyEntry, daily_lines
from vaultops.scan.note import ParsedNote
from vaultops.scan.text import split_lines
from vaultops.store.notes import NoteWriter, Plan
from vaultops.store.placement import Edit, at_note_end
from vaultops.vault import Vault

TEMPLATE_MAX = 1_000_000  # bytes: a template is a short note


class DailyWriter:
    def __init__(self, vault: Vault, writer: NoteWriter, warnings: list[str]) -> None:
        self.vault = vault
        self.writer = writer
        self.warnings = warnings
        self.entries: list[DailyEntry] = []

    def add(self, request: Request, at: datetime, summary: str) -> None:
        heading = f"{request.id} {request.title}".strip()
        title = request.title or (request.text or "").strip().split("\n")[0][:80] or request.id
        self.entries.append(DailyEntry(at, title, request.file, heading, request.id, summary))

    def place(self, lines: Sequence[str], now: datetime) -> tuple[str, Plan] | None:
        """Where ``lines`` go in the daily note of ``now``, and the plan that appends them (to a new note
        made from its template); None (and a warning) when the daily note cannot be found."""
        lines = [visible_line(line) for line in lines]  # a title from a file name may hold control bytes
        try:
            settings, rel = self._where(now)
        except daily.DailyNoteError as exc:
            self.warnings.append(f"daily note not written: {exc}")
            return None
        template: list[str] | None = None

        def plan(note: ParsedNote) -> list[Edit]:
            nonlocal template
            if not note.raw:
                if template is None:  # read once, only for a note that does not exist yet
                    template = self._template(settings, now, rel)
                return [Edit(-1, (*template, *([""] if template else []), *lines))]
            return [at_note_end(note, lines)]

        return rel, plan

    def path(self, when: datetime) -> str | None:
        """The daily note of ``when``'s day, or None when it cannot be found (or daily notes are off)."""
        if not self.vault.config.record.daily_note:
            return None
        try:
            return self._where(when)[1]
        except daily.DailyNoteError:
            return None

    def _where(self, when: datetime) -> tuple[daily.DailySettings, str]:
        """The daily-notes settings, and the note of ``when``'s day; DailyNoteError when it cannot be told."""
        settings = daily.load_settings(self.vault.root)
        return settings, daily.daily_note_path(settings, when)

    def flush(self, now: datetime) -> list[str]:
        """Write the entries; returns the paths written."""
        if not self.entries or not self.vault.config.record.daily_note:
            return []
        placed = self.place(daily_lines(self.entries, self.vault.agent), now)
        if placed is None:
            return []
        rel, plan = placed
        try:
            result = self.writer.apply(rel, plan, create=True, requests=False)
        except VaultopsError as exc:  # conflict markers, say: the vault is the record, the log says why
            self.warnings.append(f"daily note not written: {exc.message}")
            self.entries.clear()
            return []
        except OSError as exc:  # a folder that cannot be written: the pass still commits what it did
            self.warnings.append(
                f"daily note {rel} not written ({exc.strerror or exc}); make its folder writable"
            )
            self.entries.clear()
            return []
        self.entries.clear()
        return [rel] if result.changed else []

    def _template(self, settings: daily.DailySettings, now: datetime, rel: str) -> list[str]:
        """The template's lines for a new daily note; a template that cannot be used is a warning (the
        note is made without it), never a reason for the pass to stop before it commits."""
        if not settings.template:
            return []
        try:
            path = self.vault.resolve(settings.template)
            if not path.is_file():
                raise daily.DailyNoteError("it is missing or not a file")
            if path.stat().st_size > TEMPLATE_MAX:
                raise daily.DailyNoteError(f"it is over {TEMPLATE_MAX // 1000} kB")
            raw = path.read_bytes()
            text = raw.decode("utf-8")
            if "\0" in text:
                raise daily.DailyNoteError("it holds a NUL byte")
            title = rel.rsplit("/", 1)[-1].removesuffix(".md")
            lines = split_lines(daily.render_template(text, now, title, settings.format))
        except UnicodeDecodeError:
            return self._unused(settings, "it is not UTF-8 text; save it as UTF-8")
        except VaultopsError as exc:  # a symlink out of the vault
            return self._unused(settings, exc.message)
        except OSError as exc:
            why = exc.strerror or str(exc)
            return self._unused(settings, f"it cannot be read ({why}); make it a readable file")
        except daily.DailyNoteError as exc:
            return self._unused(settings, f"{exc}; fix it in the template note or in Settings → Daily notes")
        while lines and not lines[-1].strip():
            lines.pop()
        return lines

    def _unused(self, settings: daily.DailySettings, why: str) -> list[str]:
        self.warnings.append(
            f"daily-note template {settings.template} not used ({why}); created the daily note without it"
        )
        return []
