"""Content hashes: sha256 of bytes, of text, and of canonical JSON."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def sha256_hex(data: bytes | str) -> str:
    """Hex sha256 of bytes, or of a string encoded as UTF-8."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys, no insignificant whitespace and raw UTF-8: the form that gets hashed."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def sha256_json(obj: Any) -> str:
    """Hex sha256 of the canonical JSON of `obj`."""
    return sha256_hex(canonical_json(obj))
