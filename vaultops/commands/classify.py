"""``vaultops classify``: the rules' opinion of a text, the model's when triage is configured, and the final
one, as a pass would decide it."""

from __future__ import annotations

from typing import Any

from vaultops.base.errors import VaultopsError
from vaultops.classifier.rules import Classification, classify
from vaultops.classifier.triage import SecondOpinion
from vaultops.commands.output import Output
from vaultops.config import Config
from vaultops.decide.route import decide_text
from vaultops.run import triage
from vaultops.store.state import StateDB
from vaultops.vault import Vault


def second_opinion(vault: Vault | None, text: str, explicit_type: str | None) -> SecondOpinion | None:
    """Triage's opinion (cached in the vault's state.db), when the vault configures it."""
    if vault is None or not vault.config.classify.triage:
        return None
    state = StateDB(vault.state_dir / "state.db")
    try:
        return triage.ask(vault, state, text, explicit_type)
    finally:
        state.close()


def _rules_json(c: Classification) -> dict[str, Any]:
    return {"type": c.type, "complexity": c.complexity, "safety_class": c.safety_class,
            "blocked_classes": list(c.blocked), "reasons": list(c.reasons)}  # fmt: skip


def _triage_json(config: Config, second: SecondOpinion | None) -> dict[str, Any]:
    if second is None:
        return {"profile": config.classify.triage or None, "asked": False}
    return {"profile": second.profile, "asked": True, "cached": second.cached, "failure": second.failure,
            "cost_usd": second.cost_usd}  # fmt: skip


def report(text: str, explicit_type: str | None, config: Config, vault: Vault | None) -> dict[str, Any]:
    """The final decision's keys first (the contract), then ``rules``, ``model`` and ``triage``."""
    second = second_opinion(vault, text, explicit_type)
    final = decide_text(text, explicit_type, config, second)
    model = second.opinion.model_dump() if second is not None and second.opinion is not None else None
    return {
        **final.as_json(),
        "blocked_classes": list(final.blocked),
        "rules": _rules_json(classify(text, explicit_type)),
        "model": model,
        "triage": _triage_json(config, second),
    }


def readable(doc: dict[str, Any]) -> list[str]:
    rules, model, asked = doc["rules"], doc["model"], doc["triage"]
    lines = [f"rules: {rules['safety_class']} · {rules['type']} · {rules['complexity']}"]
    lines += [f"  reason: {r}" for r in rules["reasons"]]
    if not asked["asked"]:
        lines.append("model: not asked ([classify] triage is not set)")
    elif model is None:
        lines.append(f"model: no answer from {asked['profile']} ({asked['failure']})")
    else:
        cached = ", cached" if asked["cached"] else ""
        lines.append(f"model ({asked['profile']}{cached}): {model['safety_class']} · {model['type']} · "
                     f"{model['complexity']}")  # fmt: skip
        if model["blocked_classes"]:
            lines.append(f"  blocked classes: {', '.join(model['blocked_classes'])}")
        lines += [f"  reason: {r}" for r in model["reasons"]]
    lines += [
        f"final: {doc['safety_class']} · {doc['type']} · {doc['complexity']}",
        f"route: {', '.join(doc['route']) or '(escalate)'}",
    ]
    lines += [f"reason: {r}" for r in doc["reasons"]]
    return lines


def explain(text: str, explicit_type: str | None, vault: str | None = None) -> Output:
    """``vaultops classify``: the decision for ``text`` in the vault ``vault`` names (its config and its
    triage); without a vault that can be read, by the default config and the rules alone."""
    found: Vault | None
    try:
        found = Vault.open(vault)
        config = found.config
    except VaultopsError:
        found, config = None, Config()
    doc = report(text, explicit_type, config, found)
    return Output(readable(doc), doc)
