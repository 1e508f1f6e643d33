"""Sortable unique ids: time-ordered, so receipts and runs list in the order they happened."""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base32
_last_ms = 0
_counter = 0


def _b32(value: int, width: int) -> str:
    out = []
    for _ in range(width):
        out.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(out))


def new_id(prefix: str = "") -> str:
    """A ULID-like id: 48-bit millisecond time + a monotonic counter + randomness, optional prefix."""
    global _last_ms, _counter
    ms = time.time_ns() // 1_000_000
    if ms <= _last_ms:
        ms = _last_ms
        _counter += 1
    else:
        _last_ms, _counter = ms, 0
    rand = int.from_bytes(os.urandom(8), "big") & ((1 << 50) - 1)
    return prefix + _b32(ms, 10) + _b32(_counter, 4) + _b32(rand, 10)
