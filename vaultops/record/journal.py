"""The daily-note entries of a pass, written in one batch to the note Obsidian's Daily notes plugin
would open today (created from its template when it does not exist yet)."""

from __future__ import annotations

from datetime import datetime

from vaultops.errors import VaultopsError
from vaultops.model import Request
from vaultops.record import daily
from vaultops.record.placement import Edit, at_note_end
from vaultops.record.render import DailyEntry, daily_lines
from vaultops.scan.note import ParsedNote
from vaultops.scan.text import split_lines
from vaultops.store.notes import NoteWriter
from vaultops.vault import Vault


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

    def flush(self, now: datetime) -> list[str]:
        """Write the entries; returns the paths written."""
        if not self.entries or not self.vault.config.record.daily_note:
            return []
        try:
            settings = daily.load_settings(self.vault.root)
            rel = daily.daily_note_path(settings, now)
        except daily.DailyNoteError as exc:
            self.warnings.append(f"daily note not written: {exc}")
            return []
        lines = daily_lines(self.entries, self.vault.agent)
        template = self._template(settings, now, rel)

        def plan(note: ParsedNote) -> list[Edit]:
            if not note.raw:
                return [Edit(-1, (*template, *([""] if template else []), *lines))]
            return [at_note_end(note, lines)]

        try:
            result = self.writer.apply(rel, plan, create=True, requests=False)
        except VaultopsError as exc:  # conflict markers, say: the vault is the record, the log says why
            self.warnings.append(f"daily note not written: {exc.message}")
            self.entries.clear()
            return []
        self.entries.clear()
        return [rel] if result.changed else []

    def _template(self, settings: daily.DailySettings, now: datetime, rel: str) -> list[str]:
        if not settings.template:
            return []
        try:
            text = self.vault.resolve(settings.template).read_text(encoding="utf-8", errors="replace")
        except OSError:
            self.warnings.append(
                f"daily-note template {settings.template} not found; created the note without it"
            )
            return []
        title = rel.rsplit("/", 1)[-1].removesuffix(".md")
        lines = split_lines(daily.render_template(text, now, title, settings.format))
        while lines and not lines[-1].strip():
            lines.pop()
        return lines
