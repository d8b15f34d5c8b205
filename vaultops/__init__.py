"""vaultops: an Obsidian vault synced with git, used as a safe job queue for AI agents.

The public API::

    import vaultops
    vault = vaultops.Vault.open("~/vault")
    report = vaultops.tick(vault)                      # one pass: scan, decide, run, record, commit
    vaultops.classify("Is nginx running?")             # the rules' decision for a text
    worker = vaultops.spawn(vault, "w1", ["claude"])   # a long-lived worker session

Each name is imported when first used (PEP 562), not with the package: ``vaultops hook`` runs before
every tool call of every agent and imports this package, and must not pay for the pipeline, the config
or pydantic.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # as typing's, which mypy reads the same way, without importing typing

__version__ = "0.1.0"

if TYPE_CHECKING:
    from vaultops.bus import Bus
    from vaultops.classifier.rules import classify
    from vaultops.engine.tick import tick
    from vaultops.vault import Vault
    from vaultops.workers.control import spawn

__all__ = ["Bus", "Vault", "__version__", "classify", "spawn", "tick"]

# name -> the module that defines it
_LAZY = {
    "Bus": "vaultops.bus",
    "Vault": "vaultops.vault",
    "classify": "vaultops.classifier.rules",
    "spawn": "vaultops.workers.control",
    "tick": "vaultops.engine.tick",
}


# mypy sees the names imported above, and calls any other name a typo; Python asks this for them
if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        where = _LAZY.get(name)
        if where is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        __import__(where)  # not importlib.import_module: importing importlib costs the hook's start-up
        value = getattr(sys.modules[where], name)
        globals()[name] = value  # asked once: later lookups find it without coming here
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
