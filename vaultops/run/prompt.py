"""What an agent receives: the request's text, then where it came from and how to report back."""

from __future__ import annotations

from vaultops.run.jobs import Job

TEMPLATE = """{text}

---
This request is {id} in the note {file} of an Obsidian vault. Work only on what it asks.
When you are done, reply with a short plain-text report of what you found or did; it is written under
the request in the note."""


def build_prompt(job: Job) -> str:
    return TEMPLATE.format(text=job.text.strip(), id=job.request_id, file=job.file)
