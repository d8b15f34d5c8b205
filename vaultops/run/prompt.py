"""What an agent receives: the request's text, a context block, and how to report back.  Pure.

The context block has the shape of the worker-orchestration design (goal, then objective, acceptance
criteria, constraints, decisions, artifact refs, completed and pending work, errors of earlier attempts,
and what the last one did and why it failed), as JSON so that an agent can read it without guessing, and
so that text from a note or a failing check stays data.  A profile may replace the whole template with
``prompt_template``, using ``{text}``, ``{context}``, ``{report}``, ``{id}``, ``{title}``, ``{type}``
and ``{file}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

DEFAULT_TEMPLATE = """{text}

---
Context for this request ({id} in {file}), as JSON:

```json
{context}
```

{report}"""

REPORT = (
    "When you are done, reply with a short plain-text report. Start it with DONE, PARTIAL or BLOCKED, "
    "then say "
    "what you found or changed and anything the person must decide. Your reply is written under the request "
    "in their note; do not ask questions you could answer yourself, and do not do anything the request "
    "does not ask for."
)

# A plan note run by a long-lived worker: it reports with tagged lines, which the policy answers.
WORKER_REPORT = (
    "You work on this as a long-lived worker session; report with tagged lines, each on a line of its own. "
    "`[STATUS:<step>] <what you are doing>` as you go. Before an action that needs leave, ask "
    "`[REQUEST:<action>] key=value …` (create_worktree, run_build, run_tests, open_draft_pr, "
    "push_own_branch, comment_external, merge_pr) and wait for the line `[ANSWER:<action>] approve|deny|"
    "escalate — <reason>` on your input. `[ESCALATE:<reason>] <question>` when the person must decide; "
    "their answer comes the same way. When the work is finished, `[DONE:<label>] <one-line summary>`: "
    "that line completes the plan note."
)

_WIKILINK = re.compile(r"\[\[([^\]|#^]+)(?:[#^][^\]|]*)?(?:\|[^\]]*)?\]\]")
_CHECKBOX = re.compile(r"^\s*[-*+]\s+\[( |x|X)\]\s+(.+)$")
_LABELLED = re.compile(
    r"^\s*(?:[-*+]\s+)?(?P<label>acceptance|accept|done when|criteria|критери\w*|decision|decided|решени\w*)"
    r"\s*:\s*(?P<text>.+)$",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True, slots=True)
class PromptInput:
    request_id: str
    file: str
    title: str
    type: str
    text: str
    workdir: str
    tools: tuple[str, ...] | None = None
    files: tuple[str, ...] = ()
    timeout: float | None = None
    earlier: tuple[str, ...] = ()  # what earlier passes said of this request (e.g. "error: exit 2")
    errors: tuple[str, ...] = field(default=())  # failures of earlier attempts in this dispatch
    branch: str = ""  # a code job's own branch, checked out in its worktree (the workdir)
    # what the request's last attempt did and why it failed, as data (vaultops.run.streak.carried)
    last_attempt: tuple[tuple[str, str], ...] = ()


def wikilinks(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(1).strip() for m in _WIKILINK.finditer(text)))


def resolve_link(link: str, notes: Sequence[str]) -> str | None:
    """The vault path Obsidian would open for ``[[link]]``: an exact path, else the shortest path whose
    name matches (case-insensitive), trying ``.md`` when the link has no extension."""
    wanted = link.strip().lstrip("/")
    candidates = [wanted, f"{wanted}.md"]
    lowered = {n.lower(): n for n in notes}
    for c in candidates:
        if c.lower() in lowered:
            return lowered[c.lower()]
    names = [c.rsplit("/", 1)[-1].lower() for c in candidates]
    matches = [n for n in notes if n.rsplit("/", 1)[-1].lower() in names]
    return min(matches, key=lambda n: (n.count("/"), len(n))) if matches else None


def context(given: PromptInput, notes: Sequence[str]) -> dict[str, object]:
    criteria: list[str] = []
    decisions: list[str] = []
    done: list[str] = []
    pending: list[str] = []
    for line in given.text.splitlines():
        box = _CHECKBOX.match(line)
        if box:
            (done if box.group(1).lower() == "x" else pending).append(box.group(2).strip())
            continue
        labelled = _LABELLED.match(line)
        if labelled:
            label = labelled.group("label").lower()
            is_decision = label.startswith(("decision", "decided", "решени"))
            (decisions if is_decision else criteria).append(labelled.group("text").strip())
    first_line = next((ln.strip() for ln in given.text.splitlines() if ln.strip()), "")
    objective = given.title or first_line[:200]
    refs = []
    for link in wikilinks(given.text):
        path = resolve_link(link, notes)
        refs.append(path if path else f"{link} (no such note in the vault)")
    constraints: dict[str, object] = {
        "workdir": given.workdir,
        "request": given.request_id,
        "note": given.file,
    }
    if given.branch:
        constraints["branch"] = given.branch
    if given.tools is not None:
        constraints["tools"] = list(given.tools)
    if given.files:
        constraints["files"] = list(given.files)
    if given.timeout:
        constraints["timeout_seconds"] = round(given.timeout)
    return {
        "goal": objective,
        "context": {
            "objective": objective,
            "acceptance_criteria": criteria or pending or [f"the request is answered: {objective}"],
            "constraints": constraints,
            "decisions": decisions,
            "artifact_refs": refs,
            "completed_work": [*given.earlier, *done],
            "pending_work": pending or [objective],
            "errors": list(given.errors),
            **({"last_attempt": dict(given.last_attempt)} if given.last_attempt else {}),
        },
    }


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace the known ``{name}`` placeholders only; anything else in braces stays as it is."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def build_prompt(
    given: PromptInput, notes: Sequence[str] = (), template: str = "", report: str = REPORT
) -> str:
    values = {
        "text": given.text.strip(),
        "context": json.dumps(context(given, notes), ensure_ascii=False, indent=2),
        "report": report,
        "id": given.request_id,
        "title": given.title,
        "type": given.type,
        "file": given.file,
    }
    return fill(template or DEFAULT_TEMPLATE, values)
