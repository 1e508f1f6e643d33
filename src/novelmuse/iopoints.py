"""Named I/O points: every place novelmuse makes something durable or irreversible (issue 18 item 7).

Just before it writes a file's bytes, fsyncs, publishes a file by rename or link, removes one, commits the SQLite
store or hands a request to a model provider, the code calls `point(kind, target)`. A normal run has no hook: a
point costs one global read. The crash and fault harness (`tests/reliability/`) installs a hook to count the
points of a clean command, then to crash at each one in turn (an exception nothing catches, or kill -9 of a
subprocess) or to raise an I/O error there (ENOSPC, EIO, a failing fsync, rename or commit), and checks that
nothing was corrupted — SQLite's way of exercising every failure path on purpose rather than by luck.

Where the points are: `book._files.atomic_write_bytes` (every author file, revision, manifest, report and export),
the raw vault (`llm._vault`: leases, objects, their publication and removal), `store.transaction` (every
multi-row change) and the call policy (`send`). Every layer may import this module: it imports nothing of
novelmuse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final, Literal

PointKind = Literal["write", "fsync", "rename", "unlink", "commit", "send"]
KINDS: Final[tuple[PointKind, ...]] = ("write", "fsync", "rename", "unlink", "commit", "send")

#: Called with the kind and the target (a path, a database file, a request) of every point while installed.
Hook = Callable[[PointKind, str], None]

_hook: Hook | None = None


def point(kind: PointKind, target: object) -> None:
    """Mark that `kind` is about to happen to `target`; a hook installed by the harness may crash or fail here."""
    hook = _hook
    if hook is not None:
        hook(kind, str(target))


def active() -> bool:
    """Whether a hook is installed (a point may then compute a costlier target name)."""
    return _hook is not None


@contextmanager
def hooked(hook: Hook) -> Iterator[None]:
    """Install `hook` for the duration of the block (the harness and tests only; one hook at a time)."""
    global _hook
    previous, _hook = _hook, hook
    try:
        yield
    finally:
        _hook = previous
