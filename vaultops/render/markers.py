"""The daily-note lines that say a reminder, a digest or a peer's silence was sent, written and read back.
Pure.

They are the record that makes each one go out once, whichever machine is up: a machine sends a reminder
or a digest only after its line has reached the remote (a compare-and-swap push, as a claim does), and
a machine that finds the line there sends nothing.  The line names the machine that sent it, so that
one which crashed between the push and the send can still send its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from vaultops.lines import DOT, SEP
from vaultops.render.results import heading_link

_REMINDED = re.compile(
    r"\|(?P<id>(?:REQ|PLAN)-[A-Za-z0-9._-]+)\]\]" + re.escape(DOT)
    + r"reminded on (?P<host>[A-Za-z0-9._-]+)" + re.escape(DOT) + r"escalated at (?P<at>\S+)\s*$"
)  # fmt: skip
_PEER = re.compile(
    r"^- (?P<peer>[A-Za-z0-9._-]+) (?P<kind>quiet|back)" + re.escape(DOT) + r"last pass (?P<at>\S+)"
    + re.escape(DOT) + r"said on (?P<host>[A-Za-z0-9._-]+)\s*$"
)  # fmt: skip
_DIGEST = re.compile(
    r"^- digest sent on (?P<host>[A-Za-z0-9._-]+)" + re.escape(DOT) + r"(?P<day>\d{4}-\d\d-\d\d)"
)


@dataclass(frozen=True, slots=True)
class Reminded:
    request_id: str
    escalated_at: str  # the escalation's status line time: which escalation was reminded


@dataclass(frozen=True, slots=True)
class PeerSaid:
    peer: str
    kind: str  # "quiet" | "back"
    last_pass: str  # the peer's last pass as its note said when this was said: which silence it was


@dataclass(slots=True)
class Markers:
    reminded: dict[Reminded, str] = field(default_factory=dict)  # -> the host that sent it
    digests: dict[str, str] = field(default_factory=dict)  # day (YYYY-MM-DD) -> the host that sent it
    peers: dict[PeerSaid, str] = field(default_factory=dict)  # -> the host that said it


def reminder_lines(
    at: datetime, agent: str, host: str, file: str, heading: str, request_id: str, escalated_at: str
) -> list[str]:
    link = heading_link(file, heading, request_id)
    return [
        f"## {at.strftime('%H:%M')}{SEP}{agent}{SEP}reminder",
        f"- {link}{DOT}reminded on {host}{DOT}escalated at {escalated_at}",
    ]


def digest_lines(at: datetime, agent: str, host: str, summary: str) -> list[str]:
    return [
        f"## {at.strftime('%H:%M')}{SEP}{agent}{SEP}digest",
        f"- digest sent on {host}{DOT}{at.strftime('%Y-%m-%d')}{DOT}{summary}",
    ]


def peer_lines(at: datetime, agent: str, host: str, said: PeerSaid, sentence: str) -> list[str]:
    return [
        f"## {at.strftime('%H:%M')}{SEP}{agent}{SEP}{sentence}",
        f"- {said.peer} {said.kind}{DOT}last pass {said.last_pass}{DOT}said on {host}",
    ]


def read_markers(lines: Iterable[str]) -> Markers:
    markers = Markers()
    for line in lines:
        if "reminded on " in line and (m := _REMINDED.search(line)):
            markers.reminded.setdefault(Reminded(m["id"], m["at"]), m["host"])
        elif line.startswith("- digest sent on ") and (m := _DIGEST.match(line)):
            markers.digests.setdefault(m["day"], m["host"])
        elif " last pass " in line and (m := _PEER.match(line)):
            markers.peers.setdefault(PeerSaid(m["peer"], m["kind"], m["at"]), m["host"])
    return markers
