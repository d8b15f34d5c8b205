"""What a command says, in one shape: the lines a person reads, the same as one JSON document, warnings
for stderr and the exit code.  Every ``vaultops.commands`` function returns one; the CLI prints it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Report:
    lines: list[str]  # stdout, one per line; none: nothing is printed
    doc: dict[str, Any] | None = None  # what --json prints instead (a command without --json has none)
    warnings: list[str] = field(default_factory=list)  # stderr, each after "warning: "
    exit_code: int = 0
