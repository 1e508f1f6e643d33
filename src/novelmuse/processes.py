"""Is the process that left something behind still alive? (recovery of killed runs and writers, issue 18 item 1)

A pid alone can be reused by an unrelated process after a crash, so a run records its pid together with that
process's start time (`process_started`); `process_alive` then tells the original process from a newcomer.
Every layer may import this module: it imports nothing of novelmuse.
"""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (signal 0; a permission error means it does)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process, or a number we cannot judge: never taken for dead
    return True


def process_started(pid: int) -> str | None:
    """The start time of process `pid` in clock ticks since boot (Linux: field 22 of /proc/<pid>/stat), or None
    where the system does not say (then only the pid is compared)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()  # the command name may hold spaces and parentheses
    return fields[19].decode("ascii", "replace") if len(fields) > 19 else None


def process_alive(pid: int, started: str | None) -> bool:
    """Whether the process recorded as (`pid`, `started`) is still running: the pid exists and, when both start
    times are known, it is the same process (not a later one that reuses the pid)."""
    if not pid_alive(pid):
        return False
    if started is None:
        return True
    now = process_started(pid)
    return now is None or now == started
