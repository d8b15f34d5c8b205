"""A model's triage answer, as the triage profile prints it."""

from __future__ import annotations

from typing import Any


def answer(safety: str = "routine", classes: tuple[str, ...] = (), type_: str = "truth-audit",
           reasons: tuple[str, ...] = ("looks fine",), **extra: Any) -> dict[str, Any]:  # fmt: skip
    return {"type": type_, "complexity": "heavy", "safety_class": safety, "blocked_classes": list(classes),
            "reasons": list(reasons), **extra}  # fmt: skip
