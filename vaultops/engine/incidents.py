"""A notifier that became failing, or works again, is said once: in the pass's report (the daemon's log)
and in the daily note, which is committed like any other line vaultops writes."""

from __future__ import annotations

from collections.abc import Sequence

from vaultops.base.errors import VaultopsError
from vaultops.engine.context import Context
from vaultops.engine.journal import DailyWriter
from vaultops.lines import DOT, SEP
from vaultops.notify.channels import Change


def tell_incidents(ctx: Context, daily: DailyWriter, changes: Sequence[Change]) -> None:
    if not changes:
        return
    now = ctx.clock()
    lines: list[str] = []
    for change in changes:
        ctx.warn(change.sentence())
        lines += ["", f"## {now.strftime('%H:%M')}{SEP}{ctx.vault.agent}{SEP}notify"]
        lines.append(f"- {change.sentence().removeprefix('notify: ')}{DOT}on {ctx.vault.host}")
    placed = daily.place(lines[1:], now) if ctx.config.record.daily_note else None
    if placed is None:
        return
    rel, plan = placed
    try:
        ctx.writer.apply(rel, plan, create=True, requests=False)
    except VaultopsError as exc:  # the log has said it; the note is a courtesy
        ctx.warn(f"daily note not written: {exc.message}")
        return
    except OSError as exc:
        ctx.warn(f"daily note {rel} not written ({exc.strerror or exc})")
        return
    ctx.report.written.append(rel)
    ctx.commit()
