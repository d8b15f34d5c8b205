"""Asking the triage profile for its second opinion on a request: once per version, cached.  I/O edge.

The profile runs as every Claude job does, behind its policy gate, here with no tool allowed; its time is
``[classify] triage_timeout``, never more than the profile's own.  Whatever goes wrong (it cannot start,
times out, fails, answers out of schema) is a ``SecondOpinion`` without an opinion and a phrase saying why:
the rules' verdict then stands, and nothing waits on triage longer than its timeout.
"""

from __future__ import annotations

import contextlib
import os
import time

from vaultops.base.redact import redact, secret_values
from vaultops.classifier.rules import TYPES
from vaultops.classifier.triage import (
    OutOfSchema,
    SecondOpinion,
    TriageOpinion,
    cache_key,
    parse_answer,
    prompt,
)
from vaultops.config import Config, agent_environ
from vaultops.hook.claude import GateSetupError, gated_command
from vaultops.hook.job import GateJob
from vaultops.model import Request
from vaultops.run.jobs import argv_for, workdir_of
from vaultops.run.outcome import read_attempt
from vaultops.run.process import run_process
from vaultops.store.state import StateDB
from vaultops.vault import Vault, inside_any

NO_BUDGET = "the daily budget is spent, so no model was asked"


def for_request(
    vault: Vault, state: StateDB, file: str, request: Request, *, budget_spent: bool
) -> SecondOpinion | None:
    """The second opinion on a request as the pass decides it; None when no triage is configured or the
    request's ``- type:`` is one the pass refuses anyway."""
    name = vault.config.classify.triage
    explicit = request.fields.get("type", "").strip().lower() or None
    if not name or (explicit is not None and explicit not in TYPES):
        return None
    if budget_spent and state.triage(cache_key(name, request.asked, explicit)) is None:
        return SecondOpinion(name, None, NO_BUDGET)
    return ask(vault, state, request.asked, explicit, file=file, request_id=request.id)


def ask(
    vault: Vault, state: StateDB, text: str, explicit_type: str | None, *, file: str | None = None,
    request_id: str | None = None,
) -> SecondOpinion | None:  # fmt: skip
    """The triage profile's opinion on ``text``: from state.db when this version was asked before."""
    name = vault.config.classify.triage
    if not name:
        return None
    key = cache_key(name, text, explicit_type)
    row = state.triage(key)
    if row is not None:
        return _cached(name, row)
    started = time.monotonic()
    opinion, failure, cost = _call(vault, vault.config, text, explicit_type, request_id or "classify")
    duration = time.monotonic() - started
    answer = opinion.model_dump_json() if opinion is not None else None
    state.set_triage(key, name, file, request_id, answer, failure, cost, duration)
    state.event("triage", file, request_id, profile=name, failure=failure, cost_usd=cost, duration=duration)
    return SecondOpinion(name, opinion, failure, cost)


def _cached(name: str, row: dict[str, object]) -> SecondOpinion:
    cost = row.get("cost_usd")
    spent = float(cost) if isinstance(cost, int | float) else None
    answer = row.get("answer")
    if not isinstance(answer, str):
        return SecondOpinion(name, None, str(row.get("failure") or "no answer"), spent, cached=True)
    try:
        return SecondOpinion(name, TriageOpinion.model_validate_json(answer), None, spent, cached=True)
    except ValueError:
        return SecondOpinion(name, None, "its cached answer no longer reads", spent, cached=True)


def _call(
    vault: Vault, config: Config, text: str, explicit_type: str | None, request_id: str
) -> tuple[TriageOpinion | None, str | None, float | None]:
    """(opinion, why there is none, cost) of one run of the triage profile."""
    name = config.classify.triage
    profile = config.profiles[name]
    workdir = workdir_of(vault, profile)
    if not inside_any(workdir, vault.allowed_roots) or not workdir.is_dir():
        return None, f"[profiles.{name}] workdir {workdir} is missing or outside [limits] allowed_roots", None
    values = {
        "prompt": prompt(text, explicit_type),
        "id": request_id,
        "type": explicit_type or "unknown",
        "title": "triage",
        "workdir": str(workdir),
        "vault": str(vault.root),
        "file": "",
    }
    env = agent_environ(os.environ) | dict(profile.env)
    where = {"VAULTOPS_VAULT": str(vault.root), "VAULTOPS_WORKDIR": str(workdir)}
    env |= {"VAULTOPS_REQUEST": request_id, "VAULTOPS_TOOLS": "", **where}
    timeout = min(config.classify.triage_timeout, profile.timeout)
    argv = argv_for(profile, values, None)
    guarded = GateJob(vault.root, str(workdir), request_id, "triage", ())  # no tool call is allowed
    secrets = secret_values({**os.environ, **profile.env})
    with contextlib.ExitStack() as stack:
        if profile.gated:
            try:
                argv = stack.enter_context(gated_command(guarded, argv))
            except GateSetupError as exc:
                return None, f"[profiles.{name}] {exc}", None
        proc = run_process(
            argv, cwd=workdir, env=env, timeout=timeout, inactivity_timeout=profile.inactivity_timeout,
            extra_secrets=secrets,
        )  # fmt: skip
    attempt = read_attempt(profile.output, name, proc, timeout)
    if not attempt.ok:
        return None, attempt.detail, attempt.cost_usd
    try:
        return parse_answer(attempt.text), None, attempt.cost_usd
    except OutOfSchema as exc:
        return None, redact(f"answered out of schema ({exc})", [*proc.secrets, *secrets]), attempt.cost_usd
