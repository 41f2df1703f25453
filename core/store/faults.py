"""Fault injection for the tests of what the store does when the machine lets it down (disk full, a kill between two
steps). ``fault(point)`` does nothing unless ``$STUDIO_FAULT`` names that point:

    STUDIO_FAULT=journal-append:enospc@3     the 3rd append of a journal in this process fails with ENOSPC
    STUDIO_FAULT=restore-swap:kill            the process kills itself (SIGKILL) when restore reaches that step
    STUDIO_FAULT_ONCE=/tmp/marker            a kill fires once across processes (a restarted worker lives on)
    STUDIO_FAULT=import-part-stored:pause@3  the process stops there: it creates ``$STUDIO_FAULT_GATE.reached`` and
                                              waits (up to PAUSE_LIMIT s) until ``$STUDIO_FAULT_GATE`` exists — a
                                              test does something at exactly that step, then lets it go on

A real full disk (a small tmpfs) is used where the machine allows mounting one; this is the fallback the issue allows.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
import time

PAUSE_LIMIT = 300.0

_COUNTS: dict[str, int] = {}
_GUARD = threading.Lock()


def fault(point: str) -> None:
    spec = os.environ.get("STUDIO_FAULT")
    if not spec:
        return
    for entry in spec.split(","):
        name, _, action = entry.partition(":")
        if name.strip() != point:
            continue
        action, _, nth = action.partition("@")
        with _GUARD:
            _COUNTS[point] = _COUNTS.get(point, 0) + 1
            count = _COUNTS[point]
        if nth and count < int(nth):
            continue
        if action == "kill":
            once = os.environ.get("STUDIO_FAULT_ONCE")
            if once:
                try:
                    fd = os.open(once, os.O_CREAT | os.O_EXCL | os.O_WRONLY)   # the first to get here dies
                except FileExistsError:
                    continue
                os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
        if action == "pause":
            _pause(os.environ.get("STUDIO_FAULT_GATE"))
        if action == "enospc":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _pause(gate: str | None) -> None:
    if not gate:
        return
    open(gate + ".reached", "a").close()
    deadline = time.monotonic() + PAUSE_LIMIT
    while not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.01)
