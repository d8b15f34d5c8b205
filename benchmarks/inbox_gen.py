"""A synthetic inbox of N requests, most of them finished, shaped like a real one."""

from __future__ import annotations

import random

TEXTS = [
    "Is the stripe CLI installed on the VPS? `which stripe`",
    "Why does the checkout page return 502 since this morning? Read-only diagnosis.",
    "Is nginx running?",
    "How big is ~/code/app/logs and what is in it?",
    "Проверь, установлен ли docker на сервере.",
    "Summarise the open pull requests in the app repo and list anything blocked.",
    "Rotate the stripe secret key and update the env file.",
]


def request_block(i: int, rng: random.Random, *, done: bool) -> str:
    day = 1 + i % 28
    rid = f"REQ-2026-05-{day:02d}-{i:05d}-check"
    lines = [
        f"## {rid} Check number {i}",
        f"- type: {rng.choice(['env-check', 'truth-audit', 'service-status'])}",
    ]
    if rng.random() < 0.2:
        lines.append("- from: cowork-hq")
    lines.append(rng.choice(TEXTS))
    if rng.random() < 0.05:
        lines += ["Some more context:", "```bash", "journalctl -u nginx --since today | tail", "```"]
    ts = f"2026-05-{day:02d}T08:31:02+10:00"
    if done and i % 4 == 3:
        lines.append(f"- status: escalated @ {ts} — blocked: key or token rotation; vaultops will not run it")
    elif done:
        lines += [
            f"- locked-by: hermes-coo @ {ts} (vps1, claim {i:06x})",
            f"- status: running @ {ts}",
            f"### Result — 2026-05-{day:02d} 08:31 — hermes-coo",
            "- outcome: done · env-check · light · routine · direct · 0.4 s",
            "~~~text",
            "/usr/local/bin/stripe",
            "~~~",
            f"- status: done @ {ts}",
        ]
    return "\n".join(lines) + "\n\n"


def inbox(n: int, *, open_every: int = 50, seed: int = 7) -> str:
    rng = random.Random(seed)
    head = "# COO Inbox\n\nRequests for the daemon.\n\n"
    return head + "".join(request_block(i, rng, done=(i % open_every != 0)) for i in range(n))
