"""Whether the process behind a journal, a claim or a running run is still alive — one home, importing nothing of
the store (the connection code, the schema's migration guard and the clean-up of leftovers all ask)."""

from __future__ import annotations

import os
import socket


def owner_tag() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (killed, not yet reaped) is dead for our purposes
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def owner_alive(owner: str | None) -> bool:
    if not owner or ":" not in owner:
        return False
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname():
        return True  # another machine: cannot tell, assume alive
    try:
        return pid_alive(int(pid))
    except ValueError:
        return False
