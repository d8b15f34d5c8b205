"""Which requests a pass looks at at all, from what the note says of them.  Pure.

A request is looked at when it is open or waiting, when the person answered it after its last status
(retry, cancel, or a decision on an escalation), when its last status is an input error vaultops wrote
(looked at again, and acted on once the person changes it), or when it was interrupted (a light check
runs again by itself).  Everything else is settled until the person writes under it.
"""

from __future__ import annotations

from vaultops.decide.answers import standing_answer
from vaultops.model import Request, State

FINISHED = frozenset({State.DONE, State.CANCELLED, State.DENIED})

# States a pass may start work from.
STARTABLE = frozenset({State.OPEN, State.WAITING})


def retry_asked(request: Request) -> bool:
    """The person wrote ``- retry: yes`` after the request's last status (an older answer never counts)."""
    last = request.statuses[-1].line if request.statuses else request.start
    return any(a.key == "retry" and a.value == "yes" and a.line > last for a in request.answers)


def cleanup_asked(request: Request) -> bool:
    """The person's standing answer is ``- cleanup: yes`` or ``force``."""
    answer = standing_answer(request)
    return answer is not None and answer.key == "cleanup"


def input_error_shaped(request: Request) -> bool:
    """An error that vaultops wrote without running anything: a run's error closes a result block,
    whose outcome line comes right before it."""
    last = request.statuses[-1].line
    before = request.statuses[-2].line if len(request.statuses) > 1 else request.start
    return not any(before < o.line < last for o in request.outcomes)


def may_start(request: Request) -> bool:
    """Whether a pass should look at a request at all: open or waiting; an input error (looked at again,
    and acted on if the answer changed); one the person answered (retry, cancel, or a decision on an
    escalation); or an interrupted one (a light check runs again by itself)."""
    if request.text is None:
        return False
    if request.forged:
        return True  # told once, by an escalation whose status line closes the forged answers
    if request.state in STARTABLE or request.state is State.INTERRUPTED:
        return True
    if request.state is State.ERROR:
        return retry_asked(request) or input_error_shaped(request) or standing_answer(request) is not None
    if request.state in FINISHED:  # done, cancelled or denied: only its worktree's cleanup is asked for
        return cleanup_asked(request)
    waits = request.state in (State.ESCALATED, State.REVIEW)
    return waits and (standing_answer(request) is not None or bool(request.unread))
