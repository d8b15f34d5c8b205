"""The kill switch in tests: the person's halt properties typed into the dashboard note, as Obsidian's
properties view adds them (at the end of the frontmatter), on a clone's disk or through an edit function."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.support.daemon_helpers import save_in_place, state_of

DASHBOARD = "_System/vaultops.md"


def with_props(*props: str) -> Callable[[str], str]:
    """An edit of the dashboard's text: its halt lines replaced by ``props`` (a frontmatter made when there
    is none yet: the phone may write the note before any machine committed it)."""

    def edit(text: str) -> str:
        if not text.startswith("---\n"):
            text = "---\n---\n" + text
        lines = text.split("\n")
        end = lines.index("---", 1)
        kept = [ln for ln in lines[1:end] if not ln.lower().startswith("halt")]
        return "\n".join(["---", *kept, *props, *lines[end:]])

    return edit


def set_halt(vault: Path, *props: str) -> None:
    """The person saves ``props`` into the dashboard note on this machine (saved in place, not committed)."""
    path = vault / DASHBOARD
    save_in_place(path, with_props(*props)(path.read_text(encoding="utf-8")))


def state_is(vault: Path, rid: str, state: str) -> bool:
    return state_of(vault, rid) == state
