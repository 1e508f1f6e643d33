"""Scrubbing an API key out of what a provider hands back (bodies, output text, a CLI's stdout).

Every provider that holds a key scrubs it from the raw bytes and the output text before they leave the provider:
an error body, a confused model or a CLI may echo the key, and whatever leaves the provider may reach the vault,
the receipts' hashes, a report or the terminal. Parse first, scrub afterwards, so scrubbing never changes what was
parsed.
"""

from __future__ import annotations

REDACTED = b"[REDACTED]"

#: Shorter "keys" are placeholders local servers accept (Ollama's "ollama", vLLM's "EMPTY"), not secrets; scrubbing
#: them would corrupt ordinary text ("k" inside "tokens").
MIN_SECRET_LEN = 8


def scrub(raw: bytes, secret: str | None) -> bytes:
    """`raw` with every occurrence of the secret replaced (bodies may echo a key back)."""
    if not secret or len(secret) < MIN_SECRET_LEN:
        return raw
    return raw.replace(secret.encode("utf-8"), REDACTED)


def scrub_text(text: str | None, secret: str | None) -> str | None:
    """`text` with every occurrence of the secret replaced (a model may repeat a key it saw in an error)."""
    if text is None or not secret or len(secret) < MIN_SECRET_LEN:
        return text
    return text.replace(secret, REDACTED.decode())
