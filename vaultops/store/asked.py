"""What agents asked the person through the hook: ``.vaultops/state/escalations.jsonl``, one JSON line per
escalated call (written by ``vaultops hook``), and a ``granted`` line once the person's approval let exactly
that call through once, by a file under ``.vaultops/state/allow/`` that the hook removes as it uses it.
The file is append-only, so a hook and a pass never overwrite each other.

Records are redacted as they are written (tool inputs quote commands, and commands carry tokens); each
keeps the ``fingerprint`` of the raw call, so an approval still lets exactly that call through.

Only the standard library (and vaultops.base.redact, which uses nothing else) here: the hook imports this,
and it must answer in milliseconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from vaultops.base.confine import make_dirs, write_bytes, write_text
from vaultops.base.layout import STATE_DIR
from vaultops.base.redact import redact_fields

ESCALATIONS = "escalations.jsonl"
ALLOWANCES = "allow"  # <state>/allow/<request>-<fingerprint>: the person approved exactly this call, once
LASTING = ".job"  # ...with this suffix: for the rest of the request's job (``approve for this request``)


def fingerprint(tool_name: str, tool_input: Mapping[str, Any]) -> str:
    """Names exactly one call: the tool and its input, canonical JSON, hashed."""
    call = {"tool_name": tool_name, "tool_input": tool_input}
    canonical = json.dumps(call, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:32]


_KEPT = frozenset({"fingerprint", "granted", "tool_use_id", "session_id", "at"})  # ids, never secrets


def redacted(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record as it may be written: every text redacted, a secret-named field's value replaced."""
    return dict(redact_fields(dict(record), keep=_KEPT))


def record_escalation(vault: Path, record: Mapping[str, Any]) -> Path:
    """Append one JSON line, redacted; a single ``write`` on an O_APPEND file, so concurrent hooks never
    interleave.  A call's ``fingerprint`` must be computed (from the raw call) before."""
    path = vault / STATE_DIR / ESCALATIONS
    make_dirs(path.parent, vault)
    safe = redacted(record)
    line = (json.dumps(safe, ensure_ascii=False, default=str) + "\n").encode("utf-8", "surrogatepass")
    write_bytes(path, line, vault, append=True, mode=0o600)
    return path


