"""The journal's entry format: encoding, decoding and the per-entry checks (pure; no file access here).

One entry is one line of canonical JSON (sorted keys, no spaces, UTF-8)::

    {"body":{…},"kind":"report","prev_sha256":"…","seq":7,"sha256":"…","signature":"…"}

- ``sha256`` is the sha256 of the entry's payload: the same line with only body, kind, prev_sha256 and seq
  (the line up to ``,"sha256"`` closed by ``}``), so it is checked on the bytes as written, never on a
  re-serialisation;
- ``signature`` is the Ed25519 signature (base64) of ``novelmuse-gate-journal-v1\\n`` + that sha256 (hex);
- ``prev_sha256`` is the sha256 of the whole previous line (its signature included; ``0`` × 64 for seq 1).

So every byte of every line is covered by the next line's hash, and the last line's signature covers the
whole journal: a flipped byte, a deleted, reordered or inserted line or a replaced signature anywhere breaks
a hash or a link, and only the key holder can sign a new last line. The issuer checks the head's hash and
signature before it appends onto it, so every entry's own signature was verified when its successor was
written; `muse gate verify --all-signatures` checks them all again.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..text import canonical_json
from ._keys import PublicKey, SigningKey

GENESIS: Final = "0" * 64
SIGNATURE_DOMAIN: Final = b"novelmuse-gate-journal-v1\n"
EntryKind = Literal["report", "receipt"]
_TAIL = re.compile(rb',"sha256":"([0-9a-f]{64})","signature":"([A-Za-z0-9+/]{86}==)"\}')
_TAIL_LEN = 180
# The payload is canonical JSON with sorted keys, so body comes first and kind, prev_sha256, seq close it: the
# chain walk reads them from the bytes (already authenticated by the sha256) without parsing the body.
_HEAD = b'{"body":'
_FIELDS = re.compile(rb',"kind":"(report|receipt)","prev_sha256":"([0-9a-f]{64})","seq":([1-9][0-9]{0,17})\}\Z')
_FIELDS_MAX = 128


@dataclass(frozen=True)
class Entry:
    """One decoded journal line and where it is in the file."""

    seq: int
    prev_sha256: str
    kind: EntryKind
    body_json: bytes  # the body's canonical JSON, as written (parsed only by those who need it)
    sha256: str
    signature: str
    line_sha256: str  # sha256 of the whole line: what the next entry's prev_sha256 names
    offset: int
    length: int  # bytes of the line, without its newline

    def body(self) -> dict[str, Any]:
        """The body, parsed (an object: the payload's JSON was checked when the entry was decoded)."""
        value = json.loads(self.body_json)
        assert isinstance(value, dict)
        return value

    def signed_by(self, key: PublicKey) -> bool:
        """True when `signature` is `key`'s signature of this entry's sha256."""
        try:
            raw = base64.b64decode(self.signature, validate=True)
        except (binascii.Error, ValueError):
            return False
        return key.verify(raw, SIGNATURE_DOMAIN + self.sha256.encode("ascii"))


@dataclass(frozen=True)
class LineProblem:
    """Why a line is not a well-formed, self-consistent entry (stable code, text without content)."""

    code: str
    what: str


def line_sha256(line: bytes) -> str:
    """sha256 of one journal line as written (without its newline)."""
    return hashlib.sha256(line).hexdigest()


def encode_entry(
    seq: int, prev_sha256: str, kind: EntryKind, body: dict[str, Any], key: SigningKey
) -> tuple[bytes, str]:
    """The signed line (without newline) for an entry appended after the line whose sha256 is `prev_sha256`,
    and the entry's sha256."""
    return encode_entry_json(seq, prev_sha256, kind, canonical_json(body).encode("utf-8"), key)


def encode_entry_json(
    seq: int, prev_sha256: str, kind: EntryKind, body_json: bytes, key: SigningKey
) -> tuple[bytes, str]:
    """`encode_entry` for a body already in canonical JSON (the issuer serialises a body once, however often
    it has to sign it against a moved head)."""
    payload = b'{"body":' + body_json + f',"kind":"{kind}","prev_sha256":"{prev_sha256}","seq":{seq}}}'.encode()
    digest = hashlib.sha256(payload).hexdigest()
    signature = base64.b64encode(key.sign(SIGNATURE_DOMAIN + digest.encode("ascii"))).decode("ascii")
    return payload[:-1] + f',"sha256":"{digest}","signature":"{signature}"}}'.encode("ascii"), digest


def decode_entry(line: bytes, offset: int) -> Entry | LineProblem:
    """Decode one line and check it against its own sha256 (not its signature, not its place in the chain).

    Only the fixed fields are read; the body is kept as bytes (`Entry.body` parses it). The issuer writes only
    canonical JSON, and every byte is authenticated by the chain, so a body that is not a JSON object can only
    come from a broken issuer — `muse gate verify` parses and validates every body anyway."""
    tail = _TAIL.fullmatch(line, max(len(line) - _TAIL_LEN, 0))  # fixed length: never scan the body
    if tail is None:
        return LineProblem("GATE_ENTRY_MALFORMED", "not a journal entry (no sha256 and signature at its end)")
    payload = line[: tail.start()] + b"}"
    digest = tail.group(1).decode("ascii")
    if hashlib.sha256(payload).hexdigest() != digest:
        return LineProblem("GATE_ENTRY_HASH", "the entry's content does not match its sha256 (changed after signing)")
    fields = _FIELDS.search(payload, max(len(payload) - _FIELDS_MAX, 0))
    if not payload.startswith(_HEAD) or fields is None or payload[len(_HEAD) : len(_HEAD) + 1] != b"{":
        return LineProblem("GATE_ENTRY_MALFORMED", "the entry does not have exactly body, kind, prev_sha256 and seq")
    kind: EntryKind = "report" if fields.group(1) == b"report" else "receipt"
    return Entry(
        seq=int(fields.group(3)),
        prev_sha256=fields.group(2).decode("ascii"),
        kind=kind,
        body_json=payload[len(_HEAD) : fields.start()],
        sha256=digest,
        signature=tail.group(2).decode("ascii"),
        line_sha256=line_sha256(line),
        offset=offset,
        length=len(line),
    )
