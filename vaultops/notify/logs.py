"""What the notifier needs of a log: the daemon's ``DaemonLog`` has this shape, and so can a test's."""

from __future__ import annotations

from typing import Any, Protocol


class Log(Protocol):
    def info(self, event: str, **fields: Any) -> None: ...

    def warn(self, message: str) -> None: ...