def _owner(request: str) -> str:
    return hashlib.sha256(request.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _allowance(vault: Path, request: str, call: str, lasting: bool = False) -> Path:
    """An approval is the request's own: another job making the same call cannot use it up, or use it."""
    return vault / STATE_DIR / ALLOWANCES / (f"{_owner(request)}-{call}" + (LASTING if lasting else ""))


def grant_allowance(vault: Path, tool_name: str, tool_input: Mapping[str, Any], request: str = "") -> Path:
    """Let exactly this call of ``request``'s agent through once (the person approved it): the next
    identical call of that request consumes it.  "": a hook wired by hand, which names no request."""
    return allow_once(vault, fingerprint(tool_name, tool_input), tool_name, tool_input, request)


def allow_once(
    vault: Path,
    call: str,
    tool_name: str,
    tool_input: Mapping[str, Any],
    request: str = "",
    lasting: bool = False,
) -> Path:
    """Let the call of fingerprint ``call`` through once (``lasting``: until the request's job ends); the
    file says which call it is (redacted)."""
    path = _allowance(vault, request, call, lasting)
    make_dirs(path.parent, vault)
    shown = redacted({"tool_name": tool_name, "tool_input": dict(tool_input)})
    write_text(path, json.dumps(shown, ensure_ascii=False) + "\n", vault)
    return path


def consume_allowance(vault: Path, tool_name: str, tool_input: Mapping[str, Any], request: str = "") -> str:
    """"once" once per grant: the unlink that succeeds is the one use (two hooks at once cannot both win);
    "for this request" while a lasting grant of ``request`` holds (until ``end_of_job``); "" otherwise."""
    call = fingerprint(tool_name, tool_input)
    try:
        os.unlink(_allowance(vault, request, call))
    except OSError:
        lasting = bool(request) and _allowance(vault, request, call, lasting=True).is_file()
        return "for this request" if lasting else ""
    return "once"


def end_of_job(vault: Path, request: str) -> None:
    """The request's job is over: what was approved for the rest of it is not approved any more."""
    folder = vault / STATE_DIR / ALLOWANCES
    for path in folder.glob(f"{_owner(request)}-*{LASTING}") if folder.is_dir() else ():
        with contextlib.suppress(OSError):
            path.unlink()


def _records(vault: Path) -> Iterator[dict[str, Any]]:
    path = vault / STATE_DIR / ESCALATIONS
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    for line in raw.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash: the calls around it still count
        if isinstance(record, dict):
            yield record


def asked_since(vault: Path, request_id: str, session: str, since: datetime) -> list[dict[str, Any]]:
    """The calls the agent of ``session`` escalated for ``request_id`` during a run that began ``since``."""
    since = since if since.tzinfo else since.astimezone()
    records = list(_records(vault))
    done = _granted(records)
    found = []
    for r in records:
        if r.get("kind") != "escalate" or r.get("request") != request_id or r.get("session_id") != session:
            continue
        if _call_id(r) in done:
            continue  # asked before this run (within the same second) and already let through
        try:
            at = datetime.fromisoformat(str(r.get("at")))
        except ValueError:
            continue
        if (at if at.tzinfo else at.astimezone()) >= since.replace(microsecond=0):
            found.append(r)
    return found


def waiting(vault: Path, request_id: str) -> list[dict[str, Any]]:
    """The escalated calls of the request's latest session that no approval has let through yet."""
    records = list(_records(vault))
    done = _granted(records)
    asked = [
        r
        for r in records
        if r.get("kind") == "escalate" and r.get("request") == request_id and _call_id(r) not in done
    ]
    if not asked:
        return []
    session = asked[-1].get("session_id")
    return [r for r in asked if r.get("session_id") == session]


def grant(
    vault: Path, asked: Sequence[Mapping[str, Any]], *, allow: bool = True, lasting: bool = False
) -> None:
    """Let each of these calls through once (``lasting``: for the rest of the request's job), and say so
    in the file so that it is not granted again.  ``allow`` false: the person denied them; they are
    answered, and no later approval lets them through."""
    for r in asked:
        request = str(r.get("request") or "")
        if allow:
            tool, given = str(r.get("tool_name")), dict(r.get("tool_input") or {})
            # the record's input is redacted: its fingerprint, taken from the raw call, names the call
            call = str(r.get("fingerprint") or fingerprint(tool, given))
            allow_once(vault, call, tool, given, request, lasting=lasting and bool(request))
        granted = {"granted": _call_id(r), "session_id": r.get("session_id"), "request": r.get("request")}
        record_escalation(vault, granted)


def _call_id(record: Mapping[str, Any]) -> str:
    """One asked call: Claude Code's id for the tool use, else the session and the call's fingerprint."""
    return str(record.get("tool_use_id") or f"{record.get('session_id')}:{record.get('fingerprint')}")


def _granted(records: Sequence[Mapping[str, Any]]) -> set[str]:
    return {str(r["granted"]) for r in records if r.get("granted")}


def describe(asked: Sequence[Mapping[str, Any]]) -> str:
    """The calls as the person reads them: ``Bash `gh pr merge 12```."""
    parts = []
    for r in asked:
        tool = str(r.get("tool_name"))
        given = r.get("tool_input") or {}
        shown = given.get("command") or given.get("file_path") or json.dumps(given, ensure_ascii=False)
        line = " ".join(str(shown).split())
        # cut, it says so: a message showing a cut call has no Approve button (vaultops.notify.message)
        parts.append(f"{tool} `{line if len(line) <= 200 else line[:199] + '…'}`")
    return "; ".join(dict.fromkeys(parts))
