"""Values kept between runs in a file of their own under ``.vaultops/state/kept/``: a cache, never the truth.

One file per note and purpose (``vaultops status`` keeps its rows per piece of a note here).  The file is
written whole to a temporary name and renamed, so a reader sees an old copy or a new one, never half of
one; two writers at once leave one of their copies, and either is right, because every value in it is
keyed by a hash of what it was computed from.  It holds marshal data (plain values only; loading it runs
nothing) after a hash of that data: a damaged, foreign or truncated file is read as empty.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from vaultops.base.confine import confine, make_dirs, write_bytes
from vaultops.base.errors import VaultopsError

# marshal's format belongs to the Python version
MAGIC = f"vaultops-kept-1 py{sys.version_info[0]}.{sys.version_info[1]}\n".encode()
_DIGEST = 16


def path_for(state_dir: Path, purpose: str, rel: str) -> Path:
    name = hashlib.blake2b(rel.encode("utf-8", "surrogateescape"), digest_size=10).hexdigest()
    return state_dir / "kept" / f"{purpose}-{name}.bin"


def load(path: Path) -> dict[str, Any]:
    """The kept map, or an empty one when there is none or it is not exactly what was written."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    if not data.startswith(MAGIC):
        return {}
    digest = data[len(MAGIC) : len(MAGIC) + _DIGEST]
    payload = memoryview(data)[len(MAGIC) + _DIGEST :]
    if hashlib.blake2b(payload, digest_size=_DIGEST).digest() != digest:
        return {}
    try:
        value = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


def save(path: Path, value: dict[str, Any]) -> None:
    """Replace the kept map; a state folder that cannot be written only means nothing is kept."""
    payload = marshal.dumps(value)
    data = MAGIC + hashlib.blake2b(payload, digest_size=_DIGEST).digest() + payload
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        make_dirs(path.parent)
        write_bytes(tmp, data, mode=0o600)
        os.replace(tmp, confine(path))
    except (OSError, ValueError, VaultopsError):  # VaultopsError: a symlink out of the vault
        with contextlib.suppress(OSError):
            tmp.unlink()
