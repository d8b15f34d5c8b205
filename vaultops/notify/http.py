"""One JSON call over HTTP with the standard library, for the chat services vaultops speaks to itself
(Telegram's Bot API, Zulip's REST API): a timeout on every call, and every way it can fail as one line."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any


class HttpFailure(Exception):
    """The call gave no JSON answer; the message says why, unredacted (the caller redacts it).  ``body``:
    an error response's body, for what else it says (how long to wait, say)."""

    def __init__(self, message: str, body: bytes = b"") -> None:
        super().__init__(message)
        self.body = body


def fetch_json(request: urllib.request.Request, timeout: float, error_text: Callable[[bytes], str]) -> Any:
    """The decoded JSON body.  ``error_text``: what an error response's body says, "" when nothing."""
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()
        raise HttpFailure(f"HTTP {exc.code}: {error_text(body) or exc.reason}", body) from None
    except urllib.error.URLError as exc:
        raise HttpFailure(str(exc.reason)) from None
    # timeouts, resets, a body that is not JSON, a bad URL; and http.client's own refusals (InvalidURL: a
    # token pasted with a space or a line end), which are neither
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise HttpFailure(f"{type(exc).__name__}: {exc}") from None
