"""The public-domain corpus vendored for tests, examples and benchmarks (三国演义, 红楼梦), xz-compressed.

    from corpus import SANGUO, HONGLOU    # paths to the decompressed UTF-8 texts

Only the standard library is used, so scripts run by any Python >= 3.11 can import it. Each text is
decompressed once into ``corpus/.cache/`` (ignored by git), checked against its pinned sha256, and written
atomically, so two processes starting at once never read half a file. Nothing outside the checkout is read.
"""

from __future__ import annotations

import hashlib
import lzma
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"

#: file name → sha256 of the decompressed text (see corpus/README.md)
PINNED = {
    "sanguo_yanyi.txt": "6477cf2b52754329e4436dc4b4c9e8303e8164b138f9d54ba36a1737f103f36b",
    "hongloumeng.txt": "386508be6f86864e2eff62ec0ef18d0a60d079af8624668a139675e1f31cf5a8",
}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def text_path(name: str) -> Path:
    """The decompressed corpus file `name` (e.g. ``sanguo_yanyi.txt``), verified against its pinned sha256."""
    expected = PINNED[name]
    target = CACHE / name
    if target.is_file() and _sha256(target) == expected:
        return target
    data = lzma.decompress((HERE / f"{name}.xz").read_bytes())
    if hashlib.sha256(data).hexdigest() != expected:
        raise RuntimeError(f"corpus/{name}.xz does not decompress to its pinned sha256 {expected}")
    CACHE.mkdir(exist_ok=True)
    tmp = CACHE / f".{name}.{os.getpid()}.tmp"
    tmp.write_bytes(data)
    os.replace(tmp, target)
    return target


SANGUO = text_path("sanguo_yanyi.txt")
HONGLOU = text_path("hongloumeng.txt")
