"""The commands of the CLI as library calls: one module per command, each function a ``Report``.

Each module is imported when first used (PEP 562), so that ``vaultops.cli`` can name them all at its top
and a command pays only for its own: ``vaultops hook`` never imports the pipeline, ``vaultops bus`` never
the config.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # as typing's, which mypy reads the same way, without importing typing

if TYPE_CHECKING:
    from vaultops.commands import (
        bus,
        classify,
        doctor,
        hook,
        link_chat,
        output,
        overview,
        scaffold,
        service,
        submit,
        tick,
        worker,
    )

__all__ = [
    "bus", "classify", "doctor", "hook", "link_chat", "output", "overview", "scaffold", "service", "submit",
    "tick", "worker",
]  # fmt: skip


# mypy sees the names imported above, and calls any other name a typo; Python asks this for them
if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        if name not in __all__:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        __import__(f"{__name__}.{name}")  # which also sets it on this package
        return sys.modules[f"{__name__}.{name}"]
