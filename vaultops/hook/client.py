"""The hook Claude Code runs before each tool call of a job vaultops started: a thin client of the job's
gate (``vaultops.hook.server``).

It runs as ``python -I -S client.py SOCKET``: no site packages, no vaultops imports, only ``socket``, so it
starts in about a tenth of the time the full hook takes.  It forwards the event and prints the server's
answer.  Whatever goes wrong (no server, a closed socket, a slow answer, a reply it cannot read), it
exits 2 with the reason on stderr: Claude Code's blocking exit, so a call is never let through unjudged.
Exit 1 would let the call through, so nothing here may end that way.
"""

import socket
import sys

DEADLINE = 5.0  # seconds for the whole exchange; Claude Code's own hook timeout (30 s) would let it through
PREFIX = "vaultops policy: denied because the gate of this job could not answer"


def ask(path: str, event: bytes) -> tuple[int, bytes, bytes]:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(DEADLINE)
    try:
        conn.connect(path)
        conn.sendall(event)
        conn.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        conn.close()
    head, newline, rest = b"".join(chunks).partition(b"\n")
    if not newline or head not in (b"0", b"2"):
        raise ValueError("the gate's reply cannot be read")
    stdout, _, stderr = rest.partition(b"\0")
    return int(head), stdout, stderr


def main(argv: list[str]) -> int:
    try:
        if len(argv) != 2:
            raise ValueError("usage: client.py SOCKET")
        code, stdout, stderr = ask(argv[1], sys.stdin.buffer.read())
        sys.stdout.buffer.write(stdout)
        sys.stdout.buffer.flush()
        sys.stderr.buffer.write(stderr)
        sys.stderr.buffer.flush()
        return code
    except BaseException as exc:  # anything at all: block the call
        try:  # noqa: SIM105  (contextlib would be one more import on every tool call)
            sys.stderr.write(f"{PREFIX} ({type(exc).__name__}: {exc}); the job may have ended\n")
        except BaseException:
            pass
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
