"""Make a directory read-only for a test, even when the tests run as root (as CI does).

Root ignores permission bits, so for root the directory is made immutable (`chattr +i`, honoured by
the kernel for root too); otherwise its write bits are removed. Both are undone on exit.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Within the block nothing can be created, removed or renamed directly inside `path`."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], check=True, capture_output=True)
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True, capture_output=True)
    else:
        mode = path.stat().st_mode
        path.chmod(0o555)
        try:
            yield
        finally:
            path.chmod(mode)
