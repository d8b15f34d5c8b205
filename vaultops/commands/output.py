"""What a command says, in one shape: the lines a person reads, the same as one JSON document, warnings
for stderr and the exit code.  Every ``vaultops.commands`` function returns one; the CLI prints it.

A plain class, not a dataclass: every command's start-up imports this, and ``dataclasses`` costs more
than the rest of it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing's, which mypy reads the same way, without importing typing
if TYPE_CHECKING:
    from typing import Any


class Output:
    __slots__ = ("doc", "exit_code", "lines", "warnings")

    def __init__(
        self,
        lines: list[str],
        doc: dict[str, Any] | None = None,
        warnings: list[str] | None = None,
        exit_code: int = 0,
    ) -> None:
        self.lines = lines  # stdout, one per line; none: nothing is printed
        self.doc = doc  # what --json prints instead (a command without --json has none)
        self.warnings = warnings or []  # stderr, each after "warning: "
        self.exit_code = exit_code

    def __repr__(self) -> str:
        return f"Output({self.lines!r}, {self.doc!r}, {self.warnings!r}, {self.exit_code!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Output) and all(
            getattr(self, name) == getattr(other, name) for name in self.__slots__
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces
